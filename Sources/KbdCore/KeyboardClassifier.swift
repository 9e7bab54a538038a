import KbdSystem
/// Decides whether a device is a keyboard, from its capability bits alone
/// (pure: no I/O), in the spirit of udev's `input_id` builtin: a keyboard has
/// `EV_KEY` with the whole block `KEY_ESC` … `KEY_S` (codes 1–31).
///
/// Beyond input_id it rejects devices that claim a keyboard's key block but
/// are evidently something else: a pointer whose name says mouse/touchpad,
/// tablet pads, and devices without `EV_REP` and without LEDs that only send
/// buttons. Config can force a verdict by name or vendor:product.
public enum KeyboardClassifier {
    public struct Verdict: Sendable, Equatable, CustomStringConvertible {
        public var isKeyboard: Bool
        public var reason: String
        /// Built in, plugged in or a program's (meaningful for keyboards).
        public var integration: KeyboardIntegration
        /// Why `integration` is what it is (`uinput device (/devices/virtual/input/input7)`,
        /// `bus USB`, `[devices] virtual`).
        public var integrationReason: String
        /// A lid or tablet-mode switch device: kept open for presence, never a keyboard.
        public var isSwitch: Bool

        public init(isKeyboard: Bool, reason: String, integration: KeyboardIntegration = .external, integrationReason: String = "",
                    isSwitch: Bool = false) {
            self.isKeyboard = isKeyboard
            self.reason = reason
            self.integration = integration
            self.integrationReason = integrationReason
            self.isSwitch = isSwitch
        }

        /// Whether the service keeps the device open (keyboards and presence switches).
        public var isKept: Bool { isKeyboard || isSwitch }

        public var description: String {
            if isKeyboard {
                return "keyboard (\(integration.rawValue)\(integrationReason.isEmpty ? "" : ": " + integrationReason)): " + reason
            }
            if isSwitch { return "switch: " + reason }
            return "not a keyboard: " + reason
        }
    }

    /// `KEY_ESC` … `KEY_S` (bits 1–31 of the key mask: udev's `0xFFFFFFFE`).
    package static let fullKeyboardBlock = 1...31

    public static func classify(_ d: DeviceDescription, filter: DeviceFilter = DeviceFilter()) -> Verdict {
        let forced = filter.verdict(name: d.name, id: d.id)
        if forced == false { return Verdict(isKeyboard: false, reason: "excluded by the config") }
        // Switches first: a device with a lid or tablet-mode switch is read for presence and never
        // counts as a keyboard (the keys such platform devices carry are hotkeys, not a keyboard).
        let switches = SwitchCode.presenceSwitches.filter { d.has(type: EventType.sw, code: $0) }
        if !switches.isEmpty {
            let names = switches.map { EventCodeNames.name(type: EventType.sw, code: $0) ?? String($0) }
            return Verdict(isKeyboard: false, reason: "switch device (" + names.joined(separator: ", ") + ")", isSwitch: true)
        }
        let (integration, integrationReason) = integrationWithReason(of: d, filter: filter)
        if forced == true {
            return Verdict(isKeyboard: true, reason: "included by the config", integration: integration, integrationReason: integrationReason)
        }
        guard d.has(type: EventType.key) else { return Verdict(isKeyboard: false, reason: "no EV_KEY") }
        let keys = d.capabilities[Int(EventType.key)]
        let missing = fullKeyboardBlock.filter { !keys.contains($0) }
        if !missing.isEmpty {
            let keyCount = keys.members.filter { $0 < 0x100 }.count
            if keys.contains(0x74) && keyCount <= 4 { return Verdict(isKeyboard: false, reason: "power button (KEY_POWER only)") }
            return Verdict(
                isKeyboard: false,
                reason: "lacks \(missing.count) of KEY_ESC…KEY_S (e.g. \(EventCodeNames.keyName(UInt16(missing[0])))); has \(keyCount) keyboard keys")
        }
        let lowerName = d.name.lowercased()
        let hasPointer = d.has(type: EventType.rel, code: 0) && d.has(type: EventType.rel, code: 1) && keys.contains(0x110)
        if hasPointer, lowerName.includes("mouse"), !lowerName.includes("keyboard") {
            return Verdict(isKeyboard: false, reason: "a mouse that advertises keyboard keys (name says mouse)")
        }
        if d.properties.contains(0x01) /* INPUT_PROP_DIRECT */ && keys.contains(0x100) && !d.has(type: EventType.rep) {
            return Verdict(isKeyboard: false, reason: "tablet pad or touch device")
        }
        return Verdict(isKeyboard: true, reason: "has KEY_ESC…KEY_S" + (hasPointer ? " (keyboard with a pointer)" : ""),
                       integration: integration, integrationReason: integrationReason)
    }

    /// `[devices] internal`/`external`/`virtual` first, then udev's `ID_INTEGRATION` where udev
    /// set it, then a uinput device (its sysfs path), then a known remapper's id or name (for
    /// recordings, which have no sysfs path), then the bus (i8042/serio and host are built in,
    /// BUS_VIRTUAL is virtual).
    public static func integration(of d: DeviceDescription, filter: DeviceFilter = DeviceFilter()) -> KeyboardIntegration {
        integrationWithReason(of: d, filter: filter).integration
    }

    /// The integration and why.
    public static func integrationWithReason(of d: DeviceDescription, filter: DeviceFilter = DeviceFilter())
        -> (integration: KeyboardIntegration, reason: String)
    {
        if let forced = filter.integration(name: d.name, id: d.id) { return (forced, "[devices] \(forced.rawValue) in the config") }
        if let udev = d.udevIntegration { return (udev, "udev ID_INTEGRATION=\(udev.rawValue)") }
        if d.isUinput, let path = d.sysfsPath { return (.virtual, "uinput device (\(path))") }
        if let remapper = KnownRemappers.match(name: d.name, id: d.id) { return (.virtual, "\(remapper)'s virtual keyboard") }
        let integration = KeyboardIntegration.fromBus(d.id.bustype)
        return (integration, "bus \(BusType.name(d.id.bustype))")
    }
}

/// Remappers that grab the physical keyboard and type through a uinput keyboard of their own,
/// known by the id or name of that keyboard (what a recording of it carries: a live device is
/// known by its sysfs path instead, whatever it is called).
public enum KnownRemappers {
    public struct Entry: Sendable {
        /// The remapper.
        public var remapper: String
        /// `vvvv:pppp`, or nil.
        public var id: String?
        /// The device name, or its start when `prefix`.
        public var name: String
        public var prefix: Bool
    }

    public static let entries: [Entry] = [
        Entry(remapper: "keyd", id: "0fac:0ade", name: "keyd virtual keyboard", prefix: false),
        Entry(remapper: "keyd", id: "0fac:1ade", name: "keyd virtual pointer", prefix: false),
        Entry(remapper: "kanata", id: nil, name: "kanata", prefix: false),
        Entry(remapper: "xremap", id: nil, name: "xremap", prefix: true),
        Entry(remapper: "input-remapper", id: nil, name: "input-remapper", prefix: true),
    ]

    /// The remapper whose keyboard this is, or nil.
    public static func match(name: String, id: InputID) -> String? {
        let vp = id.vendorProduct
        for e in entries {
            if let eid = e.id, eid == vp { return e.remapper }
            if e.prefix ? name.hasPrefix(e.name) : name == e.name { return e.remapper }
        }
        return nil
    }
}
