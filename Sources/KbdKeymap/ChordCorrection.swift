import KbdCore
import KbdSystem

/// Issue 27: the whole corrected chord for names other tools teach, so an error can say
/// "did you mean 'Super+Return'?" instead of listing names:
/// - sxhkd/swhkd style blanks around '+' (`super + return`);
/// - X11 modifier names (`Mod4` → Super, `Mod1` → Alt, `Mod5` → AltGr), any case (`control` → Ctrl);
/// - the kernel's key names, as `monitor` prints a key's code (`KEY_VOLUMEUP` → the keysym that
///   key types on a US keymap, `XF86AudioRaiseVolume`);
/// - X11's legacy and other tools' XF86 names (`XF86VolumeUp` → `XF86AudioRaiseVolume`);
/// - common abbreviations (`Ret` → `Return`, `PgUp` → `Prior`);
/// - a key name written with a space (`Print Screen`): a blank starts a sequence.
public enum ChordCorrection {
    /// A corrected `keys` text and why each change was made.
    public struct Correction: Sendable, Equatable {
        public var keys: String
        public var reasons: [String]
        /// `REASONS: did you mean 'KEYS'?`
        public var message: String { "\(reasons.joined(separator: "; ")): did you mean '\(keys)'?" }
    }

    /// X11's modifier names, and every name `ModifierSet(name:)` takes, to the canonical name.
    static let modifierNames: [String: (ModifierSet, String?)] = [
        "mod1": (.alt, "'Mod1' is X11's name for Alt"),
        "mod4": (.super, "'Mod4' is X11's name for Super"),
        "mod5": (.altGr, "'Mod5' is X11's name for AltGr (ISO_Level3_Shift)"),
        "ctl": (.ctrl, "'Ctl' is Ctrl"),
    ]

    /// Abbreviations and spellings of other tools that are not keysym names.
    static let abbreviations: [String: String] = [
        "ret": "Return", "enter": "Return", "cr": "Return", "esc": "Escape", "escape": "Escape", "del": "Delete",
        "pgup": "Prior", "pageup": "Prior", "pgdn": "Next", "pgdown": "Next", "pagedown": "Next",
        "ins": "Insert", "bksp": "BackSpace", "backspace": "BackSpace", "bs": "BackSpace",
        "capslock": "Caps_Lock", "numlock": "Num_Lock", "scrolllock": "Scroll_Lock",
    ]

    /// XF86 names other tools (old X11 keysym tables, sxhkd examples, forums) use.
    static let xf86Names: [String: String] = [
        "xf86volumeup": "XF86AudioRaiseVolume", "xf86volumedown": "XF86AudioLowerVolume",
        "xf86volumemute": "XF86AudioMute", "xf86mute": "XF86AudioMute", "xf86micmute": "XF86AudioMicMute",
        "xf86play": "XF86AudioPlay", "xf86pause": "XF86AudioPause", "xf86playpause": "XF86AudioPlay",
        "xf86next": "XF86AudioNext", "xf86prev": "XF86AudioPrev", "xf86previous": "XF86AudioPrev", "xf86stop": "XF86AudioStop",
        "xf86brightnessup": "XF86MonBrightnessUp", "xf86brightnessdown": "XF86MonBrightnessDown",
    ]

    /// The corrected chord or sequence for `text`, nil when there is none or it is `text` itself.
    public static func correction(for text: String) -> Correction? {
        var reasons: [String] = []
        var working = text
        // "super + return": blanks around '+' split a chord into a sequence.
        if working.includes(" +") || working.includes("+ ") || working.includes("\t+") || working.includes("+\t") {
            var out = ""
            var pendingBlank = false
            for c in working {
                if c == " " || c == "\t" {
                    pendingBlank = true
                    continue
                }
                if pendingBlank && c != "+" && out.last != "+" && !out.isEmpty { out.append(" ") }
                pendingBlank = false
                out.append(c)
            }
            working = out
            reasons.append("blanks separate the chords of a sequence ('Ctrl+X Ctrl+S'); '+' joins a chord's modifiers and key without blanks")
        }
        var words = working.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard !words.isEmpty else { return nil }
        // "Print Screen", "Volume Up": a key name written with a space.
        var i = 0
        while i + 1 < words.count {
            if !words[i].contains("+" as Character), (try? ChordKey(parsing: words[i + 1])) == nil || (try? ChordKey(parsing: words[i])) == nil,
               let joined = joinedKey(words[i] + words[i + 1])
            {
                reasons.append("'\(words[i]) \(words[i + 1])' is not one key: a blank starts the next chord of a sequence ('Ctrl+X Ctrl+S'); the key is '\(joined)'")
                words[i] = joined
                words.remove(at: i + 1)
            }
            i += 1
        }
        var fixed: [String] = []
        for word in words {
            guard let (chord, why) = correctedChord(word) else { return nil }
            reasons += why
            fixed.append(chord)
        }
        let keys = fixed.joined(separator: " ")
        guard keys != text, !reasons.isEmpty, (try? ChordKey.parseSequence(keys)) != nil else { return nil }
        return Correction(keys: keys, reasons: reasons)
    }

    /// One chord with canonical modifier names in chord order and a key that parses.
    static func correctedChord(_ word: String) -> (String, [String])? {
        var parts = word.split(separator: "+", omittingEmptySubsequences: false).map(String.init)
        if parts.count >= 2, parts[parts.count - 1].isEmpty, parts[parts.count - 2].isEmpty {
            parts.removeLast(2)
            parts.append("+")
        }
        guard let keyText = parts.last, !keyText.isEmpty else { return nil }
        var reasons: [String] = []
        var mods = ModifierSet()
        for name in parts.dropLast() {
            if let mod = ModifierSet(name: name), ModifierSet.chordModifiers.contains(mod) {
                mods.insert(mod)
            } else if let (mod, why) = modifierNames[name.lowercased()] {
                mods.insert(mod)
                if let why { reasons.append(why) }
            } else {
                return nil
            }
        }
        guard let (key, why) = correctedKey(keyText) else { return nil }
        if let why { reasons.append(why) }
        return ((mods.names + [key]).joined(separator: "+"), reasons)
    }

    /// A key name as written in a chord, or what it stands for, with why when it changed.
    static func correctedKey(_ text: String) -> (String, String?)? {
        if let sym = Keysym(chordKey: text), !sym.isModifier { return (ChordKey.keyName(sym), nil) }
        let folded = text.lowercased()
        if let name = abbreviations[folded] { return (name, "'\(text)' is written '\(name)'") }
        if let name = xf86Names[folded.filter { $0 != "_" }] { return (name, "'\(text)' is an old name; xkbcommon's keysym is '\(name)'") }
        if folded.hasPrefix("key_"), let (sym, _) = KeysymNames.kernelKeysym(text) {
            return (ChordKey.keyName(sym), "'\(text)' is the kernel's name of the key (the code 'monitor' prints); chords name the keysym the key types, '\(ChordKey.keyName(sym))' on a US keymap")
        }
        if folded.hasPrefix("xf86"), let (sym, kernel) = KeysymNames.kernelKeysym(String(text.dropFirst(4))) {
            return (ChordKey.keyName(sym), "'\(text)' is not an xkbcommon keysym; the key (\(kernel)) types '\(ChordKey.keyName(sym))'")
        }
        return nil
    }

    /// Two words of a sequence that are one key name written with a space.
    static func joinedKey(_ text: String) -> String? {
        let folded = text.lowercased().filter { $0 != "_" && $0 != "-" }
        if let name = KeysymNames.otherNames[folded] { return name }
        if let name = abbreviations[folded] { return name }
        if let sym = Keysym(chordKey: text), !sym.isModifier { return ChordKey.keyName(sym) }
        if let (sym, _) = KeysymNames.kernelKeysym(text) { return ChordKey.keyName(sym) }
        return nil
    }
}
