public import KbdCore
/// A key event after xkbcommon: what the key is, what it produces, and the two
/// chord forms the router matches on. Values are read before the state update,
/// as xkbcommon requires.
public struct KeyEvent: Sendable {
    public var time: EventTime
    public var device: DeviceID
    /// The evdev code (`KEY_A` is 30).
    public var code: UInt16
    public var state: KeyState
    /// The keysym the key produces in the current state.
    public var keysym: Keysym
    /// Active modifiers (locks included) when the key went down or up.
    public var modifiers: ModifierSet
    /// The active (effective) layout index.
    public var layout: Int
    /// Whether the key types printable text in this state (no control characters).
    public var producesText: Bool
    /// `xkb_state_key_get_utf8` for the key, when the mapper was asked for text.
    public var utf8: String?
    /// Text completed by a compose or dead-key sequence on this key.
    public var composedText: String?
    /// The key's level-one keysym (Latin fallback applied) with every chord modifier.
    public var chord: ChordKey
    /// The produced keysym with consumed modifiers removed (Shift kept for letters), when it differs.
    public var alternateChord: ChordKey?
    /// The chord of the key at the same position on the US layout, when that key's keysym
    /// cannot be typed on the active layout with no modifier or Shift alone (`localize`:
    /// Ctrl and the key that types ü on `de` give `Ctrl+bracketleft`); nil otherwise.
    public var localizedChord: ChordKey?
    /// Whether the active layout is written right to left (`mirror`).
    public var rightToLeft: Bool = false
    /// A modifier or group-switch key (Shift, Control, ISO_Level3_Shift, ISO_Next_Group).
    public var isModifierKey: Bool
    /// Made up by the pipeline (release on detach or after a resync), not read from the device.
    public var synthetic: Bool
    /// Sticky keys (when on): the modifiers latched and locked after this event.
    public var stickyLatched: ModifierSet = []
    public var stickyLocked: ModifierSet = []

    public init(
        time: EventTime, device: DeviceID, code: UInt16, state: KeyState, keysym: Keysym, modifiers: ModifierSet,
        layout: Int, producesText: Bool, utf8: String? = nil, composedText: String? = nil, chord: ChordKey,
        alternateChord: ChordKey? = nil, isModifierKey: Bool = false, synthetic: Bool = false
    ) {
        self.time = time
        self.device = device
        self.code = code
        self.state = state
        self.keysym = keysym
        self.modifiers = modifiers
        self.layout = layout
        self.producesText = producesText
        self.utf8 = utf8
        self.composedText = composedText
        self.chord = chord
        self.alternateChord = alternateChord
        self.isModifierKey = isModifierKey
        self.synthetic = synthetic
    }

    /// The evdev name of the key, e.g. `KEY_A`.
    public var codeName: String { EventCodeNames.keyName(code) }
}
