/// `struct input_id`: bus type, vendor, product, version.
public struct InputID: Sendable, Hashable, CustomStringConvertible {
    public var bustype: UInt16
    public var vendor: UInt16
    public var product: UInt16
    public var version: UInt16

    public init(bustype: UInt16, vendor: UInt16, product: UInt16, version: UInt16) {
        self.bustype = bustype
        self.vendor = vendor
        self.product = product
        self.version = version
    }

    /// `vvvv:pppp` in lower-case hex, the form config files use.
    public var vendorProduct: String { hex4(vendor) + ":" + hex4(product) }
    public var description: String { "bus \(hex4(bustype)) \(vendorProduct) v\(hex4(version))" }
}

package func hex4(_ v: UInt16) -> String {
    let s = String(v, radix: 16)
    return String(repeating: "0", count: max(0, 4 - s.count)) + s
}

package func hex2(_ v: UInt8) -> String {
    let s = String(v, radix: 16)
    return s.count == 1 ? "0" + s : s
}

/// Bus types from `linux/input.h` the classifier cares about.
public enum BusType {
    public static let pci: UInt16 = 0x01
    public static let usb: UInt16 = 0x03
    public static let hil: UInt16 = 0x04
    public static let bluetooth: UInt16 = 0x05
    public static let virtual: UInt16 = 0x06
    public static let i8042: UInt16 = 0x11
    public static let host: UInt16 = 0x19
    public static let i2c: UInt16 = 0x18

    /// The name of a bus for messages (`USB`, `i8042`), else its number in hex.
    public static func name(_ bus: UInt16) -> String {
        switch bus {
        case pci: return "PCI"
        case usb: return "USB"
        case hil: return "HIL"
        case bluetooth: return "Bluetooth"
        case virtual: return "virtual"
        case i8042: return "i8042"
        case host: return "host"
        case i2c: return "I2C"
        default: return hex4(bus)
        }
    }
}

/// `struct input_absinfo` for one axis, as an evemu `A:` line carries it.
public struct AbsAxis: Sendable, Hashable {
    public var code: UInt16
    public var minimum: Int32
    public var maximum: Int32
    public var fuzz: Int32
    public var flat: Int32
    public var resolution: Int32

    public init(code: UInt16, minimum: Int32, maximum: Int32, fuzz: Int32 = 0, flat: Int32 = 0, resolution: Int32 = 0) {
        self.code = code
        self.minimum = minimum
        self.maximum = maximum
        self.fuzz = fuzz
        self.flat = flat
        self.resolution = resolution
    }
}

/// What a device is: its name, id and capabilities. Read from an evemu header
/// or from a live device; it is all the keyboard classifier needs.
public struct DeviceDescription: Sendable, Hashable {
    public var name: String
    public var id: InputID
    /// `INPUT_PROP_*` bits.
    public var properties: Bitmask
    /// Capability bits per event type (index = `EV_*`); `EV_SYN`'s entry lists the types.
    public var capabilities: [Bitmask]
    public var absAxes: [AbsAxis]
    /// LEDs that were on (`L:` lines), as code → state.
    public var ledStates: [UInt16: Int32]
    /// Switches that were on (`S:` lines), or their state when a live device was opened.
    public var switchStates: [UInt16: Int32]
    /// udev's `ID_INTEGRATION` for the node, where udev set it (live devices only).
    public var udevIntegration: KeyboardIntegration?
    /// The device's path under /sys (`/devices/virtual/input/input7`), where it was looked up
    /// (live devices only): a uinput device lives under `/devices/virtual/input` whatever bus
    /// it declares.
    public var sysfsPath: String?
    /// udev's `ID_SEAT` for the node (live devices only); nil means `seat0`, as logind says.
    public var udevSeat: String?

    /// The logind seat the device belongs to.
    public var seat: String { udevSeat ?? ActiveSessions.defaultSeat }

    public init(
        name: String,
        id: InputID = InputID(bustype: 0, vendor: 0, product: 0, version: 0),
        properties: Bitmask = Bitmask(),
        capabilities: [Bitmask] = [],
        absAxes: [AbsAxis] = [],
        ledStates: [UInt16: Int32] = [:],
        switchStates: [UInt16: Int32] = [:],
        udevIntegration: KeyboardIntegration? = nil,
        sysfsPath: String? = nil
    ) {
        self.name = name
        self.id = id
        self.properties = properties
        self.capabilities = capabilities + Array(repeating: Bitmask(), count: max(0, EventType.count - capabilities.count))
        // EV_SYN: SYN_REPORT, SYN_CONFIG and SYN_DROPPED, as every evdev device has (and evemu writes).
        self.capabilities[0] = Bitmask(bytes: [0x0b])
        self.absAxes = absAxes
        self.ledStates = ledStates
        self.switchStates = switchStates
        self.udevIntegration = udevIntegration
        self.sysfsPath = sysfsPath
    }

    /// Whether the sysfs path says the kernel made the device for a program (uinput).
    public var isUinput: Bool { sysfsPath?.hasPrefix("/devices/virtual/input/") ?? false }

    public func has(type: UInt16) -> Bool {
        Int(type) < capabilities.count && !capabilities[Int(type)].isEmpty
    }

    public func has(type: UInt16, code: UInt16) -> Bool {
        Int(type) < capabilities.count && capabilities[Int(type)].contains(Int(code))
    }

    public mutating func enable(type: UInt16, code: UInt16) {
        capabilities[Int(type)].insert(Int(code))
    }

    /// A description for a file that holds only `E:` lines: a generic keyboard
    /// with every key code libevdev knows, so it classifies as a keyboard, on the USB bus
    /// (external: a recording of a keyboard someone plugged in, as it always counted).
    public static func genericKeyboard(name: String) -> DeviceDescription {
        var caps = [Bitmask](repeating: Bitmask(), count: EventType.count)
        caps[Int(EventType.key)] = Bitmask(codes: 1..<0x100)
        caps[Int(EventType.msc)] = Bitmask(codes: [4])
        caps[Int(EventType.led)] = Bitmask(codes: 0..<3)
        caps[Int(EventType.rep)] = Bitmask(codes: 0..<2)
        return DeviceDescription(
            name: name, id: InputID(bustype: BusType.usb, vendor: 0, product: 0, version: 0), capabilities: caps)
    }
}
