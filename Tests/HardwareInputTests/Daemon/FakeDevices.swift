import CLinux
import HardwareInput
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A device built from an evemu description, driven by the test: events,
/// SYN_DROPPED with a resync, vanishing mid-read. Its descriptor is an eventfd,
/// so the daemon's epoll loop sees it exactly like a real node.
final class FakeDevice: InputDevice {
    let path: String
    let description: DeviceDescription
    let fileDescriptor: Int32
    private var queue: [InputEvent] = []
    private var status: DeviceReadStatus = .drained
    private(set) var down: Set<UInt16> = []
    private(set) var grabbed = false

    init(path: String, description: DeviceDescription) {
        self.path = path
        self.description = description
        fileDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
    }

    deinit { close(fileDescriptor) }

    private func signal() {
        var one: UInt64 = 1
        _ = write(fileDescriptor, &one, 8)
    }

    /// Queues kernel events (a SYN_REPORT follows each key event) at `time`.
    func keys(_ changes: [(String, Int32)], at time: EventTime) {
        for (name, value) in changes {
            let code = EventCodeNames.keyCode(named: "KEY_" + name.uppercased())!
            queue.append(InputEvent(time: time, type: EventType.key, code: code, value: value))
            queue.append(InputEvent(time: time, type: EventType.syn, code: SynCode.report, value: 0))
            if value == 1 { down.insert(code) } else if value == 0 { down.remove(code) }
        }
        signal()
    }

    func raw(_ events: [InputEvent]) {
        queue.append(contentsOf: events)
        signal()
    }

    /// The kernel dropped events; afterwards exactly `keysDown` are held.
    func dropEvents(keysDown names: [String]) {
        down = Set(names.map { EventCodeNames.keyCode(named: "KEY_" + $0.uppercased())! })
        status = .resynchronized(keysDown: down, dropped: 3)
        signal()
    }

    /// The node vanishes: the next read reports ENODEV.
    func vanish() {
        status = .gone
        signal()
    }

    func read(into events: inout [InputEvent]) -> DeviceReadStatus {
        var counter: UInt64 = 0
        _ = Glibc.read(fileDescriptor, &counter, 8)
        events.append(contentsOf: queue)
        queue.removeAll()
        let s = status
        if case .resynchronized = s { status = .drained }
        return s
    }

    func keysDown() -> Set<UInt16> { down }
    func setGrabbed(_ grabbed: Bool) throws(SystemError) { self.grabbed = grabbed }
}

/// A fake /dev/input: devices plug and unplug, nodes can start unreadable
/// (udev has not set permissions) and become readable (the attribute change).
final class FakeDeviceSource: DeviceSource {
    private(set) var nodes: [String: FakeDevice] = [:]
    private var unreadable: Set<String> = []
    private var added: [String] = []
    private var removed: [String] = []
    let hotplugFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))

    deinit { close(hotplugFD) }

    private func signal() {
        var one: UInt64 = 1
        _ = write(hotplugFD, &one, 8)
    }

    @discardableResult
    func plug(_ path: String, _ description: DeviceDescription, readable: Bool = true, announce: Bool = true) -> FakeDevice {
        let d = FakeDevice(path: path, description: description)
        nodes[path] = d
        if !readable { unreadable.insert(path) }
        if announce {
            added.append(path)
            signal()
        }
        return d
    }

    func makeReadable(_ path: String) {
        unreadable.remove(path)
        added.append(path)
        signal()
    }

    func unplug(_ path: String) {
        nodes[path] = nil
        removed.append(path)
        signal()
    }

    func scan() -> [String] { nodes.keys.sorted() }

    func open(_ path: String) throws(SystemError) -> any InputDevice {
        guard let d = nodes[path] else { throw SystemError(operation: "open", path: path, errno: ENOENT) }
        if unreadable.contains(path) { throw SystemError(operation: "open", path: path, errno: EACCES) }
        return d
    }

    var hotplugDescriptor: Int32? { hotplugFD }

    func readHotplug() -> (added: [String], removed: [String]) {
        var counter: UInt64 = 0
        _ = read(hotplugFD, &counter, 8)
        defer { added.removeAll(); removed.removeAll() }
        return (added, removed)
    }

    func startWatching() -> Bool { true }
}

/// Collects log lines in memory (a LogHandler for tests).
final class LogCollector: Sendable {
    let lines = Mutex<[String]>([])

    var all: [String] { lines.withLock { $0 } }

    func makeLogger() -> Logger {
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
final class ManualClock: @unchecked Sendable {
    // @unchecked: only touched from the test's own thread.
    var now = EventTime(seconds: 1000, microseconds: 0)
    func advance(ms: Int) { now = now.adding(milliseconds: ms) }
}
