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
        public var description: String { (isKeyboard ? "keyboard: " : "not a keyboard: ") + reason }
    }

    /// `KEY_ESC` … `KEY_S` (bits 1–31 of the key mask: udev's `0xFFFFFFFE`).
    static let fullKeyboardBlock = 1...31

    public static func classify(_ d: DeviceDescription, filter: DeviceFilter = DeviceFilter()) -> Verdict {
        if let forced = filter.verdict(name: d.name, id: d.id) {
            return Verdict(isKeyboard: forced, reason: forced ? "included by the config" : "excluded by the config")
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
        if hasPointer, ["mouse"].contains(where: { lowerName.contains($0) }), !lowerName.contains("keyboard") {
            return Verdict(isKeyboard: false, reason: "a mouse that advertises keyboard keys (name says mouse)")
        }
        if d.properties.contains(0x01) /* INPUT_PROP_DIRECT */ && keys.contains(0x100) && !d.has(type: EventType.rep) {
            return Verdict(isKeyboard: false, reason: "tablet pad or touch device")
        }
        return Verdict(isKeyboard: true, reason: "has KEY_ESC…KEY_S" + (hasPointer ? " (keyboard with a pointer)" : ""))
    }
}
