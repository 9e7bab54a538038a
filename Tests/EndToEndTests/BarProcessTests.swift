import KbdTestSupport
import KbdCore
import KbdSystem
@testable import KbdAgent
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The agent's shortcuts bar after it ends: a crash is followed by a new bar after 1 s, the
/// wait doubling while it keeps crashing soon after its start and back to 1 s once a bar has
/// lasted 30 s; "cannot show here" (69) and `stop` start nothing again. Real child processes:
/// the bar is a script beside a stand-in of the agent's binary that exits as told.
@Suite(.serialized)
struct BarProcessRestartTests {
    let dir = EndToEndDirectory()
    let clock = ManualClock()
    let log = LogCollector()

    /// A bar that exits with `status` at once.
    func bar(exiting status: Int32) -> BarProcess {
        _ = dir.write(BarProcess.binaryName, "#!/bin/sh\nexit \(status)\n", mode: 0o755)
        let clock = self.clock
        return BarProcess(logger: log.makeLogger(), executableDirectory: dir.path, clock: { clock.now })
    }

    /// Waits (up to 5 s) for the bar to end and reaps it, as the agent does on SIGCHLD.
    func reapWhenEnded(_ bar: BarProcess) {
        for _ in 0..<500 where bar.pid > 0 {
            usleep(10_000)
            bar.reap()
        }
        #expect(bar.pid == 0, "the bar stand-in did not end")
    }

    func starts(_ bar: BarProcess) -> Int { log.all.filter { $0.contains("bar: started ") }.count }

    @Test func aCrashedBarStartsAgainWithAGrowingWaitThatStartsOverAfterItLasted() {
        let bar = bar(exiting: 3)
        bar.update(enabled: true, socketPath: dir.path + "/s", configPath: dir.path + "/c")
        #expect(bar.pid > 0)
        reapWhenEnded(bar)
        #expect(bar.restartDue == clock.now.adding(milliseconds: 1000))
        #expect(log.all.contains { $0.hasPrefix("warning") && $0.contains("ended (exit status 3); starting it again in 1 s") }, "\(log.all)")

        // Not before its time.
        clock.advance(ms: 999)
        bar.restartIfDue()
        #expect(bar.pid == 0 && starts(bar) == 1)
        clock.advance(ms: 1)
        bar.restartIfDue()
        #expect(bar.pid > 0 && starts(bar) == 2)
        #expect(bar.restartDue == nil)

        // Ended again soon after its start: twice the wait, then four times.
        reapWhenEnded(bar)
        #expect(bar.restartDue == clock.now.adding(milliseconds: 2000))
        clock.advance(ms: 2000)
        bar.restartIfDue()
        reapWhenEnded(bar)
        #expect(bar.restartDue == clock.now.adding(milliseconds: 4000))
        #expect(log.all.contains { $0.contains("starting it again in 4 s") })

        // A bar that lasted 30 s: the next crash waits 1 s again.
        clock.advance(ms: 4000)
        bar.restartIfDue()
        clock.advance(ms: 30_000)
        reapWhenEnded(bar)
        #expect(bar.restartDue == clock.now.adding(milliseconds: 1000))

        // Stopped (the agent ends, or `[bar] enabled = false`): nothing starts it again.
        bar.update(enabled: false, socketPath: dir.path + "/s", configPath: dir.path + "/c")
        #expect(bar.restartDue == nil)
        clock.advance(ms: 60_000)
        bar.restartIfDue()
        #expect(bar.pid == 0 && starts(bar) == 4)
    }

    /// Found by the system stage (issue 34): an agent started while the service was down
    /// picked the user's socket path, found the system socket later, but its bar kept waiting
    /// at the old path (nothing drawn). A new socket path starts the bar again with it; the
    /// same path leaves the running bar alone.
    @Test func aBarOfAnotherSocketIsStartedAgainWithTheNewOne() {
        _ = dir.write(BarProcess.binaryName, "#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/args.$$\"\nexec sleep 30\n", mode: 0o755)
        let clock = self.clock
        let bar = BarProcess(logger: log.makeLogger(), executableDirectory: dir.path, clock: { clock.now })
        defer { bar.stop() }
        bar.update(enabled: nil, socketPath: "/run/user/1000/kbd-commandd.socket", configPath: dir.path + "/c")
        let first = bar.pid
        #expect(first > 0)
        bar.update(enabled: nil, socketPath: "/run/user/1000/kbd-commandd.socket", configPath: dir.path + "/c")
        #expect(bar.pid == first && starts(bar) == 1)
        bar.update(enabled: nil, socketPath: "/run/kbd-commandd/socket", configPath: dir.path + "/c")
        #expect(bar.pid > 0 && bar.pid != first && starts(bar) == 2)
        #expect(log.all.contains { $0.contains("the service's socket is /run/kbd-commandd/socket now; starting the bar again") })
        var argv = ""
        for _ in 0..<200 where !argv.contains("--socket") {
            usleep(10_000)
            argv = (try? String(decoding: readWholeFile(path: dir.path + "/args.\(bar.pid)", limit: 4096), as: UTF8.self)) ?? ""
        }
        #expect(argv.contains("--socket /run/kbd-commandd/socket"), "\(argv)")
    }

    @Test func theWaitStopsGrowingAtAMinute() {
        let bar = bar(exiting: 1)
        bar.update(enabled: nil, socketPath: dir.path + "/s", configPath: dir.path + "/c")
        var waits: [Int64] = []
        for _ in 0..<9 {
            reapWhenEnded(bar)
            guard let due = bar.restartDue else { break }
            waits.append((due.microseconds - clock.now.microseconds) / 1000)
            clock.now = due
            bar.restartIfDue()
        }
        bar.stop()
        #expect(waits == [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000])
    }

    @Test func aBarThatCannotShowHereIsNotStartedAgain() {
        let bar = bar(exiting: BarProcess.unavailableStatus)
        bar.update(enabled: nil, socketPath: dir.path + "/s", configPath: dir.path + "/c")
        reapWhenEnded(bar)
        #expect(bar.restartDue == nil)
        bar.update(enabled: nil, socketPath: dir.path + "/s", configPath: dir.path + "/c")
        #expect(bar.pid == 0 && starts(bar) == 1)
        #expect(log.all.contains { $0.contains("not started again") })
    }
}
