import KbdConfig
import Testing

/// Bindings on keys that type text (issue 17, D9): the command log and socket events would
/// carry what is typed, so `check` warns about them.
@Suite struct ConfigWarningTests {
    @Test(arguments: [
        ("a", true), ("Shift+1", true), ("x y z", true), ("space", true), ("AltGr+e", true), ("KP_1", true), ("Shift+A", true),
        ("exclam", true), ("Ctrl+X y", true),
        ("Ctrl+A", false), ("F5", false), ("Super+Return", false), ("Return", false), ("Alt+Tab", false), ("Tab", false),
        ("Ctrl+X Ctrl+S", false), ("Escape", false), ("Delete", false), ("BackSpace", false), ("XF86AudioRaiseVolume", false),
        ("Ctrl+Shift+1", false), ("Alt+a", false), ("Super+space", false), ("Shift+F3", false), ("Up", false),
    ])
    func printableBindingsAreWarned(_ keys: String, _ warned: Bool) throws {
        let config = try ConfigLoader.parse("[keymap]\nlayout = \"us\"\n\n[[command]]\nid = \"k\"\nkeys = \"\(keys)\"\n", path: "w.toml")
        let warnings = ConfigLoader.textKeyWarnings(config.table)
        #expect(warnings.count == (warned ? 1 : 0))
        if warned {
            #expect(warnings[0].description.hasPrefix("w.toml:4: keys = '\(keys)' (command 'k'): a key that types text; each press is logged"))
        }
    }
}
