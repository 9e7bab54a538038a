import KbdSystem
import KbdCore
import KbdPipeline
import KbdProcess
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's input devices: every node the source shows, opened, classified (by the
/// pipeline's device filter), watched by the loop as `.device(id)` while kept, read when
/// ready and closed when they leave. What they say goes to `deliver` as source events (the
/// daemon hands them to its pipeline), and `publish` is asked after each attach, detach and
/// read, so the log and the clients see each device's events before the next device's.
final class DeviceSet {
    /// Hands a device's event to the pipeline.
    var deliver: (SourceEvent) -> Void = { _ in }
    /// Publishes what the pipeline made of the events delivered so far.
    var publish: () -> Void = {}
    /// The pipeline's verdict on a device (its filter can change with a reload).
    var classify: (DeviceDescription) -> KeyboardClassifier.Verdict = { KeyboardClassifier.classify($0) }
    /// Whether keyboards are grabbed (the config's `[devices] grab`).
    var grabsKeyboards: () -> Bool = { false }

    private let source: any DeviceSource
    private let logger: Logger
    private let clock: () -> EventTime
    private let loop: DaemonLoop
    private var open: [DeviceID: any InputDevice] = [:]
    private var byPath: [String: DeviceID] = [:]
    /// Every node seen, with its verdict or why it could not be opened.
    private(set) var known: [String: DeviceRow] = [:]
    private var nextDevice = 1
    /// Hotplugged nodes still unreadable after udev changed them, with when to say so: udev
    /// makes several changes (owner, mode, then the rule's ACL), so one refusal in between
    /// is no verdict; still refused after `accessGraceMilliseconds`, the node is named.
    private var accessChecks: [String: EventTime] = [:]
    static let accessGraceMilliseconds = 2000
    /// Nodes not opened (permission denied) that the source says are neither keyboards nor
    /// switches (a PC speaker, a mouse, a tablet): the service does not need them, so they are
    /// not counted as unreadable.
    private var unneededNodes: Set<String> = []
    private var inputBuffer: [InputEvent] = []

    /// What to do when nodes are not readable.
    /// The package relies on its udev rule (a read ACL for the service's user, set with setfacl
    /// from the acl package), never on group input, which would let the service write events too.
    static let accessFix = "Keys on those devices are not seen: the service reads keyboards and switches through the udev rule /usr/lib/udev/rules.d/60-kbd-commandd.rules (shipped with the package; a read ACL for the service's user, set by setfacl from the package acl). Check that the rule is installed and not overridden in /etc/udev/rules.d, that `getfacl NODE` shows user:kbd-commandd:r--, and run `udevadm trigger --subsystem-match=input`"

    init(source: any DeviceSource, logger: Logger, clock: @escaping () -> EventTime, loop: DaemonLoop) {
        self.source = source
        self.logger = logger
        self.clock = clock
        self.loop = loop
    }

    /// Starts following hotplug (false when the input directory is not there yet).
    func startWatching() throws -> Bool {
        guard source.startWatching(), let fd = source.hotplugDescriptor else { return false }
        try loop.watch(fd, as: .hotplug)
        return true
    }

    /// Opens every node the source shows now.
    func scan() {
        for path in source.scan() { openDevice(path) }
    }

    /// Retries watching and scanning (the input directory appeared later, as in a container).
    func rescan() {
        if source.hotplugDescriptor == nil, source.startWatching(), let fd = source.hotplugDescriptor {
            try? loop.watch(fd, as: .hotplug)
        }
        for path in source.scan() where byPath[path] == nil { openDevice(path) }
    }

    var openCount: Int { open.count }
    var keyboardCount: Int { known.values.filter { $0.id != nil && $0.verdict?.isKeyboard == true }.count }

    /// Every node seen, sorted by path.
    func list() -> [DeviceRow] {
        known.values.sorted { $0.path.count == $1.path.count ? $0.path < $1.path : $0.path.count < $1.path.count }
    }

    /// Keyboard and switch nodes the service may not read (permission denied), as `list_devices`
    /// shows them; nodes the source says are neither are not counted.
    var unreadableNodes: Int {
        known.values.filter {
            $0.id == nil && !unneededNodes.contains($0.path)
                && ($0.error?.includes("Permission denied") ?? false || $0.error?.includes("Operation not permitted") ?? false)
        }.count
    }

    /// When an unreadable hotplugged node is next due to be named (the loop's `.unreadableNodes` timer).
    var nextAccessCheck: EventTime? { accessChecks.values.min() }

    // MARK: - Opening and closing

    private func openDevice(_ path: String) {
        guard byPath[path] == nil else { return }
        let device: any InputDevice
        do { device = try source.open(path) } catch {
            refused(path, error)
            return
        }
        accessChecks[path] = nil
        unneededNodes.remove(path)
        let verdict = classify(device.description)
        known[path] = DeviceRow(path: path, name: device.description.name, verdict: verdict, reportsOpen: true)
        guard verdict.isKept else {
            logger.debug("ignoring \(path) \"\(device.description.name)\": \(verdict.reason)")
            return  // closed when `device` goes out of scope: non-keyboards cost no wake-ups
        }
        if grabsKeyboards() && verdict.isKeyboard {
            do { try device.setGrabbed(true) } catch { logger.warning("cannot grab \(path): \(error.message)") }
        }
        let id = DeviceID(nextDevice)
        nextDevice += 1
        do { try loop.watch(device.fileDescriptor, as: .device(id)) } catch {
            logger.error("cannot watch \(path): \(error.message)")
            return
        }
        open[id] = device
        byPath[path] = id
        known[path]?.id = id
        if verdict.isKeyboard {
            logger.info("keyboard attached: \(path) \"\(device.description.name)\" (\(device.description.id), \(verdict.integration.rawValue)): \(verdict.integrationReason)")
        } else {
            logger.info("switch attached: \(path) \"\(device.description.name)\" (\(verdict.reason))")
        }
        deliver(.attached(id, device.description, verdict: verdict, time: clock()))
        // Keys already down when we opened it (a chord being held) are taken as they are.
        let keys = device.keysDown()
        if !keys.isEmpty { deliver(.resynchronized(id, keysDown: keys, time: clock())) }
        publish()
    }

    /// A node that could not be opened: why is kept for `list_devices`, and a keyboard's
    /// permission problem is named once udev is done with it.
    private func refused(_ path: String, _ error: SystemError) {
        // EACCES right after creation is normal: udev has not set the permissions yet.
        // EACCES again after udev changed the node (a hotplug retry): the service lacks the right.
        let retried = known[path]?.error != nil
        known[path] = DeviceRow(path: path, name: "", error: error.message, reportsOpen: true)
        if error.errno == EACCES || error.errno == EPERM {
            // Only keyboards and switches matter (udev's marks or the capabilities say).
            if source.isKeyboardOrSwitch(path) == false {
                if unneededNodes.insert(path).inserted { logger.debug("not opened: \(path) (\(error.message)); not a keyboard or switch") }
                accessChecks[path] = nil
                return
            }
            unneededNodes.remove(path)
            if retried, accessChecks[path] == nil { accessChecks[path] = clock().adding(milliseconds: Self.accessGraceMilliseconds) }
        } else if error.errno != ENOENT && error.errno != ENODEV {
            logger.warning("cannot open \(path): \(error.message)")
        }
    }

    private func closeDevice(_ id: DeviceID, reason: String) {
        guard let device = open.removeValue(forKey: id) else { return }
        loop.unwatch(device.fileDescriptor)
        byPath[device.path] = nil
        let kind = known.removeValue(forKey: device.path)?.verdict?.isSwitch == true ? "switch" : "keyboard"
        logger.info("\(kind) detached: \(device.path) \"\(device.description.name)\" (\(reason))")
        deliver(.detached(id, time: clock()))
        publish()
    }

    /// Closes every device, keyboards first: a switch device leaving first would make
    /// presence flip on the way out.
    func closeAll(reason: String) {
        let switches = Set(known.values.compactMap { $0.verdict?.isSwitch == true ? $0.id : nil })
        for id in open.keys.sorted(by: { (switches.contains($0) ? 1 : 0, $0) < (switches.contains($1) ? 1 : 0, $1) }) {
            closeDevice(id, reason: reason)
        }
    }

    // MARK: - Reading

    /// Reads what the device has and delivers it; a device gone or failing is closed.
    func read(_ id: DeviceID) {
        guard let device = open[id] else { return }
        inputBuffer.removeAll(keepingCapacity: true)
        let status = device.read(into: &inputBuffer)
        for event in inputBuffer { deliver(.input(id, event)) }
        switch status {
        case .drained: break
        case .resynchronized(let keys, let dropped):
            logger.warning("\(device.path): the kernel dropped events (SYN_DROPPED); resynchronised, \(dropped) state changes replayed")
            deliver(.resynchronized(id, keysDown: keys, time: clock()))
            // A lid or tablet-mode change lost in the drop: libevdev's view is current again.
            deliver(.switches(id, device.switchStates(), time: clock()))
        case .gone:
            publish()
            closeDevice(id, reason: "device gone")
            return
        case .failed(let e):
            publish()
            closeDevice(id, reason: e.description)
            return
        }
        publish()
    }

    /// Nodes added and removed since the last look.
    func hotplug() {
        let (added, removed) = source.readHotplug()
        for path in removed {
            if let id = byPath[path] { closeDevice(id, reason: "node removed") }
            known[path] = nil
            accessChecks[path] = nil
            unneededNodes.remove(path)
        }
        for path in added where byPath[path] == nil { openDevice(path) }
    }

    /// Names the hotplugged nodes that stayed unreadable past the grace time.
    func reportUnreadable(at now: EventTime) {
        for (path, due) in accessChecks.sorted(by: { $0.key < $1.key }) where due <= now {
            accessChecks[path] = nil
            guard let error = known[path]?.error else { continue }
            logger.warning("cannot open \(path): \(error); \(unreadableNodes) keyboard or switch nodes not readable. \(Self.accessFix)")
        }
    }

    /// The open devices as a new pipeline must learn them (a reload with a new keymap):
    /// attached, with the keys held and the switches' states as they are now.
    func attach(to pipeline: Pipeline) {
        var discard: [PipelineEvent] = []
        for (id, device) in open.sorted(by: { $0.key < $1.key }) {
            pipeline.process(.attached(id, device.description, verdict: pipeline.classify(device.description), time: clock()), into: &discard)
            let keys = device.keysDown()
            if !keys.isEmpty { pipeline.process(.resynchronized(id, keysDown: keys, time: clock()), into: &discard) }
            pipeline.process(.switches(id, device.switchStates(), time: clock()), into: &discard)
        }
    }
}
