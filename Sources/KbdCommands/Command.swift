public import KbdCore
public import KbdKeymap
/// One entry of the command table.
public struct Command: Sendable, Hashable {
    public var id: String
    public var title: String
    /// The chord, or the chords of a sequence, in order.
    public var keys: [ChordKey]
    /// The keys as the config wrote them, for listings.
    public var keysText: String
    public var scope: String
    /// Fire again on key repeat.
    public var `repeat`: Bool
    /// Fire even while text input is active.
    public var priorityOverTextInput: Bool
    /// Program and arguments to execute (no shell); empty for none.
    public var run: [String]
    /// Where it was defined, for error messages.
    public var location: SourceLocation
    /// The group the HUD and the bar show it under (`"Edit"`); nil: the last group, "Other".
    public var group: String?
    /// The title the HUD shows (UIKeyCommand's `discoverabilityTitle`); nil: `title`.
    public var discoverabilityTitle: String?
    /// What firing it does: run it (the default) or toggle the discoverability HUD.
    public var action: Action
    /// A chord the active layout cannot type as written (it needs AltGr or is missing) also
    /// fires from the key at the same position on the US layout (UIKeyCommand's
    /// `allowsAutomaticLocalization`); false keeps it literal.
    public var localize: Bool = true
    /// While a right-to-left layout is active, its left/right pair swaps: `Ctrl+bracketleft`
    /// fires from the key at the US `]` (`allowsAutomaticMirroring`).
    public var mirror: Bool = false
    /// The keyboards it is limited to (empty: every keyboard); there it wins over a command
    /// on the same chord for every keyboard.
    public var devices: [DevicePattern] = []

    /// What a command does when it fires.
    public enum Action: String, Sendable, Hashable, CaseIterable {
        /// The usual: the command event, and `run` (or the agent that registered it) runs it.
        case run
        /// Toggle the discoverability HUD (trigger "chord"); nothing runs.
        case hud
    }

    public init(
        id: String, title: String, keys: [ChordKey], keysText: String? = nil, scope: String = CommandTable.globalScope,
        repeat: Bool = false, priorityOverTextInput: Bool = false, run: [String] = [],
        location: SourceLocation = SourceLocation(path: "<memory>", line: 0),
        group: String? = nil, discoverabilityTitle: String? = nil, action: Action = .run,
        localize: Bool = true, mirror: Bool = false, devices: [DevicePattern] = []
    ) {
        self.id = id
        self.title = title
        self.keys = keys
        self.keysText = keysText ?? keys.map(\.description).joined(separator: " ")
        self.scope = scope
        self.repeat = `repeat`
        self.priorityOverTextInput = priorityOverTextInput
        self.run = run
        self.location = location
        self.group = group
        self.discoverabilityTitle = discoverabilityTitle
        self.action = action
        self.localize = localize
        self.mirror = mirror
        self.devices = devices
    }

    /// The chord string in canonical form (`Ctrl+X Ctrl+S`).
    public var chordText: String { keys.map(\.description).joined(separator: " ") }
    public var isSequence: Bool { keys.count > 1 }
    /// The title the HUD shows: the discoverability title, else the title.
    public var shownTitle: String { discoverabilityTitle ?? title }
}
