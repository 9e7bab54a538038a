public import KbdKeymap

/// A chord the consent dialog proposes or captured: modifiers and a key, or a modifier tapped
/// alone (`key` nil). Spelled with the service's own tables (ModifierSet's names, ChordKey's
/// key names), never a list of its own.
public struct ConsentChord: Sendable, Equatable, CustomStringConvertible {
    public var modifiers: ModifierSet
    /// nil: the modifiers (one) tapped alone.
    public var key: Keysym?

    public init(modifiers: ModifierSet, key: Keysym?) {
        self.modifiers = modifiers.intersection(.chordModifiers)
        self.key = key.map { $0.lowercased }
    }

    /// Reads `--chord`: a chord as a command's `keys` (`Ctrl+Alt+M`, `ctrl+alt+m`, `Super+Return`,
    /// `Shift+F9`), or one modifier alone (`Super`); nil for anything else.
    public init?(parsing text: String) {
        if let mod = ModifierSet(name: text), ModifierSet.chordModifiers.contains(mod) {
            self.init(modifiers: mod, key: nil)
            return
        }
        guard let chord = try? ChordKey(parsing: text) else { return nil }
        self.init(modifiers: chord.modifiers, key: chord.keysym)
    }

    /// As the person reads it, the service's chord names: `Ctrl+Alt+M`, `Super+Return`, `Super`.
    public var description: String {
        guard let key else { return modifiers.description }
        return ChordKey(modifiers: modifiers, keysym: key).description
    }

    /// In the service's key-command notation, what `accept` prints: the modifiers' names and the
    /// key's keysym name (`Ctrl+Alt+m`, `Super+Return`, `Shift+F9`), or the modifier alone.
    public var keys: String {
        guard let key else { return modifiers.description }
        return (modifiers.names + [key.name]).joined(separator: "+")
    }
}

/// GDK's key events in the service's terms: the modifier state's bits (GdkModifierType, GTK 3)
/// and the modifier keys' keysyms.
public enum GdkKeys {
    static let shiftMask: UInt32 = 1 << 0
    static let controlMask: UInt32 = 1 << 2
    static let mod1Mask: UInt32 = 1 << 3
    static let mod4Mask: UInt32 = 1 << 6
    static let mod5Mask: UInt32 = 1 << 7
    static let superMask: UInt32 = 1 << 26
    static let hyperMask: UInt32 = 1 << 27
    static let metaMask: UInt32 = 1 << 28
    public static let escape = Keysym(0xFF1B)

    /// The chord modifiers of a GDK state: Shift, Control, Alt (Mod1, Meta), Super (Mod4,
    /// Super, Hyper), AltGr (Mod5, where xkb puts ISO_Level3_Shift). The locks are not chord
    /// modifiers.
    public static func modifiers(state: UInt32) -> ModifierSet {
        var mods = ModifierSet()
        if state & shiftMask != 0 { mods.insert(.shift) }
        if state & controlMask != 0 { mods.insert(.ctrl) }
        if state & (mod1Mask | metaMask) != 0 { mods.insert(.alt) }
        if state & (mod4Mask | superMask | hyperMask) != 0 { mods.insert(.super) }
        if state & mod5Mask != 0 { mods.insert(.altGr) }
        return mods
    }

    /// The modifier a modifier key sets (`Control_L` → Ctrl, `Super_R` → Super,
    /// `ISO_Level3_Shift` → AltGr); nil for other keys, the locks included.
    public static func modifier(ofKey keyval: UInt32) -> ModifierSet? {
        switch keyval {
        case 0xFFE1, 0xFFE2: return .shift  // Shift_L, Shift_R
        case 0xFFE3, 0xFFE4: return .ctrl  // Control_L, Control_R
        case 0xFFE7, 0xFFE8, 0xFFE9, 0xFFEA: return .alt  // Meta_L, Meta_R, Alt_L, Alt_R
        case 0xFFEB, 0xFFEC, 0xFFED, 0xFFEE: return .super  // Super_L, Super_R, Hyper_L, Hyper_R
        case 0xFE03: return .altGr  // ISO_Level3_Shift
        default: return nil
        }
    }
}
