public import KbdSystem
/// One open input device, as the event loop sees it: a pollable descriptor,
/// a description, and a way to drain what is ready. The live implementation
/// is `EvdevDevice` (libevdev); tests use a fake built from evemu descriptions.
public protocol InputDevice: AnyObject {
    /// The node, e.g. `/dev/input/event3`.
    var path: String { get }
    /// A descriptor that becomes readable when events are waiting.
    var fileDescriptor: Int32 { get }
    var description: DeviceDescription { get }
    /// Reads every event that is ready without blocking, appending to `events`.
    func read(into events: inout [InputEvent]) -> DeviceReadStatus
    /// Keys the kernel says are down now.
    func keysDown() -> Set<UInt16>
    /// Switch states (`EV_SW` code → value) the kernel reports now.
    func switchStates() -> [UInt16: Int32]
    /// Grabs (or releases) the device for exclusive use (`EVIOCGRAB`).
    func setGrabbed(_ grabbed: Bool) throws(SystemError)
}

/// What a read found besides events.
public enum DeviceReadStatus: Sendable, Equatable {
    /// Everything ready was read.
    case drained
    /// The kernel dropped events (SYN_DROPPED); the device was resynchronised
    /// and these keys are down now. Events read before the drop are in the buffer.
    case resynchronized(keysDown: Set<UInt16>, dropped: Int)
    /// The device is gone (ENODEV, unplugged).
    case gone
    /// Reading failed for another reason; the device should be closed.
    case failed(SystemError)
}

/// Where devices come from: the nodes present now, opening one, and hotplug.
public protocol DeviceSource: AnyObject {
    /// Device nodes present now, sorted.
    func scan() -> [String]
    /// Opens a node; throws when it cannot be opened (permissions, vanished).
    func open(_ path: String) throws(SystemError) -> any InputDevice
    /// A descriptor that becomes readable on hotplug, nil if hotplug is not watched.
    var hotplugDescriptor: Int32? { get }
    /// Drains hotplug notifications: nodes that appeared or changed (permissions) and nodes removed.
    func readHotplug() -> (added: [String], removed: [String])
    /// Re-arms watching (e.g. /dev/input appeared later); returns whether it now watches.
    func startWatching() -> Bool
    /// Whether a node that could not be opened is one the service reads: a keyboard or a
    /// switch as udev marks it (`ID_INPUT_KEYBOARD`, `ID_INPUT_SWITCH`) or as its capabilities
    /// say; nil when nothing says (it is counted as unreadable then). A PC speaker, a mouse
    /// or a tablet the service may not open is no problem to warn about.
    func isKeyboardOrSwitch(_ path: String) -> Bool?
}

extension DeviceSource {
    public func isKeyboardOrSwitch(_ path: String) -> Bool? { nil }
}
