public import KbdCore
public import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// Follows a device source for a tool that is not the service (`kbd-commandd monitor`): the
/// nodes present at start and every node plugged in later, through the source's own hotplug
/// (the live `EvdevDeviceSource`: inotify on /dev/input, the same source the service uses),
/// keeping the devices `keep` accepts and reading those that are ready. One thread; `step`
/// blocks in poll(2) until something happens.
public final class DeviceFollower {
    /// What a step found, in order.
    public enum Change {
        /// A device opened and kept (at start or plugged in later).
        case attached(DeviceID, any InputDevice)
        /// Events read from a kept device.
        case input(DeviceID, [InputEvent])
        /// The kernel dropped events; these keys are down now.
        case resynchronized(DeviceID, keysDown: Set<UInt16>)
        /// A kept device went away (unplugged, node removed, or a read failed).
        case detached(DeviceID, path: String)
        /// A node that could not be opened (permissions, vanished: the error says).
        case notOpened(String, SystemError)
    }

    public let source: any DeviceSource
    private let keep: (any InputDevice) -> Bool
    private var open: [(id: DeviceID, device: any InputDevice)] = []
    private var nextID = 1
    private var input: [InputEvent] = []

    /// `keep` decides whether an opened device is followed (else it is closed at once).
    public init(source: any DeviceSource, keep: @escaping (any InputDevice) -> Bool) {
        self.source = source
        self.keep = keep
    }

    /// The devices followed now.
    public var devices: [(id: DeviceID, device: any InputDevice)] { open }

    /// Whether new nodes are seen (the source watches for them).
    public private(set) var watching = false

    /// Starts watching for new nodes, then opens the nodes present now.
    public func start() -> [Change] {
        watching = source.startWatching() && source.hotplugDescriptor != nil
        var changes: [Change] = []
        for path in source.scan() { attach(path, into: &changes) }
        return changes
    }

    /// Waits up to `timeoutMilliseconds` (-1: as long as it takes) for a device or the hotplug
    /// descriptor, then handles what is ready: removed and new nodes, then events.
    public func step(timeoutMilliseconds: Int32 = -1) -> [Change] {
        if !watching, source.startWatching(), source.hotplugDescriptor != nil { watching = true }
        let polled = open
        var fds = polled.map { pollfd(fd: $0.device.fileDescriptor, events: Int16(POLLIN), revents: 0) }
        let hotplug = source.hotplugDescriptor
        if let hotplug { fds.append(pollfd(fd: hotplug, events: Int16(POLLIN), revents: 0)) }
        var changes: [Change] = []
        guard !fds.isEmpty else { return changes }
        let n = poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
        guard n > 0 else { return changes }
        if hotplug != nil, fds[fds.count - 1].revents != 0 {
            let (added, removed) = source.readHotplug()
            for path in removed {
                if let index = open.firstIndex(where: { $0.device.path == path }) {
                    changes.append(.detached(open[index].id, path: path))
                    open.remove(at: index)
                }
            }
            for path in added where !open.contains(where: { $0.device.path == path }) { attach(path, into: &changes) }
        }
        var gone: [DeviceID] = []
        for (i, fd) in fds.enumerated() where i < polled.count && fd.revents != 0 {
            let (id, device) = polled[i]
            guard open.contains(where: { $0.id == id }) else { continue }  // removed by the hotplug above
            input.removeAll(keepingCapacity: true)
            let status = device.read(into: &input)
            if !input.isEmpty { changes.append(.input(id, input)) }
            switch status {
            case .drained: break
            case .resynchronized(let keys, _): changes.append(.resynchronized(id, keysDown: keys))
            case .gone, .failed:
                changes.append(.detached(id, path: device.path))
                gone.append(id)
            }
        }
        open.removeAll { gone.contains($0.id) }
        return changes
    }

    private func attach(_ path: String, into changes: inout [Change]) {
        let device: any InputDevice
        do { device = try source.open(path) } catch {
            changes.append(.notOpened(path, error))
            return
        }
        guard keep(device) else { return }
        let id = DeviceID(nextID)
        nextID += 1
        open.append((id, device))
        changes.append(.attached(id, device))
    }
}
