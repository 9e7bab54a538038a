import HardwareInput
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The command runner against hostile children: endless output, a flood without
/// newlines, background grandchildren holding the pipe, and what children inherit.
@Suite(.serialized)
struct RunnerTests {
    static func config(_ run: String) -> String {
        """
        [[command]]
        id = "save"
        keys = "Ctrl+S"

        [[command]]
        id = "child"
        keys = "Ctrl+B"
        run = \(run)
        """
    }

    static func fire(_ h: DaemonHarness, _ kbd: FakeDevice) {
        h.type(kbd, [("leftctrl", 1), ("b", 1), ("b", 0), ("leftctrl", 0)])
    }

    /// Lines the child wrote, as logged ("command child [pid]: …").
    static func childLines(_ h: DaemonHarness) -> [String] {
        h.logs.all.filter { $0.contains("command child [") && !$0.contains("]: finished,") }
    }

    static func pids(_ h: DaemonHarness) -> [Int32] {
        h.logs.all.compactMap { line -> Int32? in
            guard let r = line.firstRange(of: "(pid ") else { return nil }
            return Int32(line[r.upperBound...].prefix { $0.isNumber })
        }
    }

    @Test func aBackgroundGrandchildDoesNotHoldASlot() throws {
        let h = try DaemonHarness(config: Self.config(#"["/bin/sh", "-c", "sleep 30 & echo started"]"#), maxChildren: 2)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        defer { for pid in Self.pids(h) { kill(-pid, SIGKILL) } }
        for i in 1...5 {
            Self.fire(h, kbd)
            #expect(h.pump(until: { h.logs.all.filter { $0.contains("finished, exit status 0") }.count == i }, seconds: 3))
        }
        #expect(h.daemon.runner.started == 5)
        #expect(h.daemon.runner.refused == 0)
        #expect(h.daemon.runner.running == 0)
        #expect(Self.childLines(h).filter { $0.hasSuffix(": started") }.count == 5)
    }

    /// 4 MB of short lines, and 4 MB of NUL bytes without a newline (the red team's 50 MB
    /// of NULs became 250 MB of log).
    @Test(arguments: [#"["/bin/sh", "-c", "yes | head -c 4000000; echo done"]"#, #"["/bin/sh", "-c", "head -c 4000000 /dev/zero; echo done"]"#])
    func aFloodOfOutputIsLoggedInBoundedLinesWithASummary(run: String) throws {
        let h = try DaemonHarness(config: Self.config(run))
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        Self.fire(h, kbd)
        // Run until the process is reaped and its output read to the end; time moves only
        // when the output is paused at 1 MiB/s (then to the end of that second).
        var rounds = 0
        let start = h.clock.now
        while h.daemon.runner.running > 0 || h.daemon.runner.openOutputs > 0, rounds < 20_000 {
            h.daemon.runOnce(maxWaitMilliseconds: 5)
            if let resume = h.daemon.runner.nextDeadline { h.clock.now = resume }
            rounds += 1
        }
        let seconds = Int((h.clock.now.microseconds - start.microseconds) / 1_000_000) + 1
        #expect(h.logs.all.contains { $0.contains("finished, exit status 0") })
        #expect(seconds >= 3)  // 4 MB at 1 MiB/s: the child waited instead of flooding
        let lines = Self.childLines(h)
        // The burst, then 10 lines a second, plus a summary a second.
        #expect(lines.count <= 50 + 11 * seconds, "\(lines.suffix(4).map { String($0.prefix(120)) })")
        #expect(lines.reduce(0) { $0 + $1.utf8.count } <= 64 * 1024)
        if run.contains("yes") {
            // Two million lines: the burst and 10 a second are logged, the rest summarised.
            #expect(lines.contains { $0.contains("of output not logged (rate limit)") })
        } else {
            // One endless line: logged in pieces of at most 512 bytes, each saying what was cut.
            #expect(lines.filter { $0.contains("more bytes)") }.count >= 50)
        }
        #expect(h.daemon.runner.largestReadPerWakeup <= 65536)
    }

    @Test(.timeLimit(.minutes(1)))
    func anEndlessChildNeitherStallsTheLoopNorTheChords() throws {
        let h = try DaemonHarness(config: Self.config(#"["yes"]"#))
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        Self.fire(h, kbd)
        defer { h.daemon.runner.stopAll() }
        #expect(h.pump(until: { h.daemon.runner.nextDeadline != nil }))  // 1 MiB read: paused
        h.pump(100)
        h.type(kbd, [("leftctrl", 1), ("s", 1), ("s", 0), ("leftctrl", 0)])
        #expect(h.commandIDs == ["child", "save"])
        #expect(Self.childLines(h).count <= 60)
        // Paused, nothing more is read until the second is over.
        let reads = h.daemon.runner.bytesRead
        h.pump(50)
        #expect(h.daemon.runner.bytesRead == reads)
        #expect(reads <= (1 << 20) + 65536)
        h.clock.advance(ms: 1000)
        #expect(h.pump(until: { h.daemon.runner.bytesRead > reads }))
    }

    @Test func childrenInheritNoDescriptors() throws {
        let leaked = open("/dev/null", O_RDONLY)  // deliberately without O_CLOEXEC
        defer { close(leaked) }
        let h = try DaemonHarness(config: Self.config(#"["/bin/sh", "-c", "ls /proc/self/fd"]"#))
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        Self.fire(h, kbd)
        #expect(h.pump(until: { h.logs.all.contains { $0.contains("finished, exit status 0") } }))
        let fds = Set(Self.childLines(h).compactMap { $0.split(separator: " ").last.flatMap { Int32($0) } })
        #expect(!fds.contains(leaked))
        #expect(fds.isSubset(of: [0, 1, 2, 3]))
    }

    @Test func childrenGetTheAllowListedEnvironment() throws {
        setenv("KBD_TEST_MARKER_\(getpid())", "x", 1)
        let h = try DaemonHarness(config: Self.config(#"["/usr/bin/env"]"#), childEnvironment: ["PATH=/usr/bin:/bin"])
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        Self.fire(h, kbd)
        #expect(h.pump(until: { h.logs.all.contains { $0.contains("finished, exit status 0") } }))
        let variables = Self.childLines(h).compactMap { line in line.firstRange(of: "]: ").map { String(line[$0.upperBound...]) } }
        #expect(variables.sorted() == ["KBD_COMMAND_ID=child", "PATH=/usr/bin:/bin"])
    }
}
