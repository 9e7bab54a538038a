import KbdCore
/// One chord: chord modifiers (no locks) and a keysym, letters folded to lower case.
/// This is the key of the command table's index, so matching is a hash lookup.
public struct ChordKey: Sendable, Hashable, CustomStringConvertible {
    public let modifiers: ModifierSet
    public let keysym: Keysym

    public init(modifiers: ModifierSet, keysym: Keysym) {
        self.modifiers = modifiers.intersection(.chordModifiers)
        self.keysym = keysym.lowercased
    }

    /// Modifiers in the order Ctrl, Alt, Shift, Super, AltGr, then the key: a
    /// single letter upper-cased (`Ctrl+Shift+T`), otherwise the keysym name
    /// (`Ctrl+Shift+1`, `Super+Return`, `Alt+F4`).
    public var description: String {
        var parts = modifiers.names
        parts.append(Self.keyName(keysym))
        return parts.joined(separator: "+")
    }

    public static func keyName(_ keysym: Keysym) -> String {
        if keysym.isCased {
            let upper = keysym.uppercased.name
            if upper.count == 1 { return upper }
        }
        return keysym.name
    }

    /// The chord as one word: modifiers above, the keysym below.
    @inlinable
    public var word: UInt64 { UInt64(modifiers.rawValue) << 32 | UInt64(keysym.rawValue) }

    /// One word into the hasher: the table is probed once or twice per key press.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(word)
    }

    /// The chord with its key's left/right pair (`Ctrl+bracketright` for `Ctrl+bracketleft`);
    /// nil when the key has none.
    public var mirrored: ChordKey? { keysym.mirrored.map { ChordKey(modifiers: modifiers, keysym: $0) } }

    /// Whether a modifier other than Shift, AltGr or the locks is part of the chord.
    public var hasCommandModifier: Bool { !modifiers.isDisjoint(with: [.ctrl, .alt, .super]) }
}

/// A chord or sequence string that could not be parsed.
public struct ChordParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var text: String
    public var message: String
    public var description: String { "'\(text)': \(message)" }
}

extension ChordKey {
    /// Parses `Ctrl+Shift+T`, `Ctrl+exclam`, `Super+Return`, `Ctrl++`. Modifier names
    /// are case-insensitive (Ctrl/Control, Alt, Shift, Super, AltGr); the key is a
    /// keysym name or a single character.
    public init(parsing text: String) throws(ChordParseError) {
        var parts = text.split(separator: "+", omittingEmptySubsequences: false).map(String.init)
        // "Ctrl++" names the plus key.
        if parts.count >= 2, parts[parts.count - 1].isEmpty, parts[parts.count - 2].isEmpty {
            parts.removeLast(2)
            parts.append("+")
        }
        guard let keyText = parts.last, !keyText.isEmpty else {
            throw ChordParseError(text: text, message: "expected a key after the last '+'; a chord needs a key after its modifiers, such as \(Self.example(parts.dropLast()))")
        }
        var mods = ModifierSet()
        for name in parts.dropLast() {
            guard !name.isEmpty else { throw ChordParseError(text: text, message: "empty modifier name between '+' signs") }
            guard let mod = ModifierSet(name: name), ModifierSet.chordModifiers.contains(mod) else {
                let near = NearestNames.nearest(to: name, in: ModifierSet.allNames, limit: 2)
                let hint = near.isEmpty ? "" : " (did you mean \(NearestNames.list(near))?)"
                throw ChordParseError(text: text, message: "unknown modifier '\(name)'\(hint); expected Ctrl, Alt, Shift, Super or AltGr")
            }
            guard !mods.contains(mod) else { throw ChordParseError(text: text, message: "modifier '\(name)' given twice") }
            mods.insert(mod)
        }
        guard let sym = Keysym(chordKey: keyText) else {
            if let mod = ModifierSet(name: keyText), ModifierSet.chordModifiers.contains(mod) {
                throw ChordParseError(text: text, message: "'\(keyText)' is a modifier; a chord needs a key after its modifiers, such as \(Self.example(parts))")
            }
            // "Ctrl-Alt-Del": modifiers joined with '-'.
            let dashed = keyText.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            if dashed.count >= 2, dashed.dropLast().allSatisfy({ ModifierSet(name: $0) != nil }), let last = dashed.last, !last.isEmpty {
                let fixed = (parts.dropLast() + dashed).joined(separator: "+")
                throw ChordParseError(text: text, message: "unknown key name '\(keyText)'; modifiers and the key are joined with '+', not '-': did you mean '\(fixed)'?")
            }
            if let near = KeysymNames.didYouMean(keyText) {
                throw ChordParseError(text: text, message: "unknown key name '\(keyText)'; did you mean \(near)? (keys are keysym names, see xkbcommon-keysyms.h; 'kbd-commandd monitor' shows the name of each key you press)")
            }
            throw ChordParseError(text: text, message: "unknown key name '\(keyText)'; expected a keysym name such as a, 1, exclam, Return, F4 (see xkbcommon-keysyms.h)")
        }
        if sym.isModifier, !sym.isCommandLock {
            throw ChordParseError(text: text, message: "'\(keyText)' is a modifier key; a chord ends with a non-modifier key")
        }
        self.init(modifiers: mods, keysym: sym)
    }

    /// `Ctrl+Alt+T`-style example with the modifiers given (modifier names only) and a key.
    static func example(_ words: some Sequence<String>) -> String {
        var mods = words.filter { ModifierSet(name: $0) != nil }
        if mods.isEmpty { mods = ["Ctrl"] }
        return (mods + ["T"]).joined(separator: "+")
    }

    /// Parses a sequence: chords separated by blanks (`Ctrl+X Ctrl+S`).
    public static func parseSequence(_ text: String) throws(ChordParseError) -> [ChordKey] {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard !words.isEmpty else { throw ChordParseError(text: text, message: "expected a chord such as Ctrl+S") }
        var out: [ChordKey] = []
        do {
            for word in words { out.append(try ChordKey(parsing: String(word))) }
        } catch {
            // Names other tools teach: the whole corrected chord (issue 27).
            if let fix = ChordCorrection.correction(for: text) { throw ChordParseError(text: text, message: fix.message) }
            throw error
        }
        return out
    }
}
