import KbdKeymap

/// An app's `preferred_trigger` (the shortcuts specification's format: `CTRL+ALT+m`,
/// `LOGO+Return`, `SHIFT+F9`; also lower case and GTK's `<Control><Alt>m`) read into the
/// service's chord syntax (`Ctrl+Alt+M`), which is also the `trigger_description` the app
/// is answered with. A bare key (`F9`, `Caps_Lock`) or one modifier alone (`LOGO`,
/// `Control_L`) is a trigger too.
public struct PortalTrigger: Sendable, Equatable, CustomStringConvertible {
    /// The chord in the service's syntax, as `keys` of a registered command.
    public var keys: String
    public var description: String { keys }

    /// The longest trigger text read (the specification's are a few words).
    public static let maxBytes = 128

    public init(keys: String) { self.keys = keys }

    /// Reads `text`; nil when it is empty, too long, names an unknown modifier or key, or
    /// holds two keys or only modifiers (more than one).
    public init?(parsing text: String) {
        guard !text.isEmpty, text.utf8.count <= Self.maxBytes, !text.unicodeScalars.contains(where: { $0.value < 0x20 }) else { return nil }
        guard let words = Self.words(text), let last = words.last else { return nil }
        var mods = ModifierSet()
        for word in words.dropLast() {
            guard let mod = Self.modifier(word), !mods.contains(mod) else { return nil }
            mods.insert(mod)
        }
        // `LOGO` or `Control_L` alone: a modifier alone.
        if let mod = Self.modifier(last) ?? Self.modifierKey(last) {
            guard mods.isEmpty else { return nil }
            self.keys = mod.names.joined(separator: "+")
            return
        }
        guard let sym = Keysym(chordKey: Self.lockNames.contains(last.lowercased()) ? "Caps_Lock" : last), sym.rawValue != 0 else { return nil }
        if sym.isModifier {
            // Caps Lock (the service fires it at its press and release, `Keysym.isCommandLock`)
            // and the like: a bare key, never with modifiers.
            guard mods.isEmpty else { return nil }
            self.keys = sym.name
            return
        }
        self.keys = ChordKey(modifiers: mods, keysym: sym).description
    }

    /// Whether the service takes it as a command's keys: a trigger it would refuse is never
    /// bound (a refused chord would refuse the user's whole table).
    public var isRegistrable: Bool { isChord || Self.loneModifiers.contains(keys) }

    /// A chord (not a modifier alone, which the service fires at its tap).
    public var isChord: Bool { (try? ChordKey.parseSequence(keys)) != nil }

    /// Caps Lock's names besides its keysym's (`CAPS`, as the specification spells modifiers).
    static let lockNames: Set<String> = ["caps", "capslock", "caps_lock"]

    /// The modifiers the service takes alone as a command's keys (a tap).
    static let loneModifiers: Set<String> = ["Ctrl", "Alt", "Shift", "Super", "AltGr"]

    /// The words of `CTRL+ALT+m` or `<Control><Alt>m` (GTK's accelerator format).
    private static func words(_ text: String) -> [String]? {
        let trimmed = text.trimmingBlanks
        guard trimmed.hasPrefix("<") else {
            var parts = trimmed.split(separator: "+", omittingEmptySubsequences: false).map { String($0).trimmingBlanks }
            // `CTRL++`: the plus key.
            if parts.count >= 2, parts[parts.count - 1].isEmpty, parts[parts.count - 2].isEmpty { parts.removeLast(2); parts.append("plus") }
            return parts.contains(where: \.isEmpty) ? nil : parts
        }
        var out: [String] = []
        var rest = Substring(trimmed)
        while rest.hasPrefix("<") {
            guard let close = rest.firstIndex(of: ">") else { return nil }
            out.append(String(rest[rest.index(after: rest.startIndex)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { out.append(String(rest)) }
        return out.contains(where: \.isEmpty) ? nil : out
    }

    /// A modifier's name: the specification's (CTRL, ALT, SHIFT, LOGO), GTK's (Control,
    /// Primary, Alt, Mod1, Shift, Super, Meta), the service's (Ctrl, Super, AltGr).
    private static func modifier(_ word: String) -> ModifierSet? {
        switch word.lowercased() {
        case "primary", "mod1": return word.lowercased() == "primary" ? .ctrl : .alt
        case "mod4", "hyper": return .super
        case "iso_level3_shift", "mod5": return .altGr
        default:
            guard let mod = ModifierSet(name: word), ModifierSet.chordModifiers.contains(mod) else { return nil }
            return mod
        }
    }

    /// A modifier key named as a key (`Control_L`, `Super_R`): that modifier alone.
    private static func modifierKey(_ word: String) -> ModifierSet? {
        switch word.lowercased() {
        case "control_l", "control_r": return .ctrl
        case "alt_l", "alt_r": return .alt
        case "shift_l", "shift_r": return .shift
        case "super_l", "super_r", "meta_l", "meta_r": return .super
        case "iso_level3_shift": return .altGr
        default: return nil
        }
    }
}

extension String {
    fileprivate var trimmingBlanks: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
