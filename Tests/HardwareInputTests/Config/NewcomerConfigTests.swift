import KbdSystem
import KbdCore
import KbdKeymap
import KbdCommands
import KbdConfig
import KbdControl
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 27: what a newcomer writes, from what other tools teach, gets the fix; programs that
/// cannot work as the service runs them are warned about; a chord no key gives is named.
@Suite struct NewcomerConfigTests {
    static let examples: String = {
        let file = #filePath
        return file.split(separator: "/", omittingEmptySubsequences: false).dropLast(4).joined(separator: "/") + "/examples"
    }()

    static func problem(_ keys: String) -> String? {
        do {
            _ = try ConfigLoader.parse("[[command]]\nid = \"a\"\nkeys = \"\(keys)\"\n", path: "k.toml")
            return nil
        } catch {
            return error.description
        }
    }

    /// The whole corrected chord, not a list of names.
    @Test(arguments: [
        ("super + return", "Super+Return", "blanks separate the chords of a sequence"),
        ("ctrl + alt + t", "Ctrl+Alt+T", "blanks separate the chords of a sequence"),
        ("Mod4+Return", "Super+Return", "'Mod4' is X11's name for Super"),
        ("Mod1+Tab", "Alt+Tab", "'Mod1' is X11's name for Alt"),
        ("Mod4+Control+Return", "Ctrl+Super+Return", "'Mod4' is X11's name for Super"),
        ("KEY_VOLUMEUP", "XF86AudioRaiseVolume", "'KEY_VOLUMEUP' is the kernel's name of the key"),
        ("Ctrl+KEY_T", "Ctrl+T", "'KEY_T' is the kernel's name of the key"),
        ("XF86VolumeUp", "XF86AudioRaiseVolume", "'XF86VolumeUp' is an old name"),
        ("XF86VolumeMute", "XF86AudioMute", "'XF86VolumeMute' is an old name"),
        ("Ctrl+Ret", "Ctrl+Return", "'Ret' is written 'Return'"),
        ("Print Screen", "Print", "'Print Screen' is not one key: a blank starts the next chord of a sequence"),
        ("Ctrl+X Page Up", "Ctrl+X Prior", "'Page Up' is not one key"),
    ])
    func wholeChordCorrections(_ keys: String, _ fixed: String, _ reason: String) throws {
        let message = try #require(Self.problem(keys))
        #expect(message.hasPrefix("k.toml:3: keys = '\(keys)': "), "\(message)")
        #expect(message.contains(reason), "\(message)")
        #expect(message.hasSuffix("did you mean '\(fixed)'?"), "\(message)")
        // The suggestion is a valid chord.
        #expect(Self.problem(fixed) == nil)
    }

    /// Names that were already accepted stay accepted (Esc, Enter, Del, PgUp are aliases).
    @Test(arguments: ["Esc", "Ctrl+Enter", "Del", "PgUp", "Control+Alt+Delete", "super+return"])
    func aliasesStayAccepted(_ keys: String) {
        #expect(Self.problem(keys) == nil)
    }

    /// Every `KEY_*` name `monitor` prints for a key that types a keysym on a US keymap is
    /// corrected to that keysym, which parses back (libevdev's names, the real us keymap).
    @Test func everyKernelNameIsCorrected() throws {
        let us = try Keymaps.make("us")
        var tried = 0
        for code in UInt16(1)...255 where !us.isModifierKey(code: code) {
            let sym = us.levelOneKeysym(code: code, layout: 0)
            guard let name = EventCodeNames.name(type: 1, code: code), name.hasPrefix("KEY_"), sym != .noSymbol else { continue }
            // A few kernel names are also keysym names (KEY_... never are).
            let fix = try #require(ChordCorrection.correction(for: name), "\(name)")
            let chord = try ChordKey(parsing: fix.keys)
            #expect(chord.keysym == sym.lowercased, "\(name) → \(fix.keys)")
            tried += 1
        }
        #expect(tried > 150)
    }

    /// The starter config's commented examples are for the service: uncommented, none needs
    /// a session. The desktop example (for the agent) has the session programs.
    @Test func starterConfigHasNoSessionPrograms() throws {
        let text = String(decoding: try readWholeFile(path: Self.examples + "/config.toml", limit: 1 << 20), as: UTF8.self)
        var uncommented = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# [[command]]") || line.hasPrefix("# id") || line.hasPrefix("# title") || line.hasPrefix("# keys") || line.hasPrefix("# run") {
                uncommented += line.dropFirst(2) + "\n"
            }
        }
        let config = try ConfigLoader.parse(uncommented, path: "config.toml")
        #expect(config.table.commands.count >= 2)
        #expect(ConfigLoader.sessionProgramWarnings(config.table).isEmpty)

        let desktop = try ConfigLoader.load(path: Self.examples + "/desktop.toml")
        let asService = ConfigLoader.sessionProgramWarnings(desktop.table)
        #expect(asService.count >= 5)
        #expect(asService.contains { $0.message.contains("'wpctl' is an audio tool") && $0.message.contains("~/.config/kbd-commandd/config.toml") })
        #expect(asService.contains { $0.message.contains("'grim' is a Wayland client") })  // inside sh -c
        #expect(asService.contains { $0.message.contains("'foot' is a terminal") })
        // As the agent's config: nothing about sessions or shells (its screenshot runs sh -c knowingly).
        let agent = ConfigLoader.warnings(desktop, path: "/usr/bin:/bin", agent: true)
        #expect(!agent.contains { $0.message.contains("desktop session") || $0.message.contains("no shell runs") })
    }

    /// The issue's own config: wpctl and grim warned at their command's line, chvt not.
    @Test func theIssuesConfigIsWarned() throws {
        let text = """
            [[command]]
            id = "vol"
            keys = "XF86AudioRaiseVolume"
            run = ["wpctl", "set-volume", "@DEFAULT_AUDIO_SINK@", "5%+"]

            [[command]]
            id = "shot"
            keys = "Print"
            run = ["/usr/bin/grim", "/tmp/s.png"]

            [[command]]
            id = "vt"
            keys = "Ctrl+Alt+F2"
            run = ["chvt", "2"]
            """
        let config = try ConfigLoader.parse(text, path: "s.toml")
        let w = ConfigLoader.sessionProgramWarnings(config.table)
        #expect(w.map(\.location.line) == [1, 6])
        #expect(w[1].message.hasPrefix("run = [\"/usr/bin/grim\", \"/tmp/s.png\"] (command 'shot'): 'grim' is a Wayland client; it needs a desktop session"))
    }

    @Test(arguments: [
        (#"["grim", "~/shot.png"]"#, "'~/shot.png' starts with '~', which only a shell expands", #"run = ["sh", "-c", "grim ~/shot.png"]"#),
        (#"["notify-send", "$USER"]"#, "'$USER' contains a variable ($NAME)", #"run = ["sh", "-c", "notify-send $USER"]"#),
        (#"["dmesg", "|", "tail"]"#, "'|' is shell syntax", #"run = ["sh", "-c", "dmesg | tail"]"#),
        (#"["make", "&&", "echo", "ok"]"#, "'&&' is shell syntax", nil),
        (#"["date", ">/tmp/d"]"#, "'>/tmp/d' is a shell redirection", nil),
        (#"["sh", "-c", "grim ~/shot.png | wl-copy"]"#, nil, nil),
        (#"["notify-send", "Saved", "50% done"]"#, nil, nil),
    ] as [(String, String?, String?)])
    func shellSyntaxIsWarned(_ run: String, _ why: String?, _ fix: String?) throws {
        let config = try ConfigLoader.parse("[[command]]\nid = \"a\"\nkeys = \"Ctrl+A\"\nrun = \(run)\n", path: "r.toml")
        let w = ConfigLoader.shellSyntaxWarnings(config.table)
        #expect(w.count == (why == nil ? 0 : 1))
        if let why, let first = w.first {
            #expect(first.message.contains(why), "\(first.message)")
            #expect(first.message.contains("no shell runs 'run'"))
            if let fix { #expect(first.message.hasSuffix(fix), "\(first.message)") }
        }
    }

    /// F13 on the us evdev keymap types XF86Tools; the warning names the key and what to bind.
    @Test func chordsNoKeyGivesAreWarned() throws {
        let us = try Keymaps.make("us")
        let text = """
            [[command]]
            id = "f13"
            keys = "F13"

            [[command]]
            id = "tools"
            keys = "Ctrl+XF86Tools"

            [[command]]
            id = "ok"
            keys = "Ctrl+Shift+1"

            [[command]]
            id = "f20"
            keys = "Super+F20"

            [[command]]
            id = "vol"
            keys = "XF86AudioRaiseVolume"
            """
        let config = try ConfigLoader.parse(text, path: "u.toml")
        let w = ConfigLoader.untypableKeyWarnings(config.table, keymap: us)
        try #require(w.map(\.location.line) == [1, 13])
        #expect(w[0].description == "u.toml:1: keys = 'F13' (command 'f13'): no key types F13 on this keymap (evdev/pc105/us), so it can never fire; the F13 key (KEY_F13) types XF86Tools on this keymap: bind 'XF86Tools'. 'kbd-commandd monitor' shows what each key types")
        #expect(w[1].message.contains("the F20 key (KEY_F20) types XF86AudioMicMute on this keymap: bind 'Super+XF86AudioMicMute'"), "\(w[1].message)")
        // Ctrl+C on us,ru (the Latin layout's keysym while Russian is active): no warning.
        let ru = try ConfigLoader.parse("[[command]]\nid = \"c\"\nkeys = \"Ctrl+C\"\n", path: "ru.toml")
        #expect(ConfigLoader.untypableKeyWarnings(ru.table, keymap: try Keymaps.make("us,ru")).isEmpty)
    }

    /// The shipped examples bind only keys their keymap has.
    @Test(arguments: ["commands.toml", "desktop.toml", "tablet.toml"])
    func examplesAreTypable(_ name: String) throws {
        let config = try ConfigLoader.load(path: Self.examples + "/" + name)
        #expect(ConfigLoader.untypableKeyWarnings(config.table, keymap: try Keymaps.make("us")).isEmpty)
    }

    /// A user's [keymap] is refused with the reason, at its line (the agent and check --agent).
    @Test func agentConfigKeymapIsRefused() throws {
        let config = try ConfigLoader.parse("[[command]]\nid = \"a\"\nkeys = \"Ctrl+A\"\n\n[keymap]\nlayout = \"de\"\n", path: "/home/u/.config/kbd-commandd/config.toml")
        let problems = ConfigLoader.agentConfigProblems(config)
        #expect(problems.count == 1)
        #expect(problems.first?.description.hasPrefix("/home/u/.config/kbd-commandd/config.toml:5: [keymap] in a user's agent config: the service maps every key with its own keymap") == true)
        #expect(ConfigLoader.agentConfigProblems(try ConfigLoader.load(path: Self.examples + "/desktop.toml")).isEmpty)
    }
}
