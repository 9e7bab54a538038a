import KbdCore
import KbdSystem
import KbdProcess
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 35: the event loop's typed registrations, named timers on one (manual) clock, a
/// signal through its signalfd and a rename in its watched directory.
@Suite struct EventLoopTests {
    enum Registration: Hashable, Sendable { case pipe(Int), other }
    enum Timer: Hashable, Sendable { case reconnect, hooks, pipeline }

    /// A clock the test moves by hand.
    final class ManualClock: @unchecked Sendable {
        var now = EventTime(microseconds: 1_000_000)
        func advance(milliseconds: Int) { now = now.adding(milliseconds: milliseconds) }
    }

    typealias Loop = EventLoop<Registration, Timer>

    func collect(_ loop: Loop, maxWait: Int = 0) -> [Loop.Event] {
        var seen: [Loop.Event] = []
        loop.runOnce(maxWait: maxWait) { seen.append($0) }
        return seen
    }

    func timerNames(_ events: [Loop.Event]) -> [Timer] {
        events.compactMap { if case .timer(let name) = $0 { name } else { nil } }
    }

    @Test func timersFireInDeadlineOrderOnTheManualClock() throws {
        let clock = ManualClock()
        let loop = try Loop(clock: { clock.now })
        let start = clock.now
        loop.timers.arm(.pipeline, at: start.adding(milliseconds: 300))
        loop.timers.arm(.reconnect, at: start.adding(milliseconds: 100))
        loop.timers.arm(.hooks, at: start.adding(milliseconds: 200))
        #expect(loop.timers.nextDeadline == start.adding(milliseconds: 100))
        #expect(loop.waitMilliseconds() == 100)
        #expect(timerNames(collect(loop)).isEmpty)  // nothing due yet
        clock.advance(milliseconds: 250)
        #expect(timerNames(collect(loop)) == [.reconnect, .hooks])
        #expect(loop.timers.nextDeadline == start.adding(milliseconds: 300))
        clock.advance(milliseconds: 100)
        #expect(timerNames(collect(loop)) == [.pipeline])
        #expect(loop.timers.isEmpty)
        #expect(loop.waitMilliseconds() == -1)  // nothing armed: sleep until input
        #expect(loop.waitMilliseconds(maxWait: 5) == 5)
    }

    @Test func aCancelledTimerDoesNotFireAndReArmingMovesIt() throws {
        let clock = ManualClock()
        let loop = try Loop(clock: { clock.now })
        loop.timers.arm(.reconnect, at: clock.now.adding(milliseconds: 10))
        loop.timers.arm(.hooks, at: clock.now.adding(milliseconds: 20))
        loop.timers.cancel(.reconnect)
        loop.timers.arm(.hooks, at: clock.now.adding(milliseconds: 50))
        loop.timers.arm(.pipeline, at: nil)  // nil: not armed
        clock.advance(milliseconds: 30)
        #expect(timerNames(collect(loop)).isEmpty)
        clock.advance(milliseconds: 30)
        #expect(timerNames(collect(loop)) == [.hooks])
    }

    @Test func timersDueTogetherFireInTheOrderArmed() {
        var set = TimerSet<Timer>()
        let t = EventTime(microseconds: 5000)
        set.arm(.pipeline, at: t)
        set.arm(.reconnect, at: t)
        set.arm(.hooks, at: t.adding(milliseconds: -1))
        #expect(set.takeDue(at: t) == [.hooks, .pipeline, .reconnect])
        #expect(set.takeDue(at: t).isEmpty)
    }

    /// The daemon's use: its timers follow deadlines that the turn's input moves. Armed again
    /// between the ready descriptors and the timers, a deadline the input made due fires in
    /// the same turn, after the input; one moved later does not fire.
    @Test func deadlinesMovedByTheTurnsInputAreArmedBeforeItsTimers() throws {
        let clock = ManualClock()
        let loop = try Loop(clock: { clock.now })
        var a: [Int32] = [0, 0]
        #expect(pipe(&a) == 0)
        defer { for fd in a { close(fd) } }
        try loop.watch(a[0], as: .pipe(1))
        var pipelineDeadline: EventTime? = clock.now.adding(milliseconds: 500)
        var hooksDeadline: EventTime? = clock.now.adding(milliseconds: -1)
        func arm() {
            loop.timers.arm(.pipeline, at: pipelineDeadline)
            loop.timers.arm(.hooks, at: hooksDeadline)
        }
        arm()
        _ = write(a[1], "x", 1)
        var seen: [Loop.Event] = []
        loop.runOnce(maxWait: 0, beforeTimers: arm) { event in
            seen.append(event)
            if case .ready = event {
                var byte: UInt8 = 0
                _ = read(a[0], &byte, 1)
                // The input makes the pipeline's deadline due now and moves the hooks' later.
                pipelineDeadline = clock.now
                hooksDeadline = clock.now.adding(milliseconds: 100)
            }
        }
        guard seen.count == 2, case .ready(.pipe(1), _) = seen[0], case .timer(.pipeline) = seen[1] else {
            Issue.record("\(seen)")
            return
        }
        #expect(loop.timers.deadline(of: .hooks) == clock.now.adding(milliseconds: 100))
        #expect(loop.waitMilliseconds() == 100)
    }

    @Test func aReadyDescriptorIsHandedToItsRegistration() throws {
        let loop = try Loop()
        var a: [Int32] = [0, 0], b: [Int32] = [0, 0]
        let madeA = pipe(&a), madeB = pipe(&b)
        #expect(madeA == 0 && madeB == 0)
        defer { for fd in a + b { close(fd) } }
        try loop.watch(a[0], as: .pipe(7))
        try loop.watch(b[0], as: .other)
        #expect(loop.registration(of: a[0]) == .pipe(7))
        _ = write(a[1], "x", 1)
        let events = collect(loop)
        #expect(events.count == 1)
        guard case .ready(.pipe(7), let bits)? = events.first else { Issue.record("\(events)"); return }
        #expect(bits & Epoll.readable != 0)
        // Unwatched: its readiness is no longer handed over.
        loop.unwatch(a[0])
        #expect(collect(loop).isEmpty)
        #expect(loop.watchedCount == 1)
    }

    @Test func inputFirstRegistrationsAreHandedOverFirst() throws {
        let loop = try Loop(inputFirst: { $0 == .other })
        var a: [Int32] = [0, 0], b: [Int32] = [0, 0]
        let madeA = pipe(&a), madeB = pipe(&b)
        #expect(madeA == 0 && madeB == 0)
        defer { for fd in a + b { close(fd) } }
        try loop.watch(a[0], as: .pipe(1))
        try loop.watch(b[0], as: .other)
        _ = write(a[1], "x", 1)
        _ = write(b[1], "y", 1)
        let events = collect(loop)
        guard events.count == 2, case .ready(.other, _) = events[0], case .ready(.pipe(1), _) = events[1] else {
            Issue.record("\(events)")
            return
        }
    }

    @Test func aSignalIsDeliveredThroughTheSignalDescriptor() throws {
        let loop = try Loop()
        try loop.handleSignals([SIGUSR2])
        // Thread-directed: blocked on this thread, so it waits for the loop's signalfd.
        pthread_kill(pthread_self(), SIGUSR2)
        let events = collect(loop, maxWait: 1000)
        guard case .signal(let number)? = events.first else { Issue.record("\(events)"); return }
        #expect(number == SIGUSR2)
        #expect(throws: SystemError.self) { try loop.handleSignals([SIGUSR1]) }  // one signal set
    }

    @Test func aRenameInTheWatchedDirectoryIsSeen() throws {
        var template = Array("/tmp/kbd-loop-XXXXXX".utf8CString)
        let directory = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) })
        defer {
            unlink(directory + "/config.toml")
            unlink(directory + "/.config.toml.swp")
            rmdir(directory)
        }
        let loop = try Loop()
        try loop.watchDirectory(directory)
        #expect(collect(loop).isEmpty)
        let temporary = directory + "/.config.toml.swp"
        let fd = open(temporary, O_WRONLY | O_CREAT, 0o600)
        close(fd)
        _ = collect(loop)  // the editor's temporary file
        #expect(rename(temporary, directory + "/config.toml") == 0)
        let events = collect(loop, maxWait: 1000)
        guard case .directoryChanged(let names)? = events.first else { Issue.record("\(events)"); return }
        #expect(names.contains("config.toml"))
    }
}
