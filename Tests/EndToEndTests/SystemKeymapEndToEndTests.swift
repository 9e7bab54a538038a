import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 26: with no `[keymap]` and no `XKB_DEFAULT_*`, the keymap is the system's
/// (/etc/default/keyboard, or the file `KBD_COMMANDD_SYSTEM_KEYBOARD` names) for the service,
/// `replay`, `check` and `monitor` alike; and sticky keys through the built executable.
@Suite(.serialized)
struct SystemKeymapEndToEndTests {
    static func temporaryDirectory() -> String {
        var template = Array("/tmp/kbd-e2e-keymap-XXXXXX".utf8CString)
        _ = mkdtemp(&template)
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func write(_ text: String, to path: String) {
        let f = fopen(path, "w")
        fputs(text, f)
        fclose(f)
    }

    /// The file as Debian's keyboard-configuration writes it (keyboard(5)), for a German keyboard.
    static let german = """
        # KEYBOARD CONFIGURATION FILE

        # Consult the keyboard(5) manual page.

        XKBMODEL="pc105"
        XKBLAYOUT="de"
        XKBVARIANT=""
        XKBOPTIONS=""

        BACKSPACE="guess"

        """

    static let undoConfig = """
        [[command]]
        id = "undo"
        keys = "Ctrl+Z"

        [[command]]
        id = "redo"
        keys = "Ctrl+Y"
        """

    /// Ctrl held, the key at the Y position (KEY_Y, which types z on a German keyboard) tapped.
    static let ctrlY = """
        E: 1.000000 0001 001d 0001
        E: 1.000000 0000 0000 0000
        E: 1.100000 0001 0015 0001
        E: 1.100000 0000 0000 0000
        E: 1.150000 0001 0015 0000
        E: 1.150000 0000 0000 0000
        E: 1.200000 0001 001d 0000
        E: 1.200000 0000 0000 0000

        """

    struct Files {
        let dir: String
        var config: String { dir + "/config.toml" }
        var keyboard: String { dir + "/keyboard" }
        var recording: String { dir + "/ctrl-y.evemu" }
        func environment(_ extra: [String: String] = [:]) -> [String: String] {
            testEnvironment.merging(["KBD_COMMANDD_SYSTEM_KEYBOARD": keyboard]) { $1 }.merging(extra) { $1 }
        }
    }

    static func files(keyboard: String = german, config: String = undoConfig) -> Files {
        let f = Files(dir: temporaryDirectory())
        write(keyboard, to: f.keyboard)
        write(config, to: f.config)
        write(ctrlY, to: f.recording)
        return f
    }

    @Test func replayMapsKeysWithTheSystemKeymap() {
        let f = Self.files()
        let r = runTool(["replay", f.recording, "--config", f.config, "--print", "commands"], environment: f.environment())
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.filter { $0.contains("command") }.count == 1)
        #expect(r.stdout.contains("undo"), "\(r.stdout)")
        // Without the file (the default environment of the tests names none): us, where KEY_Y is y.
        let us = runTool(["replay", f.recording, "--config", f.config, "--print", "commands"])
        #expect(us.stdout.contains("redo") && !us.stdout.contains("undo"), "\(us.stdout)")
    }

    @Test func theConfigAndTheEnvironmentComeFirst() {
        let f = Self.files()
        let env = runTool(["replay", f.recording, "--config", f.config, "--print", "commands"], environment: f.environment(["XKB_DEFAULT_LAYOUT": "us"]))
        #expect(env.stdout.contains("redo") && !env.stdout.contains("undo"), "\(env.stdout)")
        let withKeymap = Self.files(config: "[keymap]\nlayout = \"us\"\n\n" + Self.undoConfig)
        let config = runTool(["replay", withKeymap.recording, "--config", withKeymap.config, "--print", "commands"], environment: withKeymap.environment())
        #expect(config.stdout.contains("redo") && !config.stdout.contains("undo"), "\(config.stdout)")
        // A model alone in [keymap] is a [keymap] too: the system file is not read.
        let modelOnly = Self.files(config: "[keymap]\nmodel = \"pc104\"\n\n" + Self.undoConfig)
        let check = runTool(["check", "--config", modelOnly.config], environment: modelOnly.environment())
        #expect(check.stdout.hasSuffix("keymap us English (US) (from the config's [keymap])\n"), "\(check.stdout)")
    }

    @Test func checkSaysWhereTheKeymapCameFrom() {
        let f = Self.files()
        let system = runTool(["check", "--config", f.config], environment: f.environment())
        #expect(system.status == 0)
        #expect(system.stdout.hasSuffix("keymap de German (from \(f.keyboard))\n"), "\(system.stdout)")
        let env = runTool(["check", "--config", f.config], environment: f.environment(["XKB_DEFAULT_LAYOUT": "fr"]))
        #expect(env.stdout.hasSuffix("keymap fr French (from XKB_DEFAULT_*)\n"), "\(env.stdout)")
        let none = runTool(["check", "--config", f.config])
        #expect(none.stdout.hasSuffix("keymap us English (US) (from the built-in default)\n"), "\(none.stdout)")
        let commandLine = runTool(["check", "--config", f.config, "--layout", "gb"], environment: f.environment())
        #expect(commandLine.stdout.hasSuffix("keymap gb English (UK) (from the command line)\n"), "\(commandLine.stdout)")
    }

    @Test func aBadValueIsAWarningWithFileAndLine() {
        let f = Self.files(keyboard: "XKBMODEL=pc105\nXKBLAYOUT=\"xx\"\nXKBVARIANT=\"\"\nXKBOPTIONS=\"ctrl:nocapz\"\nXKBVARIANT=$V\n")
        let r = runTool(["check", "--config", f.config], environment: f.environment())
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("Warning: \(f.keyboard):2: XKBLAYOUT: unknown layout 'xx'"), "\(r.stderr)")
        #expect(r.stderr.contains("Warning: \(f.keyboard):4: XKBOPTIONS: unknown option 'ctrl:nocapz'; did you mean 'ctrl:nocaps'"), "\(r.stderr)")
        #expect(r.stderr.contains("Warning: \(f.keyboard):5: XKBVARIANT: shell expansions ($, `) are not read; line ignored"), "\(r.stderr)")
        // Nothing usable is left but the model: us, from the file.
        #expect(r.stdout.hasSuffix("keymap us English (US) (from \(f.keyboard))\n"), "\(r.stdout)")
        // A good layout beside a bad option keeps the layout.
        let half = Self.files(keyboard: "XKBLAYOUT=de\nXKBOPTIONS=ctrl:nocapz\n")
        let h = runTool(["check", "--config", half.config], environment: half.environment())
        #expect(h.stderr.contains("Warning: \(half.keyboard):2: XKBOPTIONS: unknown option 'ctrl:nocapz'"), "\(h.stderr)")
        #expect(h.stdout.hasSuffix("keymap de German (from \(half.keyboard))\n"), "\(h.stdout)")
    }

    @Test func monitorUsesTheSystemKeymap() {
        let f = Self.files()
        let r = runTool(["monitor", "--replay", f.recording, "--config", f.config], environment: f.environment())
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("KEY_Y (21)  keysym z  chord Ctrl+Z  → command undo"), "\(r.stdout)")
    }

    @Test func theServiceUsesTheSystemKeymap() {
        let f = Self.files()
        let socket = f.dir + "/socket"
        let daemon = RunningTool(["run", "--config", f.config, "--socket", socket, "--replay", f.recording], environment: f.environment())
        #expect(daemon.waitFor("command undo \"undo\" (Ctrl+Z)", seconds: 15), "\(daemon.stderr)")
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        #expect(!daemon.stderr.contains("command redo"))
    }

    @Test func stickyKeysInReplayAndMonitor() {
        let f = Self.files(config: "[accessibility]\nsticky_keys = true\n\n" + Self.undoConfig)
        // Ctrl tapped alone, then the key at Y: latched Ctrl.
        Self.write("""
            E: 1.000000 0001 001d 0001
            E: 1.000000 0000 0000 0000
            E: 1.050000 0001 001d 0000
            E: 1.050000 0000 0000 0000
            E: 1.100000 0001 0015 0001
            E: 1.100000 0000 0000 0000
            E: 1.150000 0001 0015 0000
            E: 1.150000 0000 0000 0000

            """, to: f.recording)
        let replay = runTool(["replay", f.recording, "--config", f.config, "--print", "commands"])
        #expect(replay.stdout.contains("redo"), "\(replay.stdout)")
        let monitor = runTool(["monitor", "--replay", f.recording, "--config", f.config])
        let name = "\"ctrl-y.evemu\""
        #expect(monitor.lines == [
            "attach \(name)",
            "\(name)  KEY_LEFTCTRL (29)  keysym Control_L  (modifier)",
            "\(name)  sticky keys: latched Ctrl, locked none",
            "\(name)  KEY_Y (21)  keysym y  chord Ctrl+Y  → command redo \"redo\" (global)",
            "\(name)  sticky keys: latched none, locked none",
            "detach \(name)",
        ], "\(monitor.stdout)")
        // Off: the same recording fires nothing.
        let off = Self.files()
        Self.write(slurpFile(f.recording), to: off.recording)
        let plain = runTool(["replay", off.recording, "--config", off.config, "--print", "commands"])
        #expect(!plain.stdout.contains("command"), "\(plain.stdout)")
    }
}
