import KbdJSON
import KbdCore
import KbdKeymap
import KbdCommands
import KbdPipeline
import KbdControl
import KbdProcess
import KbdDaemon
import KbdTestSupport
import Logging
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
        // Past the window in which a running command's output is left unread, then 1 MiB read: paused.
        h.clock.advance(ms: CommandRunner.watchDelayMilliseconds)
        #expect(h.pump(until: { h.daemon.runner.bytesRead > 0 && h.daemon.runner.nextDeadline != nil }))
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

    // MARK: - Issue 29: starting and reaping cheaply

    static func slurpFile(_ path: String) -> String {
        guard let f = fopen(path, "r") else { return "" }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `pid` is gone (reaped: not even a zombie).
    static func gone(_ pid: Int32) -> Bool { kill(pid, 0) == -1 && errno == ESRCH }

    /// With `.polled` (the service's way) a command that exits soon is reaped after a turn of
    /// the loop: no pidfd, no zombie, its slot free.
    @Test func polledCommandsAreReapedWithoutADescriptorEach() throws {
        let h = try DaemonHarness(config: Self.config(#"["/bin/sh", "-c", "exit 0"]"#), childExits: .polled)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        for _ in 1...3 { Self.fire(h, kbd) }
        #expect(h.daemon.runner.started == 3)
        #expect(h.pump(until: { h.daemon.runner.running == 0 }, seconds: 5))
        #expect(h.daemon.runner.pidfdsOpened == 0)
        let pids = Self.pids(h)
        #expect(pids.count == 3)
        #expect(pids.allSatisfy(Self.gone), "\(pids)")
        #expect(h.daemon.runner.openOutputs == 0)
    }

    /// A command still running after the window gets a pidfd then, and is reaped when it exits.
    @Test func aPolledCommandOutlivingTheWindowGetsAPidfd() throws {
        let h = try DaemonHarness(config: Self.config(#"["/bin/sleep", "0.3"]"#), childExits: .polled)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        Self.fire(h, kbd)
        h.pump()
        #expect(h.daemon.runner.running == 1)
        #expect(h.daemon.runner.pidfdsOpened == 0)
        #expect(h.daemon.runner.nextDeadline != nil)
        h.clock.advance(ms: CommandRunner.watchDelayMilliseconds)
        h.pump()
        #expect(h.daemon.runner.pidfdsOpened == 1)
        #expect(h.pump(until: { h.daemon.runner.running == 0 }, seconds: 5))
        #expect(Self.pids(h).allSatisfy(Self.gone))
        #expect(h.daemon.runner.nextDeadline == nil)
    }

    /// One line at info per command: the daemon's (the runner's start and clean exit are at
    /// debug); a failure adds its own line at info.
    @Test(arguments: [CommandRunner.ExitNotice.pidfd, .polled])
    func aCommandIsOneInfoLineAndAFailureTwo(exits: CommandRunner.ExitNotice) throws {
        let h = try DaemonHarness(config: Self.config(#"["/bin/sh", "-c", "exit 0"]"#) + """

            [[command]]
            id = "fails"
            keys = "Ctrl+F"
            run = ["/bin/sh", "-c", "exit 3"]
            """, childExits: exits)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        Self.fire(h, kbd)
        h.type(kbd, [("leftctrl", 1), ("f", 1), ("f", 0), ("leftctrl", 0)])
        #expect(h.pump(until: { h.daemon.runner.started == 2 && h.daemon.runner.running == 0 }, seconds: 5))
        let info = h.logs.all.filter { $0.hasPrefix("info command ") }
        #expect(info.filter { $0.hasPrefix("info command child ") }.count == 1, "\(info)")
        #expect(info.filter { $0.hasPrefix("info command fails ") }.count == 2, "\(info)")
        #expect(info.contains { $0.hasPrefix("info command fails [") && $0.hasSuffix("]: finished, exit status 3") }, "\(info)")
        #expect(h.logs.all.contains { $0.hasPrefix("debug command child [") && $0.hasSuffix("]: finished, exit status 0") })
    }

    /// The output pipe exists only when the output goes somewhere: with the log above info the
    /// child's stdout and stderr are /dev/null, and no descriptor is kept for it.
    @Test func withoutTheLogAtInfoTheOutputGoesToDevNull() throws {
        let logs = LogCollector()
        var logger = logs.makeLogger()
        logger.logLevel = .warning
        let runner = CommandRunner(logger: logger, exitNotice: .sigchld)
        let file = "/tmp/kbd-runner-out-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(file) }
        let pid = runner.run(["/bin/sh", "-c", "echo $(readlink /proc/$$/fd/1) $(readlink /proc/$$/fd/2) > \(file)"], commandID: "quiet")
        #expect(pid != nil)
        #expect(runner.openOutputs == 0)
        for _ in 0..<250 where runner.running > 0 {
            runner.reap()
            usleep(20_000)
        }
        #expect(runner.running == 0)
        #expect(Self.slurpFile(file) == "/dev/null /dev/null\n")
        #expect(pid.map(Self.gone) == true)
    }

    /// Signals the service ignores (SIGPIPE, say) are back to their default in the child; its
    /// signal mask is empty.
    @Test func childrenStartWithDefaultSignals() throws {
        let previous = signal(SIGUSR2, SIG_IGN)
        defer { signal(SIGUSR2, previous) }
        let h = try DaemonHarness(config: Self.config(#"["/bin/sh", "-c", "exec grep -E '^Sig(Ign|Blk)' /proc/self/status"]"#))
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        Self.fire(h, kbd)
        #expect(h.pump(until: { h.daemon.runner.running == 0 && h.daemon.runner.openOutputs == 0 }, seconds: 5))
        let lines = Self.childLines(h).compactMap { line in line.firstRange(of: "]: ").map { String(line[$0.upperBound...]) } }
        #expect(lines.sorted() == ["SigBlk:\t0000000000000000", "SigIgn:\t0000000000000000"], "\(lines)")
    }

    /// A bare program name is looked up in the service's PATH (as posix_spawnp did); a name
    /// found nowhere is a failed start with the reason, and no child is left.
    @Test func bareNamesAreLookedUpInPath() throws {
        let h = try DaemonHarness(config: Self.config(#"["sh", "-c", "echo found"]"#) + """

            [[command]]
            id = "nowhere"
            keys = "Ctrl+F"
            run = ["kbd-no-such-program"]
            """)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        Self.fire(h, kbd)
        h.type(kbd, [("leftctrl", 1), ("f", 1), ("f", 0), ("leftctrl", 0)])
        #expect(h.pump(until: { h.daemon.runner.running == 0 && h.daemon.runner.openOutputs == 0 }, seconds: 5))
        #expect(Self.childLines(h).contains { $0.hasSuffix("]: found") })
        #expect(h.daemon.runner.failedToStart == 1)
        #expect(h.logs.all.contains { $0.hasPrefix("error command nowhere: cannot start 'kbd-no-such-program'") && $0.contains("No such file or directory") },
                "\(h.logs.all.filter { $0.contains("nowhere") })")
    }
}
