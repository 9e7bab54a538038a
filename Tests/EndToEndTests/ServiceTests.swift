import KbdJSON
import KbdSystem
import KbdCore
import KbdKeymap
import KbdEvdev
import KbdConfig
import KbdControl
import KbdProcess
import KbdDaemon
import KbdService
import Logging
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The service's own option parser (kbd-commandd-daemon links no argument parser).
struct ServiceOptionsTests {
    @Test func everyOptionInBothSpellings() throws {
        let parsed = try ServiceOptions.parse([
            "-c", "/etc/k.toml", "--layout=de", "--variant", "nodeadkeys", "--options", "grp:alt_shift_toggle",
            "--model=pc105", "--rules", "evdev", "--socket=/tmp/s", "--allow-key-events", "--input-dir", "/tmp/in",
            "--max-children=3", "--log-level", "debug", "--report-latency", "--pass-env", "DISPLAY,WAYLAND_DISPLAY",
            "--pass-env=DBUS_SESSION_BUS_ADDRESS", "--max-clients", "16", "--user-agents",
        ])
        var expected = ServiceOptions()
        expected.config = "/etc/k.toml"
        expected.keymap = KeymapNames(rules: "evdev", model: "pc105", layout: "de", variant: "nodeadkeys", options: "grp:alt_shift_toggle")
        expected.socket = "/tmp/s"
        expected.allowKeyEvents = true
        expected.inputDir = "/tmp/in"
        expected.maxChildren = 3
        expected.logLevel = "debug"
        expected.reportLatency = true
        expected.passEnvironment = ["DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"]
        expected.maxClients = 16
        expected.userAgents = true
        #expect(parsed == .run(expected))
    }

    /// `--replay FILE` repeats, and bare files after it are more recordings (`--replay a b`).
    @Test func replayTakesOneOrMoreRecordings() throws {
        var expected = ServiceOptions()
        expected.config = "c.toml"
        expected.replay = ["a.evemu", "b.evemu", "c.evemu", "d.evemu"]
        #expect(try ServiceOptions.parse(["-c", "c.toml", "--replay", "a.evemu", "b.evemu", "--replay=c.evemu", "--replay", "d.evemu"])
                == .run(expected))
        expected.socket = "/tmp/s"
        #expect(try ServiceOptions.parse(["--replay", "a.evemu", "b.evemu", "--socket", "/tmp/s", "-c", "c.toml", "--replay", "c.evemu", "d.evemu"])
                == .run(expected))
        // A bare argument anywhere else is still an error.
        #expect(throws: CLIFailure(message: "Unexpected argument 'b.evemu'", code: ExitStatus.usage)) {
            try ServiceOptions.parse(["--replay", "a.evemu", "--no-socket", "b.evemu", "-c", "c.toml"])
        }
    }

    @Test func defaults() throws {
        guard case .run(let o) = try ServiceOptions.parse(["--config", "a.toml"]) else { Issue.record("not a run"); return }
        #expect(o.config == "a.toml" && o.inputDir == "/dev/input" && o.maxChildren == 8 && o.logLevel == "info")
        #expect(o.socket == nil && !o.noSocket && !o.allowKeyEvents && !o.reportLatency && o.keymap == KeymapNames() && o.replay.isEmpty)
    }

    /// Without --config the service reads the standard files (issue 15).
    @Test func noConfigMeansTheStandardFiles() throws {
        guard case .run(let o) = try ServiceOptions.parse([]) else { Issue.record("not a run"); return }
        #expect(o.config == nil)
        #expect(o.configFiles(environment: [:]) == ConfigFiles(main: "/etc/kbd-commandd/config.toml", dropInDirectory: "/etc/kbd-commandd/config.d"))
        #expect(o.configFiles(environment: ["KBD_COMMANDD_CONFIG_DIR": "/srv/kbd/"]) == ConfigFiles(main: "/srv/kbd/config.toml", dropInDirectory: "/srv/kbd/config.d"))
        guard case .run(let c) = try ServiceOptions.parse(["-c", "/x.toml"]) else { Issue.record("not a run"); return }
        #expect(c.configFiles(environment: ["KBD_COMMANDD_CONFIG_DIR": "/srv/kbd"]) == ConfigFiles.single("/x.toml"))
    }

    @Test(arguments: [
        (["--help"], ServiceOptions.Parsed.help), (["-c", "x", "-h"], .help), (["--version"], .version),
    ])
    func helpAndVersion(arguments: [String], expected: ServiceOptions.Parsed) throws {
        #expect(try ServiceOptions.parse(arguments) == expected)
    }

    @Test(arguments: [
        (["--config"], "Missing value for '--config <file>'"),
        (["-c", "a", "--bogus"], "Unknown option '--bogus'"),
        (["-c", "a", "extra"], "Unexpected argument 'extra'"),
        (["-c", "a", "--no-socket=yes"], "'--no-socket' takes no value"),
        (["-c", "a", "--max-children", "0"], "--max-children must be a whole number of at least 1, not '0'"),
        (["-c", "a", "--max-children=many"], "--max-children must be a whole number of at least 1, not 'many'"),
        (["-c", "a", "--log-level", "loud"], "--log-level must be one of trace, debug, info, notice, warning, error, critical, not 'loud'"),
        (["-c", "a", "--socket"], "Missing value for '--socket <path>'"),
        (["-c", "a", "--replay"], "Missing value for '--replay <file>'"),
        (["-c", "a", "--replay="], "--replay takes an evemu recording, not an empty name"),
        (["-c", "a", "--replay", "r.evemu", "--input-dir", "/dev/input"],
         "--replay and --input-dir exclude each other: replayed recordings are the only devices"),
    ])
    func usageErrors(arguments: [String], message: String) {
        #expect(throws: CLIFailure(message: message, code: ExitStatus.usage)) { try ServiceOptions.parse(arguments) }
    }

    @Test func childrenGetTheAllowListAndWhatPassEnvNames() throws {
        guard case .run(let o) = try ServiceOptions.parse(["-c", "a", "--pass-env", "WAYLAND_DISPLAY"]) else { Issue.record("not a run"); return }
        let env = ["PATH": "/bin", "HOME": "/h", "LC_TIME": "C", "WAYLAND_DISPLAY": "wayland-1", "NOTIFY_SOCKET": "/run/n",
                   "JOURNAL_STREAM": "8:9", "LD_PRELOAD": "x.so", "DISPLAY": ":0", "INVOCATION_ID": "abc"]
        #expect(o.childEnvironment(from: env) == ["HOME=/h", "LC_TIME=C", "PATH=/bin", "WAYLAND_DISPLAY=wayland-1"])
        #expect(o.childEnvironment(from: [:]) == CommandRunner.defaultEnvironment)
        #expect(throws: CLIFailure.self) { try ServiceOptions.parse(["-c", "a", "--pass-env", "A=B"]) }
    }

    @Test func everyOptionIsInTheHelp() {
        for option in ["--config", "--layout", "--variant", "--options", "--model", "--rules", "--socket", "--no-socket",
                       "--allow-key-events", "--input-dir", "--replay", "--max-children", "--max-clients", "--pass-env",
                       "--log-level", "--report-latency"] {
            #expect(ServiceOptions.help.contains("  \(option) ") || ServiceOptions.help.contains(", \(option) "), "\(option)")
            #expect(ServiceOptions.synopsis.contains(option), "\(option)")
        }
    }
}

/// `kbd-commandd run` executes kbd-commandd-daemon in its own process.
@Suite(.serialized)
struct RunExecutesTheServiceTests {
    @Test func runHelpIsTheServiceHelp() {
        let r = runTool(["run", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout == ServiceOptions.help)
        let direct = runTool(["--help"], executable: Paths.builtProduct("kbd-commandd-daemon"))
        #expect(direct.status == 0 && direct.stdout == ServiceOptions.help)
    }

    @Test func usageErrorsExit64WithTheUsage() {
        let r = runTool(["run", "--config", "x.toml", "--max-children", "0"])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("Error: --max-children must be a whole number of at least 1, not '0'\nUsage: kbd-commandd run [--config <file>]"))
        // Without --config: the standard files (issue 15); none there is exit 66 naming it.
        let missing = runTool(["run", "--no-socket", "--input-dir", "/nonexistent"], environment: ["KBD_COMMANDD_CONFIG_DIR": "/nonexistent/kbd-etc"])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("Error: /nonexistent/kbd-etc/config.toml:0: cannot read the config: No such file or directory\n"))
    }

    @Test func theRunningServiceIsTheDaemonBinaryInTheSameProcess() throws {
        let config = "/tmp/kbd-e2e-exec.toml"
        let f = fopen(config, "w")
        fputs("[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n", f)
        fclose(f)
        defer { unlink(config) }
        let daemon = RunningTool(["run", "--config", config, "--no-socket", "--input-dir", "/nonexistent"])
        #expect(daemon.waitFor("ready: 1 commands, 0 keyboards"))
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/\(daemon.pid)/exe", &buffer, 4095)
        let exe = n > 0 ? String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        #expect(exe.hasSuffix("/kbd-commandd-daemon"))
        // The service links no argument parser and no Foundation.
        let maps = (try? readWholeFile(path: "/proc/\(daemon.pid)/maps", limit: 1 << 22)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(!maps.isEmpty)
        #expect(!maps.contains("libFoundation"))
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }
}

/// The service's log handler: one event, one line, whatever a device was called.
struct StderrLogHandlerTests {
    @Test(arguments: [false, true])
    func aMessageWithLineBreaksAndEscapesStaysOneLine(journal: Bool) throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let logger = Logger(label: "t") { _ in StderrLogHandler(level: .info, journal: journal, fd: fds[1]) }
        let name = "Evil\nINFO command save ran\u{1B}[2J"
        logger.info("keyboard attached: /dev/input/event3 \"\(name)\"")
        logger.debug("not at this level")
        close(fds[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fds[0], &buffer, buffer.count)
            if n <= 0 { break }
            bytes += buffer[..<n]
        }
        close(fds[0])
        let text = String(decoding: bytes, as: UTF8.self)
        let prefix = journal ? "<6>" : "INFO "
        #expect(text == prefix + "keyboard attached: /dev/input/event3 \"Evil\\nINFO command save ran\\u{1B}[2J\"\n")
    }
}
