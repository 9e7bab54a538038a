import KbdCore
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 25 item 1, against the real sd-login: `kbd-bench seats` follows logind exactly as
/// the service does (`SystemdLogin`: libsystemd's sd_get_seats, sd_seat_get_active,
/// sd_session_get_uid, an sd_login_monitor in a poll loop), in a private mount namespace
/// whose /run/systemd is a fresh tmpfs. The test writes logind's files there (through
/// /proc/PID/root, renamed into place as logind does) and switches users; the machine's own
/// /run/systemd is never touched (the mount exists only in the child's namespace and goes
/// with it).
@Suite(.serialized)
struct SeatsEndToEndTests {
    static let bench = Paths.builtProduct("kbd-bench")
    /// Root can make a mount namespace; others need a user namespace the kernel may refuse.
    static var canIsolate: Bool { access("/usr/bin/unshare", X_OK) == 0 && access(bench, X_OK) == 0 && geteuid() == 0 }

    /// Waits (up to `seconds`) for the tool's last line to be `expected`: reading several of
    /// logind's files is not atomic, so a switch may show a moment of "active none" first (a
    /// seat's file read before a rename and its session's after it); never another user.
    func settles(_ tool: RunningTool, on expected: String, seconds: Double = 10) -> Bool {
        for _ in 0..<Int(seconds * 50) {
            if tool.stdout.split(separator: "\n").last.map(String.init) == expected { return true }
            usleep(20_000)
        }
        return false
    }

    /// Every state the tool printed, in order.
    func states(_ tool: RunningTool) -> [String] { tool.stdout.split(separator: "\n").map(String.init) }

    /// `kbd-bench seats --changes N` in a private mount namespace whose /run/systemd is a
    /// fresh tmpfs, waiting for the test's go-ahead file; returns it and the simulated
    /// logind's files (under /proc/PID/root), once the mount is there.
    func isolatedSeats(changes: Int) throws -> (tool: RunningTool, files: LogindFiles, root: String) {
        let script = """
            mount -t tmpfs -o mode=0755,size=1m kbd-test-logind /run/systemd || exit 90
            while [ ! -e /run/systemd/go ]; do sleep 0.02; done
            exec "$0" seats --changes \(changes)
            """
        let tool = RunningTool(["-m", "--propagation", "private", "sh", "-c", script, Self.bench], executable: "/usr/bin/unshare")
        let root = "/proc/\(tool.pid)/root/run/systemd"
        // Wait for the child's own mount (another device than the host's /run/systemd).
        var host = stat()
        try #require(stat("/run/systemd", &host) == 0)
        var mounted = false
        for _ in 0..<250 {
            var st = stat()
            if stat(root, &st) == 0, st.st_dev != host.st_dev { mounted = true; break }
            usleep(20_000)
        }
        try #require(mounted, "the child's /run/systemd never became a tmpfs: \(tool.stderr)")
        let files = LogindFiles(root: root)
        try files.boot()
        return (tool, files, root)
    }

    @Test(.enabled(if: canIsolate, "needs root, unshare and kbd-bench"))
    func followsSimulatedLogindThroughSwitches() throws {
        let (tool, files, root) = try isolatedSeats(changes: 100)
        defer {
            if tool.wait(seconds: 0.1) == -1 { _ = tool.wait(seconds: 0) }
        }
        let alice = LogindFiles.Session(id: "1", uid: 1000, user: "alice")
        let bob = LogindFiles.Session(id: "2", uid: 1001, user: "bob")
        let mallory = LogindFiles.Session(id: "3", uid: 1006, user: "mallory", seat: nil)  // an ssh login: no seat
        try files.seat(sessions: [alice, bob, mallory], active: "1")
        _ = creat(root + "/go", 0o644)
        #expect(settles(tool, on: "active seat0=1000"), "\(tool.stdout) \(tool.stderr)")
        try files.seat(sessions: [alice, bob, mallory], active: "2")  // alice switches to bob
        #expect(settles(tool, on: "active seat0=1001"), "\(tool.stdout) \(tool.stderr)")
        try files.seat(sessions: [alice, bob, mallory], active: nil)  // the greeter
        #expect(settles(tool, on: "active none"), "\(tool.stdout) \(tool.stderr)")
        try files.seat("seat1", sessions: [LogindFiles.Session(id: "4", uid: 1002, user: "carol", seat: "seat1")], active: "4")
        #expect(settles(tool, on: "active seat1=1002"), "\(tool.stdout) \(tool.stderr)")
        // Whatever moments of "none" a torn read showed, nobody else was ever at a seat.
        #expect(states(tool).allSatisfy { ["active seat0=1000", "active seat0=1001", "active none", "active seat1=1002"].contains($0) }, "\(tool.stdout)")
        // The host's /run/systemd is as it was: no go-ahead file, no simulated seat.
        #expect(access("/run/systemd/go", F_OK) != 0)
        #expect(access("/run/systemd/seats/seat1", F_OK) != 0)
    }

    /// Issue 33 item 1: logind keeps a logged-out session as the seat's active one, in state
    /// `closing`, while any of its processes lives (Debian's default KillUserProcesses=no), and
    /// rewrites only that session's file. Nobody is at the keyboard then: the next person's
    /// login typed at the prompt must reach no one. A greeter's session (class `greeter`)
    /// does not count either; the user who logs in again does.
    @Test(.enabled(if: canIsolate, "needs root, unshare and kbd-bench"))
    func aClosingSessionLeftActiveOnTheSeatIsNobody() throws {
        let (tool, files, root) = try isolatedSeats(changes: 100)
        defer {
            if tool.wait(seconds: 0.1) == -1 { _ = tool.wait(seconds: 0) }
        }
        var alice = LogindFiles.Session(id: "1", uid: 1000, user: "alice")
        try files.seat(sessions: [alice], active: "1")
        _ = creat(root + "/go", 0o644)
        #expect(settles(tool, on: "active seat0=1000"), "\(tool.stdout) \(tool.stderr)")
        // Alice logs out and leaves a process running: only her session's file changes.
        alice.state = "closing"
        try files.session(alice, active: true)
        #expect(settles(tool, on: "active none"), "\(tool.stdout) \(tool.stderr)")
        // The login prompt's greeter-class session on the seat is nobody either; Bob's login is.
        let greeter = LogindFiles.Session(id: "2", uid: 110, user: "lightdm", sessionClass: "greeter")
        try files.seat(sessions: [alice, greeter], active: "2")
        usleep(200_000)
        #expect(!tool.stdout.contains("seat0=110"), "a greeter counted: \(tool.stdout)")
        #expect(!states(tool).dropFirst().contains("active seat0=1000"), "the closing session counted again: \(tool.stdout)")
        let bob = LogindFiles.Session(id: "3", uid: 1001, user: "bob")
        try files.seat(sessions: [alice, greeter, bob], active: "3")
        #expect(settles(tool, on: "active seat0=1001"), "\(tool.stdout) \(tool.stderr)")
        #expect(!tool.stdout.contains("seat0=110"), "a greeter counted: \(tool.stdout)")
    }

    /// Outside logind (this host has no /run/systemd/system) the real source says why.
    @Test(.enabled(if: access("/run/systemd/system", F_OK) != 0 && access(bench, X_OK) == 0))
    func withoutLogindItSaysWhy() {
        let tool = RunningTool(["seats"], executable: Self.bench)
        #expect(tool.wait(seconds: 10) == 1)
        #expect(tool.stdout.contains("unavailable: the system was not booted with systemd"), "\(tool.stdout)")
    }
}
