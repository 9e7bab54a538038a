public import KbdCore
public import KbdSystem
import CEvdev
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// A live evdev node read through libevdev. It owns the descriptor and the
/// `struct libevdev *` and frees both exactly once (libevdev does not handle
/// file descriptors, so the descriptor belongs here too).
public final class EvdevDevice: InputDevice {
    public let path: String
    public let fileDescriptor: Int32
    private let handle: OpaquePointer
    public let description: DeviceDescription
    private var grabbed = false

    /// Opens `path` non-blocking and reads its description. Event times use
    /// `CLOCK_MONOTONIC`, the clock deadlines are measured on.
    /// The corresponding C functions are `open(2)`, `libevdev_new_from_fd` and `libevdev_set_clock_id`.
    /// `udevData` is udev's database folder, where the node's `ID_INTEGRATION` is looked up
    /// (nil: not looked up). `sysfs` is where sysfs is mounted, where the node's device path is
    /// looked up (a uinput device is a program's keyboard; nil: not looked up).
    public init(path: String, udevData: String? = UdevDatabase.defaultDirectory,
                sysfs: String? = SysfsDevice.defaultRoot) throws(SystemError) {
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError(operation: "open", path: path, errno: errno) }
        var dev: OpaquePointer?
        let rc = libevdev_new_from_fd(fd, &dev)
        guard rc == 0, let dev else {
            close(fd)
            throw SystemError(operation: "libevdev_new_from_fd", path: path, errno: -rc)
        }
        _ = libevdev_set_clock_id(dev, CLOCK_MONOTONIC)
        self.path = path
        self.fileDescriptor = fd
        self.handle = dev
        var description = Self.describe(dev)
        if udevData != nil || sysfs != nil {
            var st = stat()
            if fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFCHR {
                if let udevData, let record = UdevDatabase(directory: udevData).record(device: UInt64(st.st_rdev)) {
                    description.udevIntegration = record.integration
                    description.udevSeat = record.seat
                }
                if let sysfs { description.sysfsPath = SysfsDevice(root: sysfs).inputDevicePath(device: UInt64(st.st_rdev)) }
            }
        }
        self.description = description
    }

    deinit {
        if grabbed { _ = libevdev_grab(handle, LIBEVDEV_UNGRAB) }
        libevdev_free(handle)
        close(fileDescriptor)
    }

    private static func describe(_ dev: OpaquePointer) -> DeviceDescription {
        let name = libevdev_get_name(dev).map { String(cString: $0) } ?? ""
        let id = InputID(
            bustype: UInt16(truncatingIfNeeded: libevdev_get_id_bustype(dev)),
            vendor: UInt16(truncatingIfNeeded: libevdev_get_id_vendor(dev)),
            product: UInt16(truncatingIfNeeded: libevdev_get_id_product(dev)),
            version: UInt16(truncatingIfNeeded: libevdev_get_id_version(dev)))
        var d = DeviceDescription(name: name, id: id)
        for prop in 0..<32 where libevdev_has_property(dev, UInt32(prop)) != 0 { d.properties.insert(prop) }
        for type in 1..<UInt16(EventType.count) {
            guard libevdev_has_event_type(dev, UInt32(type)) != 0, let max = EventCodeNames.maxCode(type: type) else { continue }
            for code in 0...max where libevdev_has_event_code(dev, UInt32(type), UInt32(code)) != 0 {
                d.enable(type: type, code: UInt16(code))
                if type == EventType.abs, let info = libevdev_get_abs_info(dev, UInt32(code)) {
                    d.absAxes.append(AbsAxis(code: UInt16(code), minimum: info.pointee.minimum, maximum: info.pointee.maximum,
                                             fuzz: info.pointee.fuzz, flat: info.pointee.flat, resolution: info.pointee.resolution))
                }
                if type == EventType.sw { d.switchStates[UInt16(code)] = libevdev_get_event_value(dev, UInt32(type), UInt32(code)) }
            }
        }
        return d
    }

    /// Drains ready events. On SYN_DROPPED it reads libevdev's sync events to
    /// the end, so libevdev's view is current again, and reports the keys down.
    /// The corresponding C function is `libevdev_next_event`.
    public func read(into events: inout [InputEvent]) -> DeviceReadStatus {
        var ev = input_event()
        while true {
            let rc = libevdev_next_event(handle, LIBEVDEV_READ_FLAG_NORMAL.rawValue, &ev)
            if rc == LIBEVDEV_READ_STATUS_SUCCESS.rawValue {
                events.append(Self.convert(ev))
            } else if rc == LIBEVDEV_READ_STATUS_SYNC.rawValue {
                var dropped = 0
                while true {
                    let s = libevdev_next_event(handle, LIBEVDEV_READ_FLAG_SYNC.rawValue, &ev)
                    if s == LIBEVDEV_READ_STATUS_SYNC.rawValue { dropped += 1; continue }
                    if s == -EAGAIN { break }
                    if s == -ENODEV { return .gone }
                    if s < 0 { return .failed(SystemError(operation: "libevdev_next_event", path: path, errno: -s)) }
                }
                return .resynchronized(keysDown: keysDown(), dropped: dropped)
            } else if rc == -EAGAIN {
                return .drained
            } else if rc == -ENODEV {
                return .gone
            } else if rc == -EINTR {
                continue
            } else {
                return .failed(SystemError(operation: "libevdev_next_event", path: path, errno: -rc))
            }
        }
    }

    private static func convert(_ ev: input_event) -> InputEvent {
        InputEvent(time: EventTime(seconds: Int64(ev.time.tv_sec), microseconds: Int64(ev.time.tv_usec)),
                   type: ev.type, code: ev.code, value: ev.value)
    }

    /// The corresponding C function is `libevdev_get_event_value`.
    public func keysDown() -> Set<UInt16> {
        var keys: Set<UInt16> = []
        for code in description.capabilities[Int(EventType.key)].members
        where libevdev_get_event_value(handle, UInt32(EventType.key), UInt32(code)) != 0 {
            keys.insert(UInt16(code))
        }
        return keys
    }

    /// libevdev's view of the switches, current after a resynchronisation.
    /// The corresponding C function is `libevdev_get_event_value`.
    public func switchStates() -> [UInt16: Int32] {
        var states: [UInt16: Int32] = [:]
        for code in description.capabilities[Int(EventType.sw)].members {
            states[UInt16(code)] = libevdev_get_event_value(handle, UInt32(EventType.sw), UInt32(code))
        }
        return states
    }

    /// The corresponding C function is `libevdev_grab`.
    public func setGrabbed(_ grab: Bool) throws(SystemError) {
        let rc = libevdev_grab(handle, grab ? LIBEVDEV_GRAB : LIBEVDEV_UNGRAB)
        guard rc == 0 else { throw SystemError(operation: "EVIOCGRAB", path: path, errno: -rc) }
        grabbed = grab
    }
}

/// `/dev/input/event*` with hotplug by inotify on the directory (as keyd's
/// devmon does): new nodes, removed nodes, and the attribute change udev makes
/// when it sets a node's permissions. When the directory does not exist yet (a
/// container, a machine with no input devices) the parent is watched until it appears.
public final class EvdevDeviceSource: DeviceSource {
    public let directory: String
    /// udev's database, for `ID_INTEGRATION` (nil: not read).
    public let udevData: String?
    private var inotify: Int32 = -1
    private var directoryWatch: Int32 = -1
    private var parentWatch: Int32 = -1

    /// Where sysfs is mounted, for the capabilities of nodes that cannot be opened (nil: not read).
    public let sysfs: String?

    public init(directory: String = "/dev/input", udevData: String? = UdevDatabase.defaultDirectory,
                sysfs: String? = SysfsDevice.defaultRoot) {
        self.directory = directory
        self.udevData = udevData
        self.sysfs = sysfs
    }

    deinit { if inotify >= 0 { close(inotify) } }

    public func scan() -> [String] {
        let out = Directory.names(directory).filter { $0.hasPrefix("event") }.map { directory + "/" + $0 }
        return out.sorted { $0.count == $1.count ? $0 < $1 : $0.count < $1.count }
    }

    public func open(_ path: String) throws(SystemError) -> any InputDevice {
        try EvdevDevice(path: path, udevData: udevData)
    }

    /// udev's input_id marks of the node (`ID_INPUT_KEYBOARD`, `ID_INPUT_SWITCH`), else its
    /// capabilities in sysfs as the classifier reads them (the key block KEY_ESC…KEY_S, a lid or
    /// tablet-mode switch); nil when neither is there. Needs no access to the node: its number
    /// comes from stat(2), the udev record and sysfs are readable by anyone.
    public func isKeyboardOrSwitch(_ path: String) -> Bool? {
        var st = stat()
        guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFCHR else { return nil }
        return Self.isKeyboardOrSwitch(device: UInt64(st.st_rdev), udevData: udevData, sysfs: sysfs)
    }

    /// The same for a device number, with udev's database and sysfs where they are (tests).
    public static func isKeyboardOrSwitch(device: UInt64, udevData: String?, sysfs: String?) -> Bool? {
        if let udevData, let marks = UdevDatabase(directory: udevData).inputMarks(device: device) {
            return marks.keyboard || marks.switchDevice
        }
        guard let sysfs else { return nil }
        let sysfsDevice = SysfsDevice(root: sysfs)
        let keys = sysfsDevice.capabilities(device: device, kind: "key")
        let switches = sysfsDevice.capabilities(device: device, kind: "sw")
        guard keys != nil || switches != nil else { return nil }
        if let keys, KeyboardClassifier.fullKeyboardBlock.allSatisfy({ keys.contains($0) }) { return true }
        if let switches, SwitchCode.presenceSwitches.contains(where: { switches.contains(Int($0)) }) { return true }
        return false
    }

    public var hotplugDescriptor: Int32? { inotify >= 0 ? inotify : nil }

    /// Whether the input directory itself is watched (false while waiting for it to appear).
    public var watchingDirectory: Bool { directoryWatch >= 0 }

    /// Watches the directory, or its parent while it does not exist.
    /// The corresponding C functions are `inotify_init1` and `inotify_add_watch`.
    public func startWatching() -> Bool {
        if inotify < 0 { inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        guard inotify >= 0 else { return false }
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE_SELF)
        directoryWatch = inotify_add_watch(inotify, directory, mask)
        if directoryWatch < 0 && parentWatch < 0 {
            let parent = String(directory.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/"))
            parentWatch = inotify_add_watch(inotify, parent.isEmpty ? "/" : parent, UInt32(IN_CREATE | IN_MOVED_TO))
        }
        return true
    }

    public func readHotplug() -> (added: [String], removed: [String]) {
        var added: [String] = [], removed: [String] = []
        var rescan = false
        let base = directory.split(separator: "/").last.map(String.init) ?? directory
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(inotify, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            var offset = 0
            buffer.withUnsafeBytes { raw in
                while offset + MemoryLayout<inotify_event>.size <= n {
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    let nameBytes = raw[nameStart..<min(n, nameStart + Int(event.len))]
                    let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    if event.wd == parentWatch, name == base {
                        rescan = true
                    } else if event.wd == directoryWatch, event.mask & UInt32(IN_DELETE_SELF) != 0 {
                        directoryWatch = -1
                        parentWatch = -1
                        rescan = true
                    } else if event.wd == directoryWatch, name.hasPrefix("event") {
                        let path = directory + "/" + name
                        if event.mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 { removed.append(path) } else { added.append(path) }
                    }
                    offset = nameStart + Int(event.len)
                }
            }
        }
        if rescan, directoryWatch < 0 {
            _ = startWatching()
            added.append(contentsOf: scan())
        }
        return (added, removed)
    }
}
