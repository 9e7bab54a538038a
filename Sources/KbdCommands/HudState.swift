public import KbdCore
public import KbdKeymap

/// `[hud]`: when the discoverability HUD shows (a contract: README "The HUD and the bar").
public struct HudSettings: Sendable, Equatable {
    public static let defaultDelayMilliseconds = 700
    /// Half the default sequence timeout: the continuations show while the prefix still waits.
    public static let defaultSequenceDelayMilliseconds = 500

    /// `enabled`: false, no `hud` event at all (the bar's toolbar still works).
    public var enabled: Bool
    /// `hold`: the modifier held alone to show it.
    public var hold: HoldModifier
    /// `delay_ms`: how long the hold modifier is held alone before it shows.
    public var delayMilliseconds: Int
    /// `sequence_delay_ms`: how long a sequence prefix waits before its continuations show.
    public var sequenceDelayMilliseconds: Int
    /// `extend_sequence_timeout`: while a drawn HUD shows a prefix's continuations, the
    /// sequence waits another `sequence_timeout_ms` from that moment (time to read them).
    /// Off by default: the user's `sequence_timeout_ms` holds whatever the HUD does.
    public var extendSequenceTimeout: Bool

    public init(enabled: Bool = true, hold: HoldModifier = .super, delayMilliseconds: Int = defaultDelayMilliseconds,
                sequenceDelayMilliseconds: Int = defaultSequenceDelayMilliseconds, extendSequenceTimeout: Bool = false) {
        self.extendSequenceTimeout = extendSequenceTimeout
        self.enabled = enabled
        self.hold = hold
        self.delayMilliseconds = delayMilliseconds
        self.sequenceDelayMilliseconds = sequenceDelayMilliseconds
    }

    /// A modifier that can be held to show the HUD, by the name the config uses.
    public enum HoldModifier: String, Sendable, Equatable, CaseIterable {
        case ctrl = "Ctrl", alt = "Alt", shift = "Shift", `super` = "Super", altGr = "AltGr"

        /// The left key's keysym (a tap command's chord, for listings and checks).
        public var keysym: Keysym {
            switch self {
            case .ctrl: return Keysym(0xFFE3)
            case .alt: return Keysym(0xFFE9)
            case .shift: return Keysym(0xFFE1)
            case .super: return Keysym(0xFFEB)
            case .altGr: return Keysym(0xFE03)
            }
        }

        /// Whether a key producing `keysym` is this modifier (left or right).
        public func matches(_ keysym: Keysym) -> Bool {
            switch (self, keysym.rawValue) {
            case (.shift, 0xFFE1), (.shift, 0xFFE2),  // Shift_L, Shift_R
                (.ctrl, 0xFFE3), (.ctrl, 0xFFE4),  // Control_L, Control_R
                (.alt, 0xFFE9), (.alt, 0xFFEA), (.alt, 0xFFE7), (.alt, 0xFFE8),  // Alt_L/R, Meta_L/R
                (.super, 0xFFEB), (.super, 0xFFEC),  // Super_L, Super_R
                (.altGr, 0xFE03), (.altGr, 0xFF7E):  // ISO_Level3_Shift, Mode_switch
                return true
            default:
                return false
            }
        }
    }
}

/// The HUD's state machine (ARCHITECTURE: KbdCommands holds the HUD state): key events and
/// the router's sequence signals in, show and hide out, plus its next deadline. Like the
/// router it reads no clock: time comes from the events, so replay is deterministic and the
/// daemon arms a timer only while `nextDeadline` is set.
///
/// - hold: the hold modifier pressed with nothing else held, and held alone until
///   `delay_ms` passed, shows (trigger hold); its release or any other key press hides. A tap
///   (released before the delay) or another key with it shows nothing.
/// - chord: `toggle` (a command with `action = "hud"` fired) shows (trigger chord), or hides
///   what is shown.
/// - sequence: a prefix still pending after `sequence_delay_ms` shows its continuations
///   (trigger sequence) until the sequence completes, is cancelled or times out.
public struct HudState: Sendable {
    /// A pending sequence prefix: its chords, the scope of the trie it is in, and the table
    /// (`owner` nil: the system table; else the client that registered it).
    public struct Pending: Sendable, Equatable {
        public var owner: Int?
        public var keys: [ChordKey]
        public var scope: String
        public init(owner: Int?, keys: [ChordKey], scope: String) {
            self.owner = owner
            self.keys = keys
            self.scope = scope
        }
        /// `Ctrl+X` (chords joined by spaces).
        public var text: String { keys.map(\.description).joined(separator: " ") }
    }

    public enum Output: Sendable, Equatable {
        case show(time: EventTime, trigger: HudTrigger, pending: Pending?)
        case hide(time: EventTime, trigger: HudTrigger)
    }

    public let settings: HudSettings
    /// The hold modifier held alone: the same tracker as a tap command's (`LoneModifier`),
    /// its deadline the HUD's delay (nil once it shows).
    private var hold: LoneModifier? { didSet { updateDeadline() } }
    private var sequence: (pending: Pending, deadline: EventTime)? { didSet { updateDeadline() } }
    /// What is shown now (nil: hidden).
    public private(set) var shown: (trigger: HudTrigger, pending: Pending?)?

    public init(settings: HudSettings) {
        self.settings = settings
    }

    /// When a hold or a pending prefix shows the HUD, if nothing else happens first (kept,
    /// not computed: the pipeline reads it for every event).
    public private(set) var nextDeadline: EventTime?

    private mutating func updateDeadline() {
        switch (hold?.deadline, sequence?.deadline) {
        case (let a?, let b?): nextDeadline = min(a, b)
        case (let a?, nil): nextDeadline = a
        case (nil, let b?): nextDeadline = b
        case (nil, nil): nextDeadline = nil
        }
    }

    /// Whether a key that is not a modifier, pressed now, changes nothing: nothing is shown
    /// and no hold is armed. The pipeline asks this first, so typing costs one test.
    @inline(__always)
    public var isQuiet: Bool { hold == nil && shown == nil }

    /// Shows what is due at or before `time`.
    public mutating func expire(at time: EventTime, into out: inout [Output]) {
        if let h = hold, let deadline = h.deadline, time >= deadline {
            hold!.deadline = nil
            show(.hold, pending: nil, at: deadline, into: &out)
        }
        if let s = sequence, time >= s.deadline {
            sequence = nil
            show(.sequence, pending: s.pending, at: s.deadline, into: &out)
        }
    }

    /// One key event. `othersHeld`: other keys of the device are down (the pipeline asks
    /// the mapper only when the hold modifier is pressed).
    public mutating func handle(_ key: KeyEvent, othersHeld: @autoclosure () -> Bool, into out: inout [Output]) {
        guard settings.enabled else { return }
        expire(at: key.time, into: &out)
        if let h = hold, h.isOwnKey(key) {
            switch key.state {
            case .repeat: return
            case .release:
                hold = nil
                if shown?.trigger == .hold { hide(.hold, at: key.time, into: &out) }
                return
            case .press: break  // pressed again without a release (a resync): start over below
            }
        }
        guard key.state == .press else { return }
        // Any other key press ends a hold: armed, it never shows; shown, it hides.
        if hold != nil {
            hold = nil
            if shown?.trigger == .hold { hide(.hold, at: key.time, into: &out) }
        }
        if key.isModifierKey, settings.hold.matches(key.keysym) {
            hold = LoneModifier.begin(key, modifier: settings.hold, othersHeld: othersHeld(),
                                      deadline: key.time.adding(milliseconds: settings.delayMilliseconds))
        }
    }

    /// A command with `action = "hud"` fired: hide what is shown, else show (trigger chord).
    public mutating func toggle(at time: EventTime, into out: inout [Output]) {
        guard settings.enabled else { return }
        if let s = shown {
            hide(s.trigger, at: time, into: &out)
        } else {
            show(.chord, pending: nil, at: time, into: &out)
        }
    }

    /// A sequence prefix is pending (its first chord or a longer one). Shown for a shorter
    /// prefix, the HUD shows the new one's continuations at once; else after the delay.
    public mutating func sequencePending(_ pending: Pending, at time: EventTime, into out: inout [Output]) {
        guard settings.enabled else { return }
        if shown?.trigger == .sequence {
            sequence = nil
            show(.sequence, pending: pending, at: time, into: &out)
        } else {
            sequence = (pending, time.adding(milliseconds: settings.sequenceDelayMilliseconds))
        }
    }

    /// The pending sequence completed, was cancelled or timed out.
    public mutating func sequenceEnded(at time: EventTime, into out: inout [Output]) {
        sequence = nil
        if shown?.trigger == .sequence { hide(.sequence, at: time, into: &out) }
    }

    /// Whether a prefix is waiting for its delay (or shown).
    public var sequenceActive: Bool { sequence != nil || shown?.trigger == .sequence }

    /// The table of the prefix waiting or shown (nil: the system table's, or none).
    public var pendingOwner: Int? { sequence?.pending.owner ?? shown?.pending?.owner }

    /// `device` went away: a hold on it ends.
    public mutating func deviceDetached(_ device: DeviceID, at time: EventTime, into out: inout [Output]) {
        guard let h = hold, h.device == device else { return }
        hold = nil
        if shown?.trigger == .hold { hide(.hold, at: time, into: &out) }
    }

    private mutating func show(_ trigger: HudTrigger, pending: Pending?, at time: EventTime, into out: inout [Output]) {
        shown = (trigger, pending)
        out.append(.show(time: time, trigger: trigger, pending: pending))
    }

    private mutating func hide(_ trigger: HudTrigger, at time: EventTime, into out: inout [Output]) {
        shown = nil
        out.append(.hide(time: time, trigger: trigger))
    }
}
