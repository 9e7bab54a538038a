import KbdJSON
import KbdTOML
import KbdSystem
import KbdCore
import KbdProcess
import KbdDaemon
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The built session agent (`kbd-commandd-agent`) against the daemon's real socket:
/// it registers the user's table, runs fired commands with its own environment,
/// reloads on a saved config, and reconnects when the service restarts.
@Suite(.serialized)
struct AgentTests {
    /// A program built next to the test binary.
    static func built(_ name: String) -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        var dir = String(decoding: buf[0..<max(0, n)].map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: "/").dropLast()
        while !dir.isEmpty {
            let candidate = "/" + dir.joined(separator: "/") + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
            dir = dir.dropLast()
        }
        return name
    }

    final class AgentProcess {
        let pid: pid_t
        let log: String

        init(config: String, socket: String, environment: [String: String]) {
            log = "/tmp/kbd-agent-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            let path = AgentTests.built("kbd-commandd-agent")
            let argv = ([path, "--config", config, "--socket", socket] as [String]).map { strdup($0) } + [nil]
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            var pid = pid_t()
            posix_spawn(&pid, path, &actions, nil, argv, envp)
            posix_spawn_file_actions_destroy(&actions)
            argv.forEach { free($0) }
            envp.forEach { free($0) }
            self.pid = pid
        }

        var output: String { (try? readWholeFile(path: log, limit: 1 << 20)).map { String(decoding: $0, as: UTF8.self) } ?? "" }

        func stop() -> Int32 {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            unlink(log)
            return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        }
    }

    static func write(_ text: String, to path: String) throws {
        let tmp = path + ".new"
        try DaemonHarness.write(text, to: tmp)
        rename(tmp, path)  // as editors save: the agent sees IN_MOVED_TO
    }

    static func fileText(_ path: String) -> String? {
        (try? readWholeFile(path: path, limit: 4096)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func theAgentRunsItsCommandsInItsSessionReloadsAndReconnects() throws {
        let dir = "/tmp/kbd-agent-test-\(getpid())"
        mkdir(dir, 0o700)
        let socket = dir + "/socket"
        let config = dir + "/config.toml"
        let proof = dir + "/proof"
        defer {
            for f in [config, proof, proof + "2"] { unlink(f) }
            rmdir(dir)
        }
        try Self.write("""
            [osk]
            backend = "none"

            [[command]]
            id = "terminal"
            title = "Terminal"
            keys = "Ctrl+Alt+T"
            run = ["/bin/sh", "-c", "echo \\"$WAYLAND_DISPLAY $KBD_COMMAND_ID\\" > \(proof)"]
            """, to: config)
        var h: DaemonHarness? = try DaemonHarness(socketPath: socket)
        let agent = AgentProcess(config: config, socket: socket,
                                 environment: ["PATH": "/usr/bin:/bin", "HOME": dir, "WAYLAND_DISPLAY": "wayland-test", "NOTIFY_SOCKET": "/x"])
        defer { _ = agent.stop() }
        #expect(h!.pump(until: { h!.daemon.commandTableOwners.count == 1 }))
        let kbd = h!.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h!.pump()
        h!.type(kbd, [("leftctrl", 1), ("leftalt", 1), ("t", 1), ("t", 0), ("leftalt", 0), ("leftctrl", 0)])
        #expect(h!.commandIDs == ["terminal"])
        // The agent, not the service, runs it: with the session's environment.
        #expect(h!.pump(until: { Self.fileText(proof) == "wayland-test terminal\n" }))

        // Saving the config re-registers the new table.
        try Self.write("""
            [[command]]
            id = "browser"
            keys = "Ctrl+Alt+B"
            run = ["/bin/sh", "-c", "echo browser > \(proof)2"]
            """, to: config)
        #expect(h!.pump(until: { agent.output.contains("loaded \(config): 1 commands") && agent.output.components("registered 1 commands") >= 2 }))
        h!.pump(20)
        h!.type(kbd, [("leftctrl", 1), ("leftalt", 1), ("b", 1), ("b", 0), ("leftalt", 0), ("leftctrl", 0)])
        #expect(h!.pump(until: { Self.fileText(proof + "2") == "browser\n" }))

        // A bad config keeps the old table and names the line.
        try Self.write("[[command]]\nid = \"x\"\nkeys = \"Ctrl+Sprocket\"\n", to: config)
        #expect(h!.pump(until: { agent.output.contains("\(config):3: keys = 'Ctrl+Sprocket'") }))

        // The service restarts: the agent reconnects and registers again.
        h = nil
        usleep(300_000)
        let again = try DaemonHarness(socketPath: socket)
        #expect(again.pump(until: { again.daemon.commandTableOwners.count == 1 }, seconds: 10))
        #expect(agent.output.contains("lost the service"))
        #expect(!agent.output.contains("wayland-test"))  // nothing of the command's output is about typed text
    }

    /// The agent runs what the config says as its user: a config others may write is refused
    /// (another user could plant commands), with the fix, and no command is registered.
    @Test func aConfigOthersMayWriteIsRefused() throws {
        let dir = "/tmp/kbd-agent-trust-\(getpid())"
        mkdir(dir, 0o700)
        let config = dir + "/config.toml"
        defer { unlink(config); rmdir(dir) }
        try DaemonHarness.write("[[command]]\nid = \"t\"\nkeys = \"Ctrl+Alt+T\"\nrun = [\"true\"]\n", to: config)
        chmod(config, 0o666)
        let h = try DaemonHarness(socketPath: dir + "/socket")
        let agent = AgentProcess(config: config, socket: dir + "/socket", environment: ["PATH": "/usr/bin:/bin", "HOME": dir])
        defer { _ = agent.stop() }
        #expect(h.pump(until: { h.daemon.commandTableOwners.count == 1 }))
        #expect(agent.output.contains("chmod go-w"), "\(agent.output)")
        #expect(h.pump(until: { agent.output.contains("registered 0 commands") }))
    }

    @Test func theAgentsHelpAndUsageErrors() {
        let r = AgentProcessRun.run(["--help"])
        #expect(r.status == 0 && r.output.contains("USAGE: kbd-commandd agent [--config <file>] [--socket <path>]"))
        let bad = AgentProcessRun.run(["--bogus"])
        #expect(bad.status == 64 && bad.output.contains("Unknown option '--bogus'"))
    }
}

enum AgentProcessRun {
    static func run(_ arguments: [String]) -> (status: Int32, output: String) {
        let log = "/tmp/kbd-agent-run-\(getpid()).log"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let path = AgentTests.built("kbd-commandd-agent")
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        var pid = pid_t()
        posix_spawn(&pid, path, &actions, nil, argv, environ)
        posix_spawn_file_actions_destroy(&actions)
        argv.forEach { free($0) }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let out = (try? readWholeFile(path: log, limit: 1 << 20)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        unlink(log)
        return ((status >> 8) & 0xff, out)
    }
}

extension String {
    func components(_ needle: String) -> Int { split(separator: needle, omittingEmptySubsequences: false).count - 1 }
}
