import CLinux
public import Logging
import Synchronization
public import KbdCore
public import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// A device built from an evemu description, driven by the test: events,
/// SYN_DROPPED with a resync, vanishing mid-read. Its descriptor is an eventfd,
/// so the daemon's epoll loop sees it exactly like a real node.
public final class FakeDevice: InputDevice, @unchecked Sendable {
    // @unchecked: the queued events and key state are behind a mutex, so a bench can
    // type from another thread while the daemon's loop reads.
    public let path: String
    public let description: DeviceDescription
    public let fileDescriptor: Int32
    private struct State {
        var queue: [InputEvent] = []
        var status: DeviceReadStatus = .drained
        var down: Set<UInt16> = []
        var switches: [UInt16: Int32] = [:]
        var grabbed = false
    }
    private let state = Mutex(State())

    public init(path: String, description: DeviceDescription) {
        self.path = path
        self.description = description
        fileDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        state.withLock { $0.switches = description.switchStates }
    }

    deinit { close(fileDescriptor) }

    public var down: Set<UInt16> { state.withLock { $0.down } }
    public var grabbed: Bool { state.withLock { $0.grabbed } }

    private func signal() {
        var one: UInt64 = 1
        _ = write(fileDescriptor, &one, 8)
    }

    /// Queues kernel events (a SYN_REPORT follows each key event) at `time`.
    public func keys(_ changes: [(String, Int32)], at time: EventTime) {
        state.withLock { s in
            for (name, value) in changes {
                let code = EventCodeNames.keyCode(named: "KEY_" + name.uppercased())!
                s.queue.append(InputEvent(time: time, type: EventType.key, code: code, value: value))
                s.queue.append(InputEvent(time: time, type: EventType.syn, code: SynCode.report, value: 0))
                if value == 1 { s.down.insert(code) } else if value == 0 { s.down.remove(code) }
            }
        }
        signal()
    }

    public func raw(_ events: [InputEvent]) {
        state.withLock { $0.queue.append(contentsOf: events) }
        signal()
    }

    /// A switch changes (an EV_SW event and a SYN_REPORT at `time`).
    public func setSwitch(_ code: UInt16, _ value: Int32, at time: EventTime) {
        state.withLock { s in
            s.switches[code] = value
            s.queue.append(InputEvent(time: time, type: EventType.sw, code: code, value: value))
            s.queue.append(InputEvent(time: time, type: EventType.syn, code: SynCode.report, value: 0))
        }
        signal()
    }

    /// The kernel dropped events; afterwards exactly `keysDown` are held and the
    /// switches read `switches` (changes that were lost in the drop).
    public func dropEvents(keysDown names: [String], switches: [UInt16: Int32] = [:]) {
        let keys = Set(names.map { EventCodeNames.keyCode(named: "KEY_" + $0.uppercased())! })
        state.withLock {
            $0.down = keys
            for (code, value) in switches { $0.switches[code] = value }
            $0.status = .resynchronized(keysDown: keys, dropped: 3)
        }
        signal()
    }

    /// The node vanishes: the next read reports ENODEV.
    public func vanish() {
        state.withLock { $0.status = .gone }
        signal()
    }

    public func read(into events: inout [InputEvent]) -> DeviceReadStatus {
        var counter: UInt64 = 0
        _ = Glibc.read(fileDescriptor, &counter, 8)
        return state.withLock { s in
            events.append(contentsOf: s.queue)
            s.queue.removeAll()
            let status = s.status
            if case .resynchronized = status { s.status = .drained }
            return status
        }
    }

    public func keysDown() -> Set<UInt16> { down }
    public func switchStates() -> [UInt16: Int32] { state.withLock { $0.switches } }
    public func setGrabbed(_ grabbed: Bool) throws(SystemError) { state.withLock { $0.grabbed = grabbed } }
}

/// A fake /dev/input: devices plug and unplug, nodes can start unreadable
/// (udev has not set permissions) and become readable (the attribute change).
public final class FakeDeviceSource: DeviceSource {
    public private(set) var nodes: [String: FakeDevice] = [:]
    private var unreadable: Set<String> = []
    private var added: [String] = []
    private var removed: [String] = []
    public let hotplugFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))

    public init() {}

    deinit { close(hotplugFD) }

    private func signal() {
        var one: UInt64 = 1
        _ = write(hotplugFD, &one, 8)
    }

    @discardableResult
    public func plug(_ path: String, _ description: DeviceDescription, readable: Bool = true, announce: Bool = true) -> FakeDevice {
        let d = FakeDevice(path: path, description: description)
        nodes[path] = d
        if !readable { unreadable.insert(path) }
        if announce {
            added.append(path)
            signal()
        }
        return d
    }

    public func makeReadable(_ path: String) {
        unreadable.remove(path)
        added.append(path)
        signal()
    }

    public func unplug(_ path: String) {
        nodes[path] = nil
        removed.append(path)
        signal()
    }

    public func scan() -> [String] { nodes.keys.sorted() }

    public func open(_ path: String) throws(SystemError) -> any InputDevice {
        guard let d = nodes[path] else { throw SystemError(operation: "open", path: path, errno: ENOENT) }
        if unreadable.contains(path) { throw SystemError(operation: "open", path: path, errno: EACCES) }
        return d
    }

    public var hotplugDescriptor: Int32? { hotplugFD }

    public func readHotplug() -> (added: [String], removed: [String]) {
        var counter: UInt64 = 0
        _ = read(hotplugFD, &counter, 8)
        defer { added.removeAll(); removed.removeAll() }
        return (added, removed)
    }

    public func startWatching() -> Bool { true }

    /// As the live source answers from udev's marks or sysfs: the node's capabilities, classified.
    public func isKeyboardOrSwitch(_ path: String) -> Bool? {
        nodes[path].map { KeyboardClassifier.classify($0.description).isKept }
    }
}

/// Collects log lines in memory (a LogHandler for tests).
public final class LogCollector: Sendable {
    let lines = Mutex<[String]>([])

    public init() {}

    public var all: [String] { lines.withLock { $0 } }

    public func makeLogger() -> Logger {
        Logger(label: "test") { _ in Handler(collector: self) }
    }

    struct Handler: LogHandler {
        let collector: LogCollector
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            collector.lines.withLock { $0.append("\(event.level) \(event.message)") }
        }
    }
}

/// A clock the test moves by hand.
public final class ManualClock: @unchecked Sendable {
    // @unchecked: only touched from the test's own thread.
    public var now = EventTime(seconds: 1000, microseconds: 0)
    public init() {}
    public func advance(ms: Int) { now = now.adding(milliseconds: ms) }
}
