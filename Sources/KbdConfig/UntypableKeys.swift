public import KbdCommands
public import KbdKeymap
import KbdCore

/// Issue 27: chords no key can give on the active keymap. `keys = "F13"` passes the parser but
/// never fires on the us evdev keymap, where the key labelled F13 types XF86Tools. Every key
/// (codes 1–255) is pressed, in thought, with every combination of Ctrl, Alt, Shift, Super and
/// AltGr on every layout, in both forms a press matches (the table `monitor` prints from).
extension ConfigLoader {
    public static func untypableKeyWarnings(_ table: CommandTable, keymap: XkbKeymap) -> [ConfigError.Problem] {
        guard let state = try? XkbState(keymap: keymap) else { return [] }
        var chords: Set<ChordKey> = []
        var keysyms: Set<Keysym> = []
        for layout in 0..<keymap.layoutCount {
            for bits in 0..<32 {
                state.set(modifiers: ModifierSet(rawValue: UInt8(bits)), layout: layout)
                for code in UInt16(1)...255 where !keymap.isModifierKey(code: code) || keymap.levelOneKeysym(code: code, layout: layout).isCommandLock {
                    let (chord, alternate) = state.chordForms(code: code)
                    chords.insert(chord)
                    keysyms.insert(chord.keysym)
                    if let alternate {
                        chords.insert(alternate)
                        keysyms.insert(alternate.keysym)
                    }
                }
            }
        }
        let names = keymap.names
        let described = [names.rules, names.model, names.layout].compactMap { $0 }.joined(separator: "/")
        var out: [ConfigError.Problem] = []
        // A chord `localize` makes typeable (from its US position) is no warning: check notes it.
        let positions = table.hasLocalize ? usPositions(keymap) : .none
        let localizable = { (chord: ChordKey) in
            (0..<keymap.layoutCount).contains { !positions.codes(localizing: chord.keysym, layout: keymap.chordLayout(active: $0)).isEmpty }
        }
        // A modifier alone (a tap) is a modifier key, which every keymap has.
        for c in table.commands where c.tapModifier == nil {
            guard let missing = c.keys.first(where: { !chords.contains($0) && !(c.localize && localizable($0)) }) else { continue }
            let key = ChordKey.keyName(missing.keysym)
            var message = "keys = '\(c.keysText)' (command '\(c.id)'): "
            if keysyms.contains(missing.keysym) {
                message += "no key gives '\(missing)' on this keymap (\(described)): \(key) is typed only with other modifiers; it can never fire. 'kbd-commandd monitor' shows the chord each key gives"
            } else {
                message += "no key types \(key) on this keymap (\(described)), so it can never fire"
                // The key labelled with that name (KEY_F13), and what it types here.
                if let code = EventCodeNames.keyCode(named: "KEY_" + key.uppercased()) {
                    let sym = keymap.levelOneKeysym(code: code, layout: 0)
                    if sym != .noSymbol, sym.lowercased != missing.keysym {
                        let fixed = ChordKey(modifiers: missing.modifiers, keysym: sym)
                        message += "; the \(key) key (\(EventCodeNames.keyName(code))) types \(ChordKey.keyName(sym)) on this keymap: bind '\(fixed)'"
                    }
                }
                message += ". 'kbd-commandd monitor' shows what each key types"
            }
            out.append(.init(location: c.location, message: message))
        }
        return out
    }
}
