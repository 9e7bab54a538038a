import CLinux
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A listening Unix socket standing in for the server, served from the test thread while the
/// real `watch` runs as a process.
final class FakeServer {
    let path: String
    let listener: Int32

    init(path: String) {
        self.path = path
        unlink(path)
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        listen(listener, 4)
    }

    deinit {
        close(listener)
        unlink(path)
    }

    /// The next client, or -1 after `seconds` without one.
    func accept(seconds: Int32 = 10) -> Int32 {
        var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, seconds * 1000) == 1 else { return -1 }
        let fd = Glibc.accept(listener, nil, nil)
        // A client that stops reading fails the test instead of blocking it forever.
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// Reads the client's request line.
    static func readLine(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != 0x0A { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Sends everything it can (the client may hang up first).
    static func send(_ fd: Int32, _ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }
}

/// `watch` trusts only a server run by root, the service's user or the caller, reads a bounded
/// line, and prints only JSON it re-serialized itself (issue 17, D8). Before, it printed whatever
/// the server sent, escape sequences included, and buffered a line without limit.
@Suite(.serialized)
struct WatchEndToEndTests {
    static let hostileEvent = Array(#"{"event":"x","time":1.5,"s":""#.utf8) + [0xC2, 0x9B] + Array("2J".utf8) + [0xE2, 0x80, 0xA8, 0x7F]
        + Array(#"","device":"kbd"}"#.utf8) + [0x0A]

    static func isTerminalSafe(_ text: String) -> Bool {
        !text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 }
    }

    /// Issue 27: one clock in text, seconds since the service started (the subscribe reply's
    /// `started`, on the events' clock), named in the first line; JSON keeps the service's time.
    @Test(arguments: [("text", true), ("text", false), ("json", true)])
    func textTimesAreSinceTheServiceStarted(_ format: String, _ started: Bool) {
        let dir = EndToEndDirectory()
        let server = FakeServer(path: dir.path + "/s")
        let watch = RunningTool(["watch", "--socket", server.path, "--format", format])
        let client = server.accept()
        #expect(FakeServer.readLine(client).hasPrefix(#"{"request":"subscribe""#))
        let reply = started ? #"{"reply":"subscribe","ok":true,"hardware_keyboard":false,"reason":"no keyboard","started":8200.25}"# : #"{"reply":"subscribe","ok":true}"#
        FakeServer.send(client, Array(reply.utf8) + [0x0A])
        FakeServer.send(client, Array(#"{"event":"presence","time":8231.402113,"hardware_keyboard":true,"reason":"external keyboard"}"#.utf8) + [0x0A])
        close(client)
        #expect(watch.wait() == 0)
        let lines = watch.stdout.split(separator: "\n").map(String.init)
        switch (format, started) {
        case ("json", _):
            #expect(lines.last == #"{"event":"presence","time":8231.402113,"hardware_keyboard":true,"reason":"external keyboard"}"#)
            #expect(!watch.stdout.contains("# time"))
        case (_, true):
            #expect(lines.first == "# time: seconds since the service started; then the event and its details (--format json: the service's CLOCK_MONOTONIC, and the subscribe reply's \"started\")")
            #expect(lines.last == "31.152113 presence hardware_keyboard=true reason=external keyboard", "\(lines)")
        default:
            #expect(lines.first == "# time: seconds since boot (the service's CLOCK_MONOTONIC); then the event and its details")
            #expect(lines.last == "8231.402113 presence hardware_keyboard=true reason=external keyboard", "\(lines)")
        }
    }

    @Test(arguments: ["json", "text"])
    func watchEscapesWhatTheServerSends(_ format: String) {
        let dir = EndToEndDirectory()
        let server = FakeServer(path: dir.path + "/s")
        let watch = RunningTool(["watch", "--socket", server.path, "--format", format])
        let client = server.accept()
        #expect(client >= 0)
        #expect(FakeServer.readLine(client).hasPrefix(#"{"request":"subscribe""#))
        FakeServer.send(client, Array(#"{"reply":"subscribe","ok":true}"#.utf8) + [0x0A])
        FakeServer.send(client, Self.hostileEvent)
        FakeServer.send(client, [0x1B] + Array("[2J not JSON".utf8) + [0x0A])
        #expect(watch.wait() == 1)
        close(client)
        let out = watch.stdout
        #expect(Self.isTerminalSafe(out), "\(out.debugDescription)")
        // Text starts with the line that says what its time column is (issue 27).
        #expect(out.split(separator: "\n").count == (format == "json" ? 1 : 2))
        if format == "json" {
            #expect(out == #"{"event":"x","time":1.5,"s":"\u009b2J\u2028\u007f","device":"kbd"}"# + "\n")
        }
        #expect(watch.stderr == "Error: \(server.path): the server sent a line that is not a JSON object; not a kbd-commandd server\n")
    }

    /// `watch --reconnect` waits for a service that is not up yet, prints the state the
    /// subscribe reply carries, and subscribes again after the service restarts (issue 14;
    /// before, watch ended with 0 when the service went away).
    @Test func reconnectWaitsForTheServiceAndSubscribesAgainAfterARestart() {
        let dir = EndToEndDirectory()
        let path = dir.path + "/s"
        let watch = RunningTool(["watch", "--socket", path, "--events", "presence,command", "--format", "json", "--reconnect"])
        usleep(300_000)  // nothing listens yet: watch keeps trying
        var server: FakeServer? = FakeServer(path: path)
        var client = server!.accept()
        #expect(client >= 0)
        #expect(FakeServer.readLine(client) == #"{"request":"subscribe","events":["command","presence"]}"#)
        FakeServer.send(client, Array(#"{"reply":"subscribe","ok":true,"events":["command","presence"],"hardware_keyboard":true,"reason":"external keyboard"}"#.utf8) + [0x0A])
        FakeServer.send(client, Array(#"{"event":"presence","time":2.5,"hardware_keyboard":false,"reason":"tablet mode"}"#.utf8) + [0x0A])
        usleep(200_000)
        // The service restarts: the connection closes, the socket is bound again.
        close(client)
        server = nil
        usleep(300_000)
        server = FakeServer(path: path)
        client = server!.accept()
        #expect(client >= 0)
        #expect(FakeServer.readLine(client).hasPrefix(#"{"request":"subscribe""#))
        FakeServer.send(client, Array(#"{"reply":"subscribe","ok":true,"events":["command","presence"],"hardware_keyboard":false,"reason":"tablet mode"}"#.utf8) + [0x0A])
        usleep(200_000)
        watch.signal(SIGTERM)
        _ = watch.wait()
        close(client)
        #expect(watch.stdout.split(separator: "\n") == [
            #"{"event":"presence","current":true,"hardware_keyboard":true,"reason":"external keyboard"}"#,
            #"{"event":"presence","time":2.5,"hardware_keyboard":false,"reason":"tablet mode"}"#,
            #"{"event":"presence","current":true,"hardware_keyboard":false,"reason":"tablet mode"}"#,
        ])
        #expect(watch.stderr.contains("the service closed the connection; waiting for it"))
        #expect(watch.stderr.contains("reconnected to \(path)"))
    }

    @Test func aRequestReplyIsPrintedAsJSONToo() {
        let dir = EndToEndDirectory()
        let server = FakeServer(path: dir.path + "/s")
        let watch = RunningTool(["watch", "--socket", server.path, "--request", #"{"request":"ping"}"#])
        let client = server.accept()
        #expect(FakeServer.readLine(client) == #"{"request":"ping"}"#)
        // U+009B (CSI on 8-bit terminals) may stand raw in a JSON string; it is printed escaped.
        FakeServer.send(client, Array(#"{"reply":"ping","ok":true,"note":"\#u{9B}2J"}"#.utf8) + [0x0A])
        #expect(watch.wait() == 0)
        close(client)
        #expect(watch.stdout == #"{"reply":"ping","ok":true,"note":"\u009b2J"}"# + "\n")
    }

    @Test func watchBoundsALine() {
        let dir = EndToEndDirectory()
        let server = FakeServer(path: dir.path + "/s")
        let watch = RunningTool(["watch", "--socket", server.path])
        let client = server.accept()
        _ = FakeServer.readLine(client)
        FakeServer.send(client, Array(#"{"reply":"subscribe","ok":true}"#.utf8) + [0x0A])
        // 20 MiB without a line end: watch gives up past 16 MiB (the send then fails).
        FakeServer.send(client, [UInt8](repeating: UInt8(ascii: "a"), count: 20 << 20))
        #expect(watch.wait() == 1)
        close(client)
        #expect(watch.stderr == "Error: \(server.path): the server sent a line longer than 16 MiB; not a kbd-commandd server\n")
    }

    /// With no system socket and no XDG_RUNTIME_DIR, watch does not try a shared temporary
    /// directory, where anyone could have bound a socket first.
    @Test(.enabled(if: access("/run/kbd-commandd/socket", F_OK) != 0))
    func watchNeverFallsBackToTmp() {
        let squatter = FakeServer(path: "/tmp/kbd-commandd.socket")
        let r = runTool(["watch"], environment: ["LANG": "en_US.UTF-8"])
        #expect(r.status == 66)
        #expect(r.stderr.hasPrefix("Error: no control socket: /run/kbd-commandd/socket does not exist and XDG_RUNTIME_DIR is unset"))
        #expect(squatter.accept(seconds: 0) == -1)
    }

    /// A real service run by another user (uid 65534) on `socketDir`/s, from a copy of the build
    /// in the test's 0755 directory: the clone itself may sit in a directory that user cannot
    /// enter (/root, a 0700 Debian home). Stop it with `stop(pid)`.
    static func serviceOfAnotherUser(in dir: EndToEndDirectory, socketDir: String) -> pid_t {
        chmod(dir.path, 0o755)
        let config = dir.write("c.toml", "[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n")
        mkdir(socketDir, 0o700)
        chown(socketDir, 65534, 65534)
        let log = dir.path + "/log"
        let service = dir.copy(Paths.executable, to: "kbd-commandd")
        _ = dir.copy(Paths.builtProduct("kbd-commandd-daemon"), to: "kbd-commandd-daemon")  // what `run` execs
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let words = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", service, "run", "--config", config,
                     "--socket", socketDir + "/s", "--input-dir", "/nonexistent", "--user-agents"]
        let argv = words.map { strdup($0) } + [nil]
        var pid = pid_t()
        #expect(posix_spawn(&pid, words[0], &actions, nil, argv, nil) == 0)
        argv.forEach { free($0) }
        posix_spawn_file_actions_destroy(&actions)
        var ready = false
        for _ in 0..<250 where !ready {
            ready = slurpFile(log).contains("ready: 1 commands")
            if !ready { usleep(20_000) }
        }
        #expect(ready, "\(slurpFile(log))")
        return pid
    }

    /// The service of `serviceOfAnotherUser`, stopped and its socket folder removed by `stop`.
    struct OtherUsersService {
        let pid: pid_t
        let socketDir: String
        init(in dir: EndToEndDirectory, socketDir: String) {
            self.socketDir = socketDir
            pid = WatchEndToEndTests.serviceOfAnotherUser(in: dir, socketDir: socketDir)
        }
        func stop() {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            unlink(socketDir + "/s")
            rmdir(socketDir)
        }
    }

    /// A real service run by another user (uid 65534) on a socket `watch` is pointed at.
    @Test(.enabled(if: geteuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 && getpwnam("kbd-commandd") == nil))
    func watchRefusesAServerOfAnotherUser() throws {
        let dir = EndToEndDirectory()
        let socketDir = dir.path + "/sock"
        let service = OtherUsersService(in: dir, socketDir: socketDir)
        defer { service.stop() }
        let r = runTool(["watch", "--socket", socketDir + "/s", "--request", #"{"request":"ping"}"#])
        #expect(r.status == 1)
        #expect(r.stdout == "")
        #expect(r.stderr == "Error: \(socketDir)/s is served by uid 65534, not by root, kbd-commandd or you (uid 0); not trusting it\n")
    }

    /// Issue 24: the agent, the client that runs programs, did not check who serves the socket:
    /// a server of another uid got its whole table and could make it run the user's commands.
    /// Now it says so once, at WARNING, and sends nothing.
    @Test(.enabled(if: geteuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 && getpwnam("kbd-commandd") == nil))
    func theAgentRefusesAServerOfAnotherUser() throws {
        let dir = EndToEndDirectory()
        let socketDir = dir.path + "/sock"
        let service = OtherUsersService(in: dir, socketDir: socketDir)
        defer { service.stop() }
        let agentConfig = dir.write("agent.toml", "[osk]\nbackend = \"none\"\n\n[[command]]\nid = \"term\"\nkeys = \"Ctrl+Alt+T\"\nrun = [\"/bin/true\"]\n")
        let agent = RunningTool(["agent", "--config", agentConfig, "--socket", socketDir + "/s"],
                                environment: ["HOME": dir.path, "PATH": "/usr/bin:/bin", "LANG": "en_US.UTF-8"])
        #expect(agent.waitFor("not trusting it"))
        usleep(600_000)  // a few more attempts (backoff 100, 200, 400 ms): still said once
        agent.signal(SIGTERM)
        _ = agent.wait()
        let refusal = "\(socketDir)/s is served by uid 65534, not by root, kbd-commandd or you (uid 0); not trusting it; waiting for the real service"
        #expect(agent.stderr.ranges(of: refusal).count == 1, "\(agent.stderr)")
        #expect(!agent.stderr.contains("registered"))
        #expect(!slurpFile(dir.path + "/log").contains("registered"), "the service got the table: \(slurpFile(dir.path + "/log"))")
    }
}
