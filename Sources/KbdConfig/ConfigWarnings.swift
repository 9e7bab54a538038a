public import KbdCommands
import KbdKeymap
/// What `check` warns about in a valid config (exit 0): bindings that leak what is typed.
extension ConfigLoader {
    /// Commands bound to a key that types text (`a`, `Shift+1`, `space`, `AltGr+e`, a sequence
    /// such as `x y z`): each press is logged and sent to subscribers as a command event, so
    /// what was typed can be read back. One problem per command, at its `[[command]]` line.
    public static func textKeyWarnings(_ table: CommandTable) -> [ConfigError.Problem] {
        table.commands.filter { $0.keys.contains(where: typesText) }.map { c in
            ConfigError.Problem(location: c.location, message: "keys = '\(c.keysText)' (command '\(c.id)'): a key that types text; each press is logged and sent to subscribers as a command event, so what is typed there can be reconstructed. Bind it with Ctrl, Alt or Super, or in a scope that is not active while text is typed")
        }
    }

    /// A chord that types a character: no Ctrl, Alt or Super, and a printable keysym (Shift and
    /// AltGr still type). F-keys, Return, Tab, Escape, BackSpace and Delete do not.
    static func typesText(_ chord: ChordKey) -> Bool {
        let u = chord.keysym.utf32
        return !chord.hasCommandModifier && u >= 0x20 && u != 0x7F
    }
}
