import CXkb

/// An X keysym (`xkb_keysym_t`) with the name and case helpers chords need.
public struct Keysym: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    public static let noSymbol = Keysym(0)

    /// The keysym's name, e.g. `Return`, `exclam`, `a`.
    /// The corresponding C function is `xkb_keysym_get_name`.
    public var name: String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buf in
            let n = xkb_keysym_get_name(rawValue, buf.baseAddress, 64)
            return n < 0 ? "0x\(String(rawValue, radix: 16))" : String(cString: buf.baseAddress!)
        }
    }

    public var description: String { name }

    /// The corresponding C function is `xkb_keysym_to_lower`, called for keysyms outside
    /// ASCII and the 0xFF00 block (TTY, cursor, keypad, function and modifier keys, which have
    /// no case): these two answer without a call, several times per key press.
    public var lowercased: Keysym {
        if rawValue < 0x80 { return rawValue &- 0x41 < 26 ? Keysym(rawValue | 0x20) : self }
        if rawValue & 0xFFFF_FF00 == 0xFF00 { return self }
        return lowercasedByXkb
    }
    /// The corresponding C function is `xkb_keysym_to_upper` (outside ASCII and 0xFF00).
    public var uppercased: Keysym {
        if rawValue < 0x80 { return rawValue &- 0x61 < 26 ? Keysym(rawValue & ~0x20) : self }
        if rawValue & 0xFFFF_FF00 == 0xFF00 { return self }
        return uppercasedByXkb
    }
    /// xkbcommon's answers, always (the tests check the shortcuts above against them).
    package var lowercasedByXkb: Keysym { Keysym(xkb_keysym_to_lower(rawValue)) }
    package var uppercasedByXkb: Keysym { Keysym(xkb_keysym_to_upper(rawValue)) }
    /// A keysym with distinct lower and upper case: a letter.
    public var isCased: Bool { lowercased != uppercased }

    /// The Unicode scalar the keysym stands for, 0 if none.
    /// The corresponding C function is `xkb_keysym_to_utf32`.
    public var utf32: UInt32 { xkb_keysym_to_utf32(rawValue) }

    /// Letters of the Latin script (Basic Latin, Latin-1, Latin Extended), which
    /// decide whether a layout is Latin.
    public var isLatinLetter: Bool {
        let u = lowercased.utf32
        return isCased && u != 0 && u < 0x250
    }

    /// Letters of a script written right to left: Hebrew, Arabic (and its supplements and
    /// presentation forms), Syriac, Thaana, N'Ko.
    public var isRightToLeftLetter: Bool {
        let u = utf32
        return (0x0590...0x08FF).contains(u) || (0xFB1D...0xFDFF).contains(u) || (0xFE70...0xFEFF).contains(u)
    }

    /// The other half of a left/right pair (`[`/`]`, `{`/`}`, `(`/`)`, `<`/`>`, Left/Right, and
    /// the keypad's arrows), for commands mirrored on right-to-left layouts; nil for any other.
    public var mirrored: Keysym? {
        switch rawValue {
        case 0x5B: return Keysym(0x5D)  // bracketleft → bracketright
        case 0x5D: return Keysym(0x5B)
        case 0x7B: return Keysym(0x7D)  // braceleft → braceright
        case 0x7D: return Keysym(0x7B)
        case 0x28: return Keysym(0x29)  // parenleft → parenright
        case 0x29: return Keysym(0x28)
        case 0x3C: return Keysym(0x3E)  // less → greater
        case 0x3E: return Keysym(0x3C)
        case 0xFF51: return Keysym(0xFF53)  // Left → Right
        case 0xFF53: return Keysym(0xFF51)
        case 0xFF96: return Keysym(0xFF98)  // KP_Left → KP_Right
        case 0xFF98: return Keysym(0xFF96)
        default: return nil
        }
    }

    /// What a keycap shows: the character the keysym types, upper-cased (`Ü`, `Ж`, `[`),
    /// or its name when it types none or a blank (`Return`, `space`, `F4`).
    public var keycapName: String {
        let u = uppercased.utf32
        if u > 0x20, u != 0x7F, !(0x80..<0xA0).contains(u), let scalar = Unicode.Scalar(u) { return String(Character(scalar)) }
        return ChordKey.keyName(self)
    }

    /// Modifier and group-switching keysyms (Shift_L … Hyper_R, ISO_Level3_Shift,
    /// ISO_Next_Group, …): keys that never form a chord of their own.
    public var isModifier: Bool {
        (0xFFE1...0xFFEE).contains(rawValue) || (0xFE01...0xFE13).contains(rawValue)
            || rawValue == 0xFF7E /* Mode_switch */ || rawValue == 0xFF7F /* Num_Lock */
    }

    /// Caps Lock: a modifier keysym (a lock) that a command may still take as its key
    /// (`keys = "Caps_Lock"`, an app's push-to-talk through the desktop portal, issue 36):
    /// it fires at its press and, with phases, its release, like any key.
    public var isCommandLock: Bool { rawValue == 0xFFE5 }

    /// Function keys F1…F35.
    public var isFunctionKey: Bool { (0xFFBE...0xFFE0).contains(rawValue) }

    /// Keys that edit or move in text: arrows, Return, Tab, BackSpace, Delete,
    /// Home, End, Page Up, Page Down (and their keypad forms).
    public var isTextEditing: Bool {
        switch rawValue {
        case 0xFF08 /* BackSpace */, 0xFF09 /* Tab */, 0xFE20 /* ISO_Left_Tab */, 0xFF0D /* Return */,
            0xFF50...0xFF57 /* Home Left Up Right Down Prior Next End */, 0xFFFF /* Delete */,
            0xFF8D /* KP_Enter */, 0xFF89 /* KP_Tab */, 0xFF95...0xFF9F /* KP_Home … KP_Delete */:
            return true
        default:
            return false
        }
    }

    /// Parses a key as written in a chord: a keysym name (`Return`, `exclam`,
    /// `F4`), a single character (`!`, `t`), or a case-insensitive name (`return`).
    /// The corresponding C functions are `xkb_keysym_from_name` and `xkb_utf32_to_keysym`.
    public init?(chordKey text: String) {
        guard !text.isEmpty else { return nil }
        let aliases = ["esc": "Escape", "enter": "Return", "del": "Delete", "pageup": "Prior", "pagedown": "Next",
                       "pgup": "Prior", "pgdn": "Next", "space": "space", "backspace": "BackSpace", "ins": "Insert"]
        var sym = xkb_keysym_from_name(text, XKB_KEYSYM_NO_FLAGS)
        if sym == 0, text.unicodeScalars.count == 1, let scalar = text.unicodeScalars.first {
            sym = xkb_utf32_to_keysym(scalar.value)
        }
        if sym == 0, let alias = aliases[text.lowercased()] {
            sym = xkb_keysym_from_name(alias, XKB_KEYSYM_NO_FLAGS)
        }
        if sym == 0 {
            sym = xkb_keysym_from_name(text, XKB_KEYSYM_CASE_INSENSITIVE)
        }
        guard sym != 0 else { return nil }
        self.rawValue = sym
    }
}
