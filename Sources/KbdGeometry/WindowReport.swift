public import KbdJSON
/// What the geometry model computes for one window.
public struct WindowReport: Sendable, Hashable {
    /// The window's id.
    public var id: String
    /// The keyboard layout guide in window coordinates (origin at the
    /// window's top-left corner, x from the left even in right-to-left windows).
    public var guide: Rect
    /// The space an app must leave free at the window's bottom: the window's
    /// height minus the guide's top, i.e. the distance from the guide's top to
    /// the window's bottom.
    public var bottomOffset: Double
    /// The edges the guide is near.
    public var near: EdgeSet
    /// The edges the guide is away from: every edge not in ``near``.
    public var away: EdgeSet { near.complement }
    /// Whether the keyboard counts as dismissed for this window: hidden, or
    /// not over the window at all.
    public var dismissed: Bool
    /// The region above the guide that belongs to the dismiss gesture, in
    /// window coordinates; nil when the window has no dismiss padding or the
    /// guide does not track a keyboard.
    public var dismissRegion: Rect?
    /// Names of the active tracking rules, in registration order.
    public var activeRules: [String]
    /// Rules that became active with the last change (all active ones for
    /// the first report).
    public var activated: [String]
    /// Rules that stopped being active with the last change.
    public var deactivated: [String]

    /// A report with the given values.
    public init(
        id: String,
        guide: Rect,
        bottomOffset: Double,
        near: EdgeSet,
        dismissed: Bool,
        dismissRegion: Rect?,
        activeRules: [String],
        activated: [String],
        deactivated: [String]
    ) {
        self.id = id
        self.guide = guide
        self.bottomOffset = bottomOffset
        self.near = near
        self.dismissed = dismissed
        self.dismissRegion = dismissRegion
        self.activeRules = activeRules
        self.activated = activated
        self.deactivated = deactivated
    }

    /// The report as JSON, keys in the contract's order: id, guide,
    /// bottom_offset, near, away, dismissed, dismiss_region, active_rules,
    /// activated, deactivated.
    public var jsonValue: JSONValue {
        [
            "id": .string(id),
            "guide": guide.jsonValue,
            "bottom_offset": .number(bottomOffset),
            "near": near.jsonValue,
            "away": away.jsonValue,
            "dismissed": .bool(dismissed),
            "dismiss_region": dismissRegion.jsonValue,
            "active_rules": .array(activeRules.map { .string($0) }),
            "activated": .array(activated.map { .string($0) }),
            "deactivated": .array(deactivated.map { .string($0) }),
        ]
    }

    /// Whether the two reports agree on everything but ``activated`` and
    /// ``deactivated``.
    public func hasSameGeometry(as other: WindowReport) -> Bool {
        id == other.id && guide == other.guide && bottomOffset == other.bottomOffset
            && near == other.near && dismissed == other.dismissed
            && dismissRegion == other.dismissRegion && activeRules == other.activeRules
    }
}
