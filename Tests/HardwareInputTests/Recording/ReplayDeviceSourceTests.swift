import KbdJSON
import KbdTOML
import KbdSystem
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdRecording
import KbdEvdev
import KbdControl
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Recordings as the service's devices (`run --replay`): attach at the first event, events when
/// they are due on the daemon's clock, detach after the last; several files on one timeline.
struct ReplayDeviceSourceTests {
    static let ctrlAltF1 = Fixtures.recording("cros-autotest--keyboard_ctrl+alt+f1.events-only.evemu")

    static func events(of path: String) throws -> [InputEvent] {
        let reader = try EvemuReader(path: path)
        var out: [InputEvent] = []
        while let e = try reader.next() { out.append(e) }
        return out
    }

    @Test func attachesAtItsFirstEventPlaysEachWhenDueAndDetachesAfterTheLast() throws {
        let clock = ManualClock()
        let start = clock.now
        let source = try ReplayDeviceSource(paths: [Self.ctrlAltF1], startDelayMilliseconds: 100, clock: { clock.now })
        // Nothing plays before the daemon starts watching.
        #expect(source.scan().isEmpty)
        #expect(source.readHotplug() == ([], []))
        #expect(source.nextHotplug == nil)

        #expect(source.startWatching())
        let attach = start.adding(milliseconds: 100)
        let recorded = try Self.events(of: Self.ctrlAltF1)
        let offset = attach.microseconds - recorded[0].time.microseconds
        #expect(source.schedule(of: 0)! == (attach, EventTime(microseconds: recorded.last!.time.microseconds + offset)))
        #expect(source.nextHotplug == attach)
        #expect(source.scan().isEmpty)
        clock.advance(ms: 99)
        #expect(source.readHotplug() == ([], []))
        clock.advance(ms: 1)
        #expect(source.readHotplug() == ([Self.ctrlAltF1], []))
        // Announced once: neither a scan nor another hotplug read reports it again.
        #expect(source.scan().isEmpty)
        #expect(source.readHotplug() == ([], []))
        // Until it is opened, the hotplug timer waits for its end (to remove it if it never is).
        #expect(source.nextHotplug == source.schedule(of: 0)!.end)

        let device = try #require(try source.open(Self.ctrlAltF1) as? ReplayDevice)
        #expect(source.nextHotplug == nil)
        #expect(device.description == .genericKeyboard(name: "cros-autotest--keyboard_ctrl+alt+f1.events-only.evemu"))
        #expect(device.nextDue == attach)
        #expect(throws: SystemError.self) { try source.open(Self.ctrlAltF1) }

        // Each group of events when it is due, stamped with that time; nothing early.
        var played: [InputEvent] = []
        var reads = 0
        var status = DeviceReadStatus.drained
        while status == .drained {
            let due = try #require(device.nextDue)
            clock.now = EventTime(microseconds: due.microseconds - 1)
            var early: [InputEvent] = []
            #expect(device.read(into: &early) == .drained && early.isEmpty)
            #expect(device.nextDue == due)
            clock.now = due
            var batch: [InputEvent] = []
            status = device.read(into: &batch)
            reads += 1
            #expect(!batch.isEmpty && batch.allSatisfy { $0.time == due })
            played += batch
        }
        #expect(status == .gone)
        #expect(reads == 6)  // six distinct times: Ctrl, Alt, F1 down, then up
        #expect(played.map { InputEvent(time: EventTime(microseconds: $0.time.microseconds - offset), type: $0.type, code: $0.code, value: $0.value) }
                == recorded)
        #expect(device.nextDue == nil)
        #expect(device.keysDown().isEmpty)
        var after: [InputEvent] = []
        #expect(device.read(into: &after) == .gone && after.isEmpty)
        #expect(source.nextHotplug == nil)
    }

    @Test func keysDownFollowThePlayedEvents() throws {
        let clock = ManualClock()
        let source = try ReplayDeviceSource(paths: [Self.ctrlAltF1], startDelayMilliseconds: 0, clock: { clock.now })
        _ = source.startWatching()
        #expect(source.scan() == [Self.ctrlAltF1])
        let device = try source.open(Self.ctrlAltF1)
        var events: [InputEvent] = []
        clock.advance(ms: 400)  // Ctrl at 0 ms and Alt at 184 ms are down, F1 (416.027 ms) not yet
        _ = device.read(into: &events)
        #expect(device.keysDown() == [29, 56])
        clock.advance(ms: 17)
        _ = device.read(into: &events)
        #expect(device.keysDown() == [29, 56, 59])
    }

    @Test func finishesOnceEveryDeviceIsLetGoAndThenHoldsNoTimer() throws {
        let clock = ManualClock()
        let source = try ReplayDeviceSource(paths: [Self.ctrlAltF1], startDelayMilliseconds: 0, clock: { clock.now })
        var finished = 0
        source.onFinished = { finished += 1 }
        _ = source.startWatching()
        var device: (any InputDevice)? = try source.open(source.scan()[0])
        clock.advance(ms: 10_000)
        var events: [InputEvent] = []
        #expect(device!.read(into: &events) == .gone)
        #expect(events.count == 18)
        // Its detach is the daemon's to log: finished only once the device is let go.
        #expect(finished == 0)
        device = nil
        #expect(finished == 1 && source.isFinished)
        #expect(source.nextHotplug == nil)
        #expect(source.readHotplug() == ([], []))
        #expect(finished == 1)
    }

    /// The files keep their places on their common timeline, exactly as `replay` merges them.
    @Test func severalFilesShareOneTimelineAsReplayMergesThem() throws {
        let files = ["evemu-devices--logitech-k400-plus.evemu", "evemu-devices--ms-surface-type-cover.evemu",
                     "evemu-devices--lenovo-tp-compact-usb-kbd.keyboard.evemu"].map(Fixtures.recording)
        // The merge of `kbd-commandd replay`: attach times and each device's events.
        let merged = try RecordingSource(paths: files)
        var attachAt: [Int: EventTime] = [:]
        var detachAt: [Int: EventTime] = [:]
        var expected: [Int: [InputEvent]] = [:]
        while let e = try merged.next() {
            switch e {
            case .attached(let id, _, _, let time): attachAt[id.rawValue] = time
            case .detached(let id, let time): detachAt[id.rawValue] = time
            case .input(let id, let event): expected[id.rawValue, default: []].append(event)
            default: break
            }
        }

        let clock = ManualClock()
        let source = try ReplayDeviceSource(paths: files, startDelayMilliseconds: 100, clock: { clock.now })
        _ = source.startWatching()
        // The surface cover's first event (0.000000) is the earliest: it plays 100 ms after the start.
        #expect(source.schedule(of: 1)!.attach == clock.now.adding(milliseconds: 100))
        let offset = source.schedule(of: 1)!.attach.microseconds - attachAt[1]!.microseconds
        for i in 0..<3 {
            #expect(source.schedule(of: i)!.attach.microseconds - offset == attachAt[i]!.microseconds)
            #expect(source.schedule(of: i)!.end.microseconds - offset == detachAt[i]!.microseconds)
        }

        // A loop like the daemon's, on the manual clock: jump to the next timer, handle what is due.
        var devices: [Int: any InputDevice] = [:]
        var played: [Int: [InputEvent]] = [:]
        var attachedAt: [Int: EventTime] = [:]
        var detachedAt: [Int: EventTime] = [:]
        var attachOrder: [String] = []
        var wakeups = 0
        while true {
            let timers = ([source.nextHotplug] + devices.values.map { ($0 as! ReplayDevice).nextDue }).compactMap { $0 }
            guard let next = timers.min() else { break }
            clock.now = max(clock.now, next)
            wakeups += 1
            for (i, device) in devices.sorted(by: { $0.key < $1.key }) where (device as! ReplayDevice).nextDue.map({ $0 <= clock.now }) == true {
                var batch: [InputEvent] = []
                let status = device.read(into: &batch)
                played[i, default: []] += batch
                if status == .gone {
                    detachedAt[i] = clock.now
                    devices[i] = nil
                }
            }
            if let due = source.nextHotplug, due <= clock.now {
                let (added, removed) = source.readHotplug()
                #expect(removed.isEmpty)
                for path in added {
                    let i = files.firstIndex(of: path)!
                    devices[i] = try source.open(path)
                    attachedAt[i] = clock.now
                    attachOrder.append(path)
                }
            }
        }
        #expect(source.isFinished)
        #expect(attachOrder == [files[1], files[0], files[2]])  // 0.000000, then both at 0.000001 in file order
        for i in 0..<3 {
            #expect(attachedAt[i]!.microseconds - offset == attachAt[i]!.microseconds)
            #expect(detachedAt[i]!.microseconds - offset == detachAt[i]!.microseconds)
            #expect(played[i]!.map { InputEvent(time: EventTime(microseconds: $0.time.microseconds - offset), type: $0.type, code: $0.code, value: $0.value) }
                    == expected[i]!)
        }
        // One wake-up per distinct event time, one more per attach (the new device's first
        // events are read in the turn after), none in between.
        var times = Set<Int64>()
        for i in 0..<3 { for e in expected[i]! { times.insert(e.time.microseconds) } }
        #expect(wakeups == times.count + Set(attachAt.values).count)
    }

    /// A recording the daemon did not keep (a mouse) is removed at its last event, as an unplugged node.
    @Test func aRecordingThatIsNotKeptIsRemovedAtItsEnd() throws {
        let mouse = Fixtures.recording("evemu-devices--logitech-ultrathin-touch-mouse.evemu")
        let clock = ManualClock()
        let source = try ReplayDeviceSource(paths: [mouse], startDelayMilliseconds: 0, clock: { clock.now })
        var finished = false
        source.onFinished = { finished = true }
        _ = source.startWatching()
        #expect(source.scan() == [mouse])
        do {
            let device = try source.open(mouse)
            #expect(device.description.name == "Ultrathin Touch Mouse")
        }  // let go at once, as the daemon does with a non-keyboard
        let end = try #require(source.schedule(of: 0)?.end)
        #expect(source.nextHotplug == end)
        clock.now = EventTime(microseconds: end.microseconds - 1)
        #expect(source.readHotplug() == ([], []))
        #expect(!finished)
        clock.now = end
        #expect(source.readHotplug() == ([], [mouse]))
        #expect(finished && source.nextHotplug == nil)
    }

    @Test func aRecordingWithoutEventsAttachesAndDetachesAtTheStart() throws {
        let razer = Fixtures.recording("evemu-devices--razer-blackwidow-2013.keyboard.desc.evemu")
        let clock = ManualClock()
        let source = try ReplayDeviceSource(paths: [Self.ctrlAltF1, razer], startDelayMilliseconds: 50, clock: { clock.now })
        _ = source.startWatching()
        clock.advance(ms: 50)
        #expect(source.readHotplug() == ([Self.ctrlAltF1, razer], []))
        let device = try source.open(razer)
        #expect(device.description.name == "Razer Razer BlackWidow 2013")
        var events: [InputEvent] = []
        #expect(device.read(into: &events) == .gone && events.isEmpty)
    }

    @Test func aFileGivenTwiceIsTwoDevices() throws {
        let clock = ManualClock()
        let source = try ReplayDeviceSource(paths: [Self.ctrlAltF1, Self.ctrlAltF1], startDelayMilliseconds: 0, clock: { clock.now })
        _ = source.startWatching()
        #expect(source.scan() == [Self.ctrlAltF1, Self.ctrlAltF1 + "#2"])
        #expect(try source.open(Self.ctrlAltF1 + "#2").path == Self.ctrlAltF1 + "#2")
    }

    @Test func aBadRecordingIsRefusedWholeWithFileAndLine() {
        let bad = Fixtures.config("bad-recording.evemu")
        #expect(throws: RecordingError(path: bad, line: 3, message: "time 1.000000 is earlier than the previous event's 2.000000; expected events in time order")) {
            try ReplayDeviceSource(paths: [Self.ctrlAltF1, bad])
        }
        #expect(throws: RecordingError.self) { try ReplayDeviceSource(paths: ["/nonexistent.evemu"]) }
    }

    /// On the real clock, through epoll as the daemon waits: one wake-up per distinct event time,
    /// each no earlier than due, and once everything has played no timer is left.
    @Test func theTimersWakeAnEpollLoopOnlyWhenSomethingIsDue() throws {
        let source = try ReplayDeviceSource(paths: [Self.ctrlAltF1], startDelayMilliseconds: 50)
        let epoll = try Epoll()
        let started = monotonicNow()
        _ = source.startWatching()
        try epoll.add(source.hotplugDescriptor!, token: 0)
        var device: ReplayDevice?
        var ready: [Epoll.Ready] = []
        var wakeups = 0
        var lateness: [Int64] = []
        var played: [InputEvent] = []
        var gone = false
        while !gone {
            epoll.wait(timeoutMilliseconds: 5000, into: &ready)
            try #require(!ready.isEmpty, "a timer did not fire")
            wakeups += 1
            let now = monotonicNow()
            for r in ready {
                if r.token == 0 {
                    let (added, _) = source.readHotplug()
                    #expect(added == [Self.ctrlAltF1])
                    #expect(now.microseconds - started.microseconds >= 50_000)
                    device = try source.open(added[0]) as? ReplayDevice
                    try epoll.add(device!.fileDescriptor, token: 1)
                } else {
                    var batch: [InputEvent] = []
                    gone = device!.read(into: &batch) == .gone
                    #expect(!batch.isEmpty)
                    // Each event is stamped with the time it was due, and was not read before it.
                    for e in batch { lateness.append(now.microseconds - e.time.microseconds) }
                    played += batch
                }
            }
        }
        #expect(wakeups == 7)  // the attach, then six distinct event times
        #expect(played.count == 18)
        #expect(lateness.allSatisfy { $0 >= 0 && $0 < 250_000 }, "\(lateness)")
        epoll.remove(device!.fileDescriptor)
        device = nil
        #expect(source.isFinished && source.nextHotplug == nil)
        epoll.wait(timeoutMilliseconds: 300, into: &ready)
        #expect(ready.isEmpty)
    }
}
