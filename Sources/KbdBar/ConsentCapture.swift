public import KbdControl
import KbdKeymap

/// The consent dialog's state: the chord proposed, and "Use another chord…" capturing the next
/// one pressed. Pure: the toolkit feeds it the buttons and the key events (GDK's keyval at the
/// key's first level, and the modifier state before the key) and draws what it says.
///
/// While capturing, the next chord becomes the proposed one: a non-modifier key with the
/// modifiers held, or a modifier tapped alone (pressed with nothing else held, released with no
/// key between). Escape alone cancels the capture and keeps the chord proposed before; outside
/// a capture it refuses, as a dialog's Escape closes it.
public struct ConsentCapture: Sendable, Equatable {
    public private(set) var proposed: ConsentChord?
    public private(set) var capturing = false
    /// The modifier pressed alone while capturing: its release, with no key between, is its tap.
    private var tapping: ModifierSet?

    public init(proposed: ConsentChord?) { self.proposed = proposed }

    /// What a key event did, for the toolkit.
    public enum Effect: Sendable, Equatable {
        /// Not capturing: the key is the toolkit's (Tab, Return and Space on the buttons).
        case passed
        /// Taken while capturing, nothing to redraw yet.
        case held
        /// The capture ended with a new chord (`proposed`).
        case captured
        /// Escape: the capture ended, the chord proposed before stays.
        case cancelled
        /// Escape outside a capture: the dialog's close (a layer surface has no close button).
        case refused
    }

    /// "Use another chord…" was pressed: the next chord typed is captured.
    public mutating func startCapture() {
        capturing = true
        tapping = nil
    }

    /// Allow is offered while a chord is proposed and no capture is going on.
    public var canAllow: Bool { proposed != nil && !capturing }

    public mutating func keyPressed(keyval: UInt32, state: UInt32) -> Effect {
        let held = GdkKeys.modifiers(state: state)
        guard capturing else { return Keysym(keyval) == GdkKeys.escape && held.isEmpty ? .refused : .passed }
        if let mod = GdkKeys.modifier(ofKey: keyval) {
            tapping = held.isEmpty ? mod : nil
            return .held
        }
        tapping = nil
        let key = Keysym(keyval)
        // Keys that never form a chord (Caps Lock, Num Lock, group switches) are not captured.
        if key.isModifier || keyval == 0 { return .held }
        capturing = false
        if key == GdkKeys.escape && held.isEmpty { return .cancelled }
        proposed = ConsentChord(modifiers: held, key: key)
        return .captured
    }

    public mutating func keyReleased(keyval: UInt32) -> Effect {
        guard capturing else { return .passed }
        guard let mod = GdkKeys.modifier(ofKey: keyval), let tapped = tapping, tapped == mod else {
            tapping = nil
            return .held
        }
        capturing = false
        tapping = nil
        proposed = ConsentChord(modifiers: mod, key: nil)
        return .captured
    }

    /// The chord as the dialog shows it.
    public var chordText: String { proposed?.description ?? "No chord proposed" }

    /// The line under the chord: what to do now.
    public var hint: String {
        if capturing { return "Press the chord to use (a modifier tapped alone counts); Escape cancels" }
        if proposed == nil { return "Choose a chord with “Use another chord…”" }
        return "Allow binds this chord to the app's shortcut, in every window"
    }

    /// The answer for Allow (nil while it is not offered).
    public var allowReply: ConsentDialog.Reply? {
        guard canAllow, let proposed else { return nil }
        return .accept(proposed.keys)
    }
}
