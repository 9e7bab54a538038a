import KbdTestSupport
import KbdProcess
import KbdService
import Logging
import Synchronization
import KbdSystem
import KbdDaemon
import KbdKeymap
import KbdCore
import KbdControl
import KbdCommands
import KbdPipeline
import KbdSeats
#if canImport(Glibc)
import Glibc
#endif

/// `kbd-bench attack [--chords N]`: chord latency while the service is attacked the way
/// the red team attacked it (issue 17). An in-process daemon (the real epoll loop, the
/// real control socket, real child processes) runs on the main thread; a second thread
/// types Ctrl+S on a fake keyboard every 5 ms, stamping each event with CLOCK_MONOTONIC;
/// the daemon's dispatch observer records event-to-dispatch latency. The attackers are
/// child processes (`kbd-bench attacker KIND SOCKET`), so they compete for the CPU as
/// a hostile local program would.
enum Attack {
    static let config = """
        [[command]]
        id = "save"
        keys = "Ctrl+S"

        [[command]]
        id = "yes"
        keys = "Ctrl+Y"
        run = ["yes"]

        [[command]]
        id = "nul"
        keys = "Ctrl+N"
        run = ["/bin/sh", "-c", "head -c 50000000 /dev/zero"]

        [[command]]
        id = "flood"
        keys = "Ctrl+F"

        [[command]]
        id = "background"
        keys = "Ctrl+B"
        run = ["/bin/sh", "-c", "sleep 300 & echo started"]

        """

    struct Scenario {
        var name: String
        /// Chords typed before measuring (starting children).
        var fire: [String] = []
        /// Attacker processes: (kind, count).
        var attackers: [(String, Int)] = []
        /// Commands in the config (the reload scenario loads a large one).
        var extraCommands = 0
        /// Issue 25: the service serves users' agents (`--user-agents`, logind simulated with
        /// the bench's user at seat0) and the attackers run as other uids (nobody and up),
        /// when the bench runs as root; otherwise they are operators and the note says so.
        var otherUsers = false
        /// The RSS once the attackers left is measured (after the typing).
        var leaveAndMeasure = false
        /// Issue 33: the attacker's uid owns seat0's active session (a process of the person
        /// at the keyboard floods); else the bench's own uid does and the attacker has none.
        var attackerActive = false
    }

    static let scenarios: [Scenario] = [
        Scenario(name: "quiet"),
        Scenario(name: "D1 a command's endless output (`yes`)", fire: ["y"]),
        Scenario(name: "D1 50 MB of NUL bytes without a newline", fire: ["n"]),
        Scenario(name: "D2 8 background grandchildren holding their pipes", fire: Array(repeating: "b", count: 8)),
        Scenario(name: "D3 3 clients writing blank lines flat out", attackers: [("blank", 3)]),
        Scenario(name: "D4 64 KiB requests of 32,700-element arrays", attackers: [("json", 1)]),
        Scenario(name: "D5 a subscriber reading 1 s of every 2", attackers: [("slow", 1)]),
        Scenario(name: "D10 300 clients held (cap 256)", attackers: [("hold", 1)]),
        Scenario(name: "D13 a reload every 100 ms, 5,001 commands", attackers: [("reload", 1)], extraCommands: 5000),
        Scenario(name: "churn: connect, ping, disconnect", attackers: [("churn", 1)]),
        Scenario(name: "U1 another uid re-registers a 1,000-command table on 64 connections", attackers: [("reregister", 1)], otherUsers: true),
        Scenario(name: "U2 another uid: 64 KiB registrations (a 20,000-chord sequence, 999 prefixes) on 16 connections",
                 attackers: [("hugeseq", 1)], otherUsers: true),
        Scenario(name: "U3 another uid: 300 connections held and a connect loop", attackers: [("hold", 1), ("churn", 1)], otherUsers: true),
        Scenario(name: "U4 250 clients of 25 uids register the largest tables, then leave", attackers: [("tables", 25)], otherUsers: true,
                 leaveAndMeasure: true),
        // Issue 33: one uid floods each request kind, flat out, on 4 connections.
        Scenario(name: "U5 a uid with no session cycles set_keymap (5 layouts and 5 bad names)", attackers: [("keymaps", 1)], otherUsers: true),
        Scenario(name: "U6 the active session's uid cycles set_keymap (5 layouts and 5 bad names)", attackers: [("keymaps", 1)], otherUsers: true,
                 attackerActive: true),
        Scenario(name: "U7 the active session's uid toggles set_sticky_keys", attackers: [("sticky", 1)], otherUsers: true, attackerActive: true),
        Scenario(name: "U8 the active session's uid floods run_command", attackers: [("run", 1)], otherUsers: true, attackerActive: true),
        Scenario(name: "U9 a uid with no session floods malformed 60 KiB lines", attackers: [("garbage", 1)], otherUsers: true),
        Scenario(name: "U10 the active session's uid floods set_scopes, set_text_input, list_commands", attackers: [("claims", 1)], otherUsers: true,
                 attackerActive: true),
        Scenario(name: "U11 a uid with no session floods subscribe, ping and the operators' list_devices and reload", attackers: [("others", 1)],
                 otherUsers: true),
    ]

    static func run(chords: Int, only: [String]? = nil) {
        let dir = "/tmp/kbd-bench/attack"
        mkdir("/tmp/kbd-bench", 0o755)
        mkdir(dir, 0o755)
        say("kbd-bench attack: \(chords) Ctrl+S chords every 5 ms per scenario; event time to dispatch\n")
        say("| scenario | p50 | p99 | max | chords | notes |")
        say("|---|---|---|---|---|---|")
        for scenario in scenarios where only.map({ $0.contains { scenario.name == $0 || scenario.name.hasPrefix($0 + " ") } }) ?? true {
            measure(scenario, chords: chords, dir: dir)
        }
    }

    final class Latencies: @unchecked Sendable {
        // @unchecked: written and read on the loop's thread only.
        var values: [Int64] = []
    }

    static func measure(_ scenario: Scenario, chords: Int, dir: String) {
        let configPath = dir + "/config.toml"
        let socketPath = dir + "/socket"
        var text = config
        for i in 0..<scenario.extraCommands { text += "[[command]]\nid = \"x\(i)\"\nkeys = \"Ctrl+Alt+F\(i % 12 + 1)\"\nscope = \"s\(i / 12)\"\n" }
        let out = try! FileOutput.create(path: configPath, mode: 0o600)
        out.write(text)
        try! out.flush()
        unlink(socketPath)
        let source = FakeDeviceSource()
        let log = CountingLog()
        let daemon: KeyboardDaemon
        do {
            daemon = try KeyboardDaemon(
                options: .init(socketPath: socketPath, maxChildren: 8, userAgents: scenario.otherUsers), source: source, logger: log.logger(),
                load: Service.loader(configPath: configPath, keymap: KeymapNames(layout: "us"), environment: [:]))
        } catch {
            say("| \(scenario.name) | cannot start: \(error) | | | | |")
            return
        }
        // The console user (the bench's uid) owns seat0's session: the attackers are elsewhere
        // (or, in the scenarios of a flooding process of the person at the keyboard, nobody's uid).
        let console: UInt32 = scenario.attackerActive && getuid() == 0 ? 65534 : getuid()
        let login = FakeLogin(ActiveSessions(available: true, activeUID: [ActiveSessions.defaultSeat: console]))
        daemon.loginSource = { () throws(SeatsUnavailable) -> any LoginSource in login }
        chmod(dir, 0o755)
        let latencies = Latencies()
        daemon.dispatchObserver = { command, eventTime, dispatchTime in
            if command.id == "save" { latencies.values.append(dispatchTime.microseconds - eventTime.microseconds) }
        }
        let kbd = source.plug("/dev/input/event1", DeviceDescription.genericKeyboard(name: "bench keyboard"))
        for _ in 0..<10 { daemon.runOnce(maxWaitMilliseconds: 10) }
        for key in scenario.fire {
            kbd.keys([("leftctrl", 1), (key, 1), (key, 0), ("leftctrl", 0)], at: monotonicNow())
            for _ in 0..<20 { daemon.runOnce(maxWaitMilliseconds: 5) }
        }
        var attackers: [pid_t] = []
        let rssStart = Bench.procStatus(getpid(), "VmRSS")
        for (kind, count) in scenario.attackers {
            for i in 0..<count {
                // Another uid when the bench may switch (root): nobody, then 65000 and up.
                let uid: UInt32? = scenario.otherUsers && getuid() == 0 ? (count == 1 ? 65534 : 65000 + UInt32(i)) : nil
                attackers.append(spawnAttacker(kind, socketPath, uid: uid))
            }
        }
        // Let the attack get going before measuring.
        let warm = monotonicNow().adding(milliseconds: 500)
        while monotonicNow() < warm { daemon.runOnce(maxWaitMilliseconds: 10) }
        let refusedBefore = daemon.runner.refused
        for key in scenario.fire where key == "b" {
            kbd.keys([("leftctrl", 1), (key, 1), (key, 0), ("leftctrl", 0)], at: monotonicNow())
            daemon.runOnce(maxWaitMilliseconds: 5)
        }
        let refusedExtra = daemon.runner.refused - refusedBefore
        let rssBefore = Bench.procStatus(getpid(), "VmRSS")
        let typist = Typist(device: kbd, chords: chords)
        typist.start()
        let deadline = monotonicNow().adding(milliseconds: chords * 5 + 20_000)
        while latencies.values.count < chords, monotonicNow() < deadline {
            daemon.runOnce(maxWaitMilliseconds: 20)
        }
        typist.join()
        let rssAfter = Bench.procStatus(getpid(), "VmRSS")
        for pid in attackers {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        var left = ""
        if scenario.leaveAndMeasure {
            let settle = monotonicNow().adding(milliseconds: 1000)
            while monotonicNow() < settle { daemon.runOnce(maxWaitMilliseconds: 10) }
            left = ", after they left \(Bench.procStatus(getpid(), "VmRSS")) KiB (before they came \(rssStart) KiB, peak \(Bench.procStatus(getpid(), "VmHWM")) KiB)"
        }
        daemon.runner.stopAll()
        for _ in 0..<20 { daemon.runOnce(maxWaitMilliseconds: 5) }
        let sorted = latencies.values.sorted()
        func pct(_ p: Double) -> String {
            guard !sorted.isEmpty else { return "–" }
            let i = min(sorted.count - 1, Int(Double(sorted.count) * p))
            return Bench.fmt(Double(sorted[i]) / 1000, 2) + " ms"
        }
        var notes = "log \(log.bytes.load(ordering: .relaxed) / 1024) KiB, RSS \(rssBefore)→\(rssAfter) KiB" + left
        if scenario.otherUsers { notes += getuid() == 0 ? ", attackers as other uids" : ", attackers as operators (not root: cannot switch uid)" }
        if scenario.fire.contains("b") { notes += ", 8 more fires: \(refusedExtra) refused" }
        say("| \(scenario.name) | \(pct(0.5)) | \(pct(0.99)) | \(sorted.last.map { Bench.fmt(Double($0) / 1000, 2) + " ms" } ?? "–") | \(sorted.count)/\(chords) | \(notes) |")
        for pid in Self.pids(log.lines()) { kill(-pid, SIGKILL) }
    }

    /// Child pids from "started … (pid N)" log lines (to clean up background grandchildren).
    static func pids(_ lines: [String]) -> [Int32] {
        lines.compactMap { line -> Int32? in
            guard let r = line.firstRange(of: "(pid ") else { return nil }
            return Int32(line[r.upperBound...].prefix { $0.isNumber })
        }
    }

    static func spawnAttacker(_ kind: String, _ socket: String, uid: UInt32? = nil) -> pid_t {
        Bench.launch([Bench.directory + "/kbd-bench", "attacker", kind, socket] + (uid.map { [String($0)] } ?? []))
    }

    // MARK: - Attackers (separate processes, until killed)

    static func attacker(_ kind: String, _ socket: String, uid: UInt32? = nil) -> Never {
        if let uid {
            // Another local user: no supplementary groups, its own uid and gid.
            guard setgroups(0, nil) == 0, setgid(uid) == 0, setuid(uid) == 0 else { exit(2) }
        }
        func connectNow() -> Int32 { (try? UnixSocketAddress(path: socket).connect()) ?? -1 }
        func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
            var sent = 0
            while sent < bytes.count {
                let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + sent, $0.count - sent) }
                if n <= 0 { return false }
                sent += n
            }
            return true
        }
        var sink = [UInt8](repeating: 0, count: 65536)
        func drain(_ fd: Int32) { while sink.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {} }
        switch kind {
        case "blank":
            let fd = connectNow()
            let chunk = [UInt8](repeating: 0x0A, count: 65536)
            while send(fd, chunk) {}
        case "json":
            let fd = connectNow()
            // Malformed on purpose (10,901 scopes, over the limit of 64): written by hand.
            let request = Array(#"{"request":"set_scopes","scopes":["# .utf8) + Array(repeating: Array(#""a","#.utf8), count: 10_900).flatMap { $0 } + Array(#""a"]}"#.utf8) + [0x0A]
            while send(fd, request) { drain(fd) }
        case "slow":
            let fd = connectNow()
            var size: Int32 = 4096
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            _ = send(fd, Array(ControlRequest.subscribe([.chord, .command, .presence, .detach]).line.utf8) + [0x0A])
            while true {
                let until = monotonicNow().adding(milliseconds: 1000)
                while monotonicNow() < until { drain(fd); usleep(1000) }
                sleep(1)
            }
        case "hold":
            var fds: [Int32] = []
            for _ in 0..<300 { fds.append(connectNow()) }
            while true { pause() }
        case "reload":
            let fd = connectNow()
            while send(fd, Array(ControlRequest.reload.line.utf8) + [0x0A]) {
                drain(fd)
                usleep(100_000)
            }
        case "reregister":
            // 64 connections (16 get a slot) re-registering a valid 1,000-command table.
            let table = Array(ControlRequest.register(commands: (0..<1000).map {
                ControlRequest.CommandSpec(id: "c\($0)", keys: "Ctrl+Alt+F\($0 % 12 + 1)", scope: "s\($0 / 12)")
            }, sequenceTimeoutMilliseconds: nil).line.utf8) + [0x0A]
            let fds = (0..<64).map { _ in connectNow() }.filter { $0 >= 0 }
            while true {
                var alive = false
                for fd in fds where send(fd, table) { alive = true; drain(fd) }
                if !alive { sleep(1) }
            }
        case "hugeseq":
            // The red team's 64 KiB registration: one 20,000-chord sequence and 999 commands on its prefixes.
            let chain = Array(repeating: "a", count: 20_000)
            var specs = [ControlRequest.CommandSpec(id: "long", keys: chain.joined(separator: " "))]
            for i in 1..<1000 { specs.append(.init(id: "p\(i)", keys: chain.prefix(i % 8 + 1).joined(separator: " "))) }
            let request = Array(ControlRequest.register(commands: specs, sequenceTimeoutMilliseconds: nil).line.utf8) + [0x0A]
            let fds = (0..<16).map { _ in connectNow() }.filter { $0 >= 0 }
            while true {
                var alive = false
                for fd in fds where send(fd, request) { alive = true; drain(fd) }
                if !alive { sleep(1) }
            }
        case "tables":
            // 10 connections, each registering a table as large as a request holds (600
            // two-chord commands, ~60 KiB), then held.
            var fds: [Int32] = []
            for c in 0..<10 {
                let fd = connectNow()
                guard fd >= 0 else { continue }
                let table = Array(ControlRequest.register(commands: (0..<600).map {
                    ControlRequest.CommandSpec(id: "t\(c)-\($0)", title: String(repeating: "x", count: 12), keys: "Ctrl+Alt+F\($0 % 12 + 1) Ctrl+\(Character(UnicodeScalar(97 + $0 % 26)!))",
                                               scope: "s\($0 / 12)")
                }, sequenceTimeoutMilliseconds: nil).line.utf8) + [0x0A]
                _ = send(fd, table)
                fds.append(fd)
            }
            while true { for fd in fds { drain(fd) }; usleep(10_000) }
        case "keymaps", "sticky", "run", "garbage", "claims", "others":
            let lines: [[UInt8]]
            switch kind {
            case "keymaps":
                lines = ["us", "de", "fr", "ru", "us,de", "nope1", "nope2", "nope3", "nope4", "nope5"].map {
                    Array(ControlRequest.setKeymap(.init(layout: $0)).line.utf8) + [0x0A]
                }
            case "sticky": lines = [true, false].map { Array(ControlRequest.setStickyKeys($0).line.utf8) + [0x0A] }
            case "run": lines = [Array(ControlRequest.runCommand(id: "flood", table: .system).line.utf8) + [0x0A]]
            case "claims":
                lines = [ControlRequest.setScopes(["editor"]), .setScopes([]), .setTextInput(true), .setTextInput(false), .listCommands].map {
                    Array($0.line.utf8) + [0x0A]
                }
            case "others":
                lines = [ControlRequest.subscribe([.presence, .geometry, .hud, .toolbar]), .ping, .listDevices, .reload, .subscribe([.key])].map {
                    Array($0.line.utf8) + [0x0A]
                }
            default:
                // Malformed on purpose: a 60 KiB line that is not JSON, written by hand.
                lines = [Array(#"{"request":"set_scopes","scopes":["#.utf8) + Array(repeating: UInt8(ascii: "["), count: 60_000) + [0x0A]]
            }
            let fds = (0..<4).map { _ in connectNow() }.filter { $0 >= 0 }
            var i = 0
            while true {
                var alive = false
                for fd in fds where send(fd, lines[i % lines.count]) { alive = true; drain(fd) }
                i += 1
                if !alive { sleep(1) }
            }
        case "churn":
            while true {
                let fd = connectNow()
                if fd >= 0 {
                    _ = send(fd, Array(ControlRequest.ping.line.utf8) + [0x0A])
                    close(fd)
                } else {
                    usleep(1000)
                }
            }
        default:
            break
        }
        exit(0)
    }
}

/// Types Ctrl+S every 5 ms on its own thread, stamping events with CLOCK_MONOTONIC.
final class Typist: @unchecked Sendable {
    // @unchecked: `device` is a FakeDevice (its state is behind a mutex); the thread id is
    // touched only by start/join on the owning thread.
    let device: FakeDevice
    let chords: Int
    private var thread = pthread_t()

    init(device: FakeDevice, chords: Int) {
        self.device = device
        self.chords = chords
    }

    func start() {
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { raw in
            let typist = Unmanaged<Typist>.fromOpaque(raw!).takeRetainedValue()
            for _ in 0..<typist.chords {
                typist.device.keys([("leftctrl", 1), ("s", 1), ("s", 0), ("leftctrl", 0)], at: monotonicNow())
                usleep(5000)
            }
            return nil
        }, context)
    }

    func join() { pthread_join(thread, nil) }
}

/// A log handler that keeps the lines of starts (for cleanup) and counts the bytes logged.
final class CountingLog: Sendable {
    let bytes = Atomic<Int>(0)
    private let started = Mutex<[String]>([])

    func lines() -> [String] { started.withLock { $0 } }

    func logger() -> Logger { Logger(label: "bench") { _ in Handler(log: self) } }

    struct Handler: LogHandler {
        let log: CountingLog
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let text = "\(event.message)"
            log.bytes.add(text.utf8.count + 1, ordering: .relaxed)
            if text.contains("(pid ") { log.started.withLock { $0.append(text) } }
        }
    }
}
