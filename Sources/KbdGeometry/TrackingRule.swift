/// A named rule a client registers with a window's guide, as
/// `UITrackingLayoutGuide.setConstraints(_:activeWhenNearEdge:)` and
/// `activeWhenAwayFrom:` do: it is active when the keyboard is near **all**
/// edges in ``near`` and away from **all** edges in ``away``.
public struct TrackingRule: Sendable, Hashable {
    /// The rule's name, unique within its window.
    public var name: String
    /// Edges the keyboard must be near.
    public var near: EdgeSet
    /// Edges the keyboard must be away from.
    public var away: EdgeSet

    /// A rule active when near all of `near` and away from all of `away`.
    public init(name: String, near: EdgeSet = [], away: EdgeSet = []) {
        self.name = name
        self.near = near
        self.away = away
    }

    /// Whether the rule is active for a keyboard near `nearEdges` (and so
    /// away from all other edges).
    public func isActive(near nearEdges: EdgeSet) -> Bool {
        nearEdges.isSuperset(of: near) && nearEdges.isDisjoint(with: away)
    }
}
