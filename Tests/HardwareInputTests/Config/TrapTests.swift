import KbdCore
import KbdKeymap
import KbdCommands
import KbdConfig
import KbdControl
import KbdDaemon
import Testing

/// Issue 15: the traps `check` used to pass in silence. Golden texts.
@Suite struct TrapTests {
    static func keymap(_ layout: String) throws -> XkbKeymap {
        try XkbKeymap(context: XkbContext(), names: KeymapNames(layout: layout))
    }

    /// `Meta` is the Super key, as in the kernel (KEY_LEFTMETA) and keyd; every alias parses.
    @Test(arguments: [
        ("Meta+Return", "Super+Return"), ("Win+Return", "Super+Return"), ("Logo+Return", "Super+Return"), ("Cmd+Return", "Super+Return"),
        ("Command+Return", "Super+Return"), ("Control+c", "Ctrl+C"), ("ctrl+c", "Ctrl+C"), ("Option+Tab", "Alt+Tab"),
        ("Alt_Gr+e", "AltGr+E"), ("Level3+e", "AltGr+E"),
    ])
    func modifierAliases(_ text: String, _ canonical: String) throws {
        #expect(try ChordKey(parsing: text).description == canonical)
    }

    @Test func sameNamesInTheReadmeAsInTheParser() {
        for name in ModifierSet.allNames { #expect(ModifierSet(name: name) != nil, "\(name)") }
    }

    @Test func chordsThatAreOnePressOnTheLayoutConflict() throws {
        let config = try ConfigLoader.parse("""
            [[command]]
            id = "bang"
            keys = "Ctrl+exclam"

            [[command]]
            id = "one"
            keys = "Ctrl+Shift+1"

            [[command]]
            id = "other"
            keys = "Ctrl+Shift+1"
            scope = "editor"
            """, path: "p.toml")
        let problems = ConfigLoader.samePressConflicts(config.table, keymap: try Self.keymap("us"))
        #expect(problems.map(\.description) == [
            "p.toml:5: 'Ctrl+Shift+1' (one) and 'Ctrl+exclam' (bang) at p.toml:1 are the same press on layout 'English (US)': KEY_1 with Ctrl+Shift in scope 'global'; only 'Ctrl+Shift+1' (one) would fire. Bind one of them to another key",
        ])
        // On German, exclam is Shift+1 as well; on French it is its own key (no conflict).
        #expect(ConfigLoader.samePressConflicts(config.table, keymap: try Self.keymap("de")).count == 1)
        #expect(ConfigLoader.samePressConflicts(config.table, keymap: try Self.keymap("fr")).isEmpty)
    }

    @Test func distinctPressesDoNotConflict() throws {
        let config = try ConfigLoader.parse("""
            [[command]]
            id = "t"
            keys = "Ctrl+T"
            [[command]]
            id = "st"
            keys = "Ctrl+Shift+T"
            [[command]]
            id = "ret"
            keys = "Super+Return"
            [[command]]
            id = "vol"
            keys = "XF86AudioRaiseVolume"
            """, path: "p.toml")
        #expect(ConfigLoader.samePressConflicts(config.table, keymap: try Self.keymap("us")).isEmpty)
        #expect(ConfigLoader.samePressConflicts(config.table, keymap: try Self.keymap("us,ru")).isEmpty)
    }

    @Test func checkWarnsAboutRunProgramsGrabAndBareKeys() throws {
        let config = try ConfigLoader.parse("""
            [devices]
            grab = true

            [[command]]
            id = "hello"
            keys = "Ctrl+H"
            run = ["notify-send hello"]

            [[command]]
            id = "missing"
            keys = "Ctrl+M"
            run = ["kbd-no-such-program", "x"]

            [[command]]
            id = "fine"
            keys = "Ctrl+F"
            run = ["true"]

            [[command]]
            id = "abs"
            keys = "Ctrl+B"
            run = ["/nonexistent/bin/tool"]

            [[command]]
            id = "q"
            keys = "q"
            """, path: "w.toml")
        let warnings = ConfigLoader.warnings(config, path: "/usr/bin:/bin").map(\.description)
        #expect(warnings == [
            "w.toml:24: keys = 'q' (command 'q'): a key that types text; each press is logged and sent to subscribers as a command event, so what is typed there can be reconstructed. Bind it with Ctrl, Alt or Super, or in a scope that is not active while text is typed. In the global scope it fires whenever that key is typed, in every program.",
            "w.toml:4: run = [\"notify-send hello\", …] (command 'hello'): the program's name contains a space; run takes the program and each argument as separate strings, without a shell: run = [\"notify-send\", \"hello\"]",
            "w.toml:9: run = [\"kbd-no-such-program\", …] (command 'missing'): 'kbd-no-such-program' is not on PATH (/usr/bin:/bin); the service could not start it. Install it or give its full path",
            "w.toml:19: run = [\"/nonexistent/bin/tool\", …] (command 'abs'): /nonexistent/bin/tool is not an executable file here",
            "w.toml:2: devices.grab = true: while the service runs, the keyboards' keys no longer reach the desktop, the console or any other program (only its commands see them)",
        ])
    }
}
