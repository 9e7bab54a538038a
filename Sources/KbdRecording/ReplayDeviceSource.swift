public import KbdCore
public import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// Recordings as the service's devices (`kbd-commandd run --replay FILE…`): the whole
/// service (socket, clients, commands) runs on them as it would on /dev/input, in real time.
///
/// The recordings share one timeline, as `kbd-commandd replay` merges them: the earliest
/// first event plays `startDelayMilliseconds` after `startWatching()` (the daemon calls it
/// when it starts), and every other event keeps its distance from it. Each recording
/// attaches (a hotplug "added") just before its first event, plays its events when they are
/// due, and detaches right after its last one (the device reads `.gone`); a recording without
/// events attaches and detaches at the start. A recording the daemon did not keep (not a
/// keyboard) is reported removed at its last event, as an unplugged node is.
///
/// Nothing polls: the hotplug descriptor is a timerfd armed for the next attach (or the
/// removal of a device not kept), each device's descriptor a timerfd armed for its next
/// event, so an epoll loop wakes once per distinct event time and, once everything has
/// played, holds no armed timer at all. Events are stamped with the time they were due on
/// `clock` (the daemon's `CLOCK_MONOTONIC`), so latency and sequence timeouts behave as
/// with live input. Files are read streaming: one pending event per playing recording.
///
/// The timers run on `CLOCK_MONOTONIC`; with another `clock` (a test's manual clock) they
/// fire at meaningless times and the test calls `readHotplug()` and `read(into:)` itself.
public final class ReplayDeviceSource: DeviceSource {
    /// One recording and its place on the recorded timeline.
    public struct Recording: Sendable, Equatable {
        /// The node name the daemon sees: the file as given, `#2`, `#3`… added to a repeat.
        public var path: String
        public var file: String
        public var description: DeviceDescription
        /// The recorded times of the first and last events; nil without events.
        public var first: EventTime?
        public var last: EventTime?
        public var eventCount: Int
    }

    private enum State {
        /// Not attached yet.
        case waiting
        /// Reported as added, not opened yet.
        case announced
        /// Opened; its device plays it.
        case playing
        /// Its device was let go before the end (not a keyboard): removed at its last event.
        case released
        /// Detached or removed.
        case ended
    }

    public let recordings: [Recording]
    /// How long after `startWatching()` the earliest event plays.
    public let startDelayMilliseconds: Int
    /// Called once, when every recording has ended and its device was let go.
    public var onFinished: (() -> Void)?

    private var states: [State]
    private var readers: [EvemuReader<FileByteSource>?]
    private let origin: EventTime
    private let timer: MonotonicTimer
    private let clock: () -> EventTime
    /// Added to a recorded time to get the time it is due on `clock`; set by `startWatching()`.
    private var offset: Int64?
    private var finishedReported = false
    /// Devices handed out and not let go yet.
    private var liveDevices = 0

    /// Checks every file to its end (the first bad line throws, with file and line), then opens
    /// each for playing. Nothing plays before `startWatching()`.
    public init(paths: [String], startDelayMilliseconds: Int = 100, clock: @escaping () -> EventTime = monotonicNow) throws(RecordingError) {
        var recordings: [Recording] = []
        var readers: [EvemuReader<FileByteSource>?] = []
        for file in paths {
            let check = try EvemuReader(path: file)
            var first: EventTime?
            var last: EventTime?
            var count = 0
            while let event = try check.next() {
                if first == nil { first = event.time }
                last = event.time
                count += 1
            }
            let name = file.split(separator: "/").last.map(String.init) ?? file
            let repeats = recordings.count(where: { $0.file == file })
            recordings.append(Recording(path: repeats == 0 ? file : "\(file)#\(repeats + 1)", file: file,
                                        description: check.description ?? .genericKeyboard(name: name),
                                        first: first, last: last, eventCount: count))
            readers.append(try EvemuReader(path: file))
        }
        do { timer = try MonotonicTimer() } catch {
            throw RecordingError(path: paths.first ?? "", line: 0, message: "cannot replay: \(error.description)")
        }
        self.recordings = recordings
        self.readers = readers
        self.states = Array(repeating: .waiting, count: recordings.count)
        self.origin = recordings.compactMap(\.first).min() ?? .zero
        self.startDelayMilliseconds = startDelayMilliseconds
        self.clock = clock
    }

    /// Whether every recording has ended (detached or removed).
    public var isFinished: Bool { states.allSatisfy { if case .ended = $0 { true } else { false } } }

    /// When recording `index` attaches and ends on `clock`; nil before `startWatching()`.
    public func schedule(of index: Int) -> (attach: EventTime, end: EventTime)? {
        guard let offset else { return nil }
        let r = recordings[index]
        return (EventTime(microseconds: (r.first ?? origin).microseconds + offset),
                EventTime(microseconds: (r.last ?? origin).microseconds + offset))
    }

    /// When the hotplug timer fires next; nil when it is disarmed.
    public var nextHotplug: EventTime? { timer.armedAt.map { EventTime(microseconds: $0) } }

    // MARK: - DeviceSource

    public var hotplugDescriptor: Int32? { timer.fileDescriptor }

    /// Starts the clock of the replay (the first call only).
    public func startWatching() -> Bool {
        if offset == nil {
            offset = clock().microseconds + Int64(startDelayMilliseconds) * 1000 - origin.microseconds
            rearm()
        }
        return true
    }

    /// The recordings due to attach that were not reported yet.
    public func scan() -> [String] {
        guard offset != nil else { return [] }
        let added = attachDue(now: clock())
        rearm()
        return added
    }

    public func readHotplug() -> (added: [String], removed: [String]) {
        timer.acknowledge()
        guard offset != nil else { return ([], []) }
        let now = clock()
        // Removals first, and only of recordings reported before this call: the daemon handles
        // `removed` before `added`, and a recording must not be removed before it was added.
        var removed: [String] = []
        for i in recordings.indices {
            switch states[i] {
            case .announced, .released:
                if schedule(of: i)!.end <= now {
                    states[i] = .ended
                    readers[i] = nil
                    removed.append(recordings[i].path)
                }
            default: break
            }
        }
        let added = attachDue(now: now)
        rearm()
        reportIfFinished()
        return (added, removed)
    }

    public func open(_ path: String) throws(SystemError) -> any InputDevice {
        guard let i = recordings.firstIndex(where: { $0.path == path }), case .announced = states[i], let reader = readers[i],
              let schedule = schedule(of: i)
        else { throw SystemError(operation: "open", path: path, errno: ENOENT) }
        let device = try ReplayDevice(source: self, index: i, recording: recordings[i], reader: reader, offset: offset!,
                                      end: schedule.end, clock: clock)
        readers[i] = nil
        states[i] = .playing
        liveDevices += 1
        rearm()
        return device
    }

    // MARK: - State

    private func attachDue(now: EventTime) -> [String] {
        var due: [(EventTime, Int)] = []
        for i in recordings.indices {
            if case .waiting = states[i], let at = schedule(of: i)?.attach, at <= now { due.append((at, i)) }
        }
        due.sort { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
        for (_, i) in due { states[i] = .announced }
        return due.map { recordings[$0.1].path }
    }

    /// Arms the hotplug timer for the next attach or removal; disarms it when there is none.
    private func rearm() {
        var next: EventTime?
        for i in recordings.indices {
            guard let s = schedule(of: i) else { return }
            let at: EventTime
            switch states[i] {
            case .waiting: at = s.attach
            case .announced, .released: at = s.end
            case .playing, .ended: continue
            }
            if next == nil || at < next! { next = at }
        }
        timer.arm(at: next?.microseconds)
    }

    private func reportIfFinished() {
        guard !finishedReported, liveDevices == 0, isFinished else { return }
        finishedReported = true
        onFinished?()
    }

    /// Its device read the last event.
    fileprivate func deviceEnded(_ index: Int) {
        states[index] = .ended
    }

    /// Its device was let go (after its detach, or at once when it is not a keyboard).
    fileprivate func deviceReleased(_ index: Int) {
        liveDevices -= 1
        if case .playing = states[index] {
            states[index] = .released
            rearm()
        }
        reportIfFinished()
    }
}

/// One recording playing as a device (`ReplayDeviceSource.open`): its descriptor is a
/// timerfd armed for its next event, disarmed after the last.
public final class ReplayDevice: InputDevice {
    /// At most this many events per read (a long stall is caught up over several turns).
    public static let maxEventsPerRead = 1024

    public let path: String
    public let description: DeviceDescription
    public var fileDescriptor: Int32 { timer.fileDescriptor }
    /// When its timer fires next (its next event is due, on the source's clock); nil when disarmed.
    public var nextDue: EventTime? { timer.armedAt.map { EventTime(microseconds: $0) } }
    private let timer: MonotonicTimer
    private let reader: EvemuReader<FileByteSource>
    private var head: InputEvent?
    private var failure: RecordingError?
    private let offset: Int64
    private let clock: () -> EventTime
    private var down: Set<UInt16> = []
    private var switches: [UInt16: Int32]
    private var ended = false
    private weak var source: ReplayDeviceSource?
    private let index: Int

    init(source: ReplayDeviceSource, index: Int, recording: ReplayDeviceSource.Recording, reader: EvemuReader<FileByteSource>,
         offset: Int64, end: EventTime, clock: @escaping () -> EventTime) throws(SystemError) {
        self.source = source
        self.index = index
        path = recording.path
        description = recording.description
        switches = recording.description.switchStates
        self.reader = reader
        self.offset = offset
        self.clock = clock
        timer = try MonotonicTimer()
        do { head = try reader.next() } catch { failure = error }
        // Without events (or with a file that went bad since it was checked) it ends at once.
        timer.arm(at: head.map { $0.time.microseconds + offset } ?? end.microseconds)
    }

    deinit { source?.deviceReleased(index) }

    /// Every event due now (at most `maxEventsPerRead`), stamped with the time it was due;
    /// `.gone` with the last ones.
    public func read(into events: inout [InputEvent]) -> DeviceReadStatus {
        timer.acknowledge()
        if ended { return .gone }
        let now = clock().microseconds
        var n = 0
        while let event = head, event.time.microseconds + offset <= now, n < Self.maxEventsPerRead {
            var due = event
            due.time = EventTime(microseconds: event.time.microseconds + offset)
            if due.type == EventType.key {
                if due.value == 0 { down.remove(due.code) } else { down.insert(due.code) }
            } else if due.type == EventType.sw {
                switches[due.code] = due.value
            }
            events.append(due)
            n += 1
            do { head = try reader.next() } catch {
                head = nil
                failure = error
            }
        }
        if let failure {
            end()
            return .failed(SystemError(operation: "replay stopped (\(failure))", errno: EIO))
        }
        guard let head else {
            end()
            return .gone
        }
        timer.arm(at: head.time.microseconds + offset)
        return .drained
    }

    private func end() {
        ended = true
        timer.arm(at: nil)
        source?.deviceEnded(index)
    }

    /// The keys its played events hold down.
    public func keysDown() -> Set<UInt16> { down }

    /// The switch states: the recording's `S:` lines, then its played EV_SW events.
    public func switchStates() -> [UInt16: Int32] { switches }

    /// Nobody else reads a recording: grabbing changes nothing.
    public func setGrabbed(_ grabbed: Bool) throws(SystemError) {}
}
