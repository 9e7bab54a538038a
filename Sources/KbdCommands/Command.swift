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
    /// Key phases (issue 36; `KeyPhases`): set after `init`, all off by default, and a
    /// command with none of them fires at the press exactly as before.
    /// `on = "release"`: fires when the chord's key is released, not at the press.
    public var onRelease = false
    /// `hold_ms`: fires once when the chord has been held this long (phase `hold`).
    public var holdMilliseconds: Int?
    /// A modifier alone (`keys = "Super"`): fires at its tap (phase `tap`).
    public var tapModifier: HudSettings.HoldModifier?
    /// `tap_ms`: a tap is a release sooner than this after the press.
    public var tapMilliseconds = Command.defaultTapMilliseconds
    /// `cooldown_ms` (with `repeat`): the kernel's repeats fire at most once per this long.
    public var cooldownMilliseconds: Int?
    /// `run_on_release`: a second program at the release; set (even empty), the command
    /// also fires with phase `release` when its key is released after it fired.
    public var runOnRelease: [String]?

    public static let defaultTapMilliseconds = 400

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

    /// The chord string in canonical form (`Ctrl+X Ctrl+S`; a modifier alone: `Super`).
    public var chordText: String { tapModifier?.rawValue ?? keys.map(\.description).joined(separator: " ") }

    /// Whether it uses a key phase (`on = "release"`, `hold_ms`, a modifier alone,
    /// `cooldown_ms`, `run_on_release`): its `command` events then all carry `phase`.
    public var hasPhases: Bool {
        onRelease || holdMilliseconds != nil || tapModifier != nil || cooldownMilliseconds != nil || runOnRelease != nil
    }

    /// The program to run when it fires in `phase`: `run_on_release` at the release of a
    /// command that has it, else `run`.
    public func argv(for phase: KeyPhase) -> [String] {
        if phase == .release, let second = runOnRelease { return second }
        return run
    }
    public var isSequence: Bool { keys.count > 1 }
    /// The title the HUD shows: the discoverability title, else the title.
    public var shownTitle: String { discoverabilityTitle ?? title }
}
