public import KbdCommands
public import KbdKeymap
import KbdCore

extension ConfigLoader {
    /// Commands of one scope whose chords are different text but the same press on `keymap`:
    /// `Ctrl+exclam` and `Ctrl+Shift+1` on US (a press matches by its level-one keysym with
    /// every modifier and by the keysym it produces without the consumed ones). Only one of
    /// them could ever fire, so each pair is a problem at the later command, naming both.
    /// Every key (codes 1–255) is tried with every combination of Ctrl, Alt, Shift, Super and
    /// AltGr on every layout.
    public static func samePressConflicts(_ table: CommandTable, keymap: XkbKeymap) -> [ConfigError.Problem] {
        // The first chord of each command, by scope (sequences start with a press too).
        var byScope: [String: [ChordKey: [Command]]] = [:]
        for c in table.commands { if let first = c.keys.first { byScope[c.scope, default: [:]][first, default: []].append(c) } }
        guard let state = try? XkbState(keymap: keymap) else { return [] }
        var combos: [ModifierSet] = []
        for bits in 0..<32 { combos.append(ModifierSet(rawValue: UInt8(bits))) }
        var seen: Set<[String]> = []
        var problems: [ConfigError.Problem] = []
        for layout in 0..<keymap.layoutCount {
            for mods in combos {
                state.set(modifiers: mods, layout: layout)
                for code in UInt16(1)...255 where !keymap.isModifierKey(code: code) {
                    let (chord, alternate) = state.chordForms(code: code)
                    guard let alternate else { continue }
                    for (_, index) in byScope {
                        guard let a = index[chord]?.first, let b = index[alternate]?.first, a.id != b.id else { continue }
                        let key = [a.id, b.id].sorted()
                        guard seen.insert(key + [a.scope]).inserted else { continue }
                        let (first, later) = a.location.line <= b.location.line && a.location.path == b.location.path ? (a, b) : (b, a)
                        let winner = a  // the level-one form is matched first
                        problems.append(ConfigError.Problem(
                            location: later.location,
                            message: "'\(later.keysText)' (\(later.id)) and '\(first.keysText)' (\(first.id)) at \(first.location) are the same press on layout '\(keymap.layoutNames[layout])': \(EventCodeNames.keyName(code))\(mods.isEmpty ? "" : " with " + mods.names.joined(separator: "+")) in scope '\(a.scope)'; only '\(winner.keysText)' (\(winner.id)) would fire. Bind one of them to another key"))
                    }
                }
            }
        }
        return problems
    }
}
