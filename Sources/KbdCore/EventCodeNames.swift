import CEvdev

/// Names of event types and codes (`KEY_A`, `EV_KEY`), from libevdev's tables.
/// Pure lookups: no device, no I/O.
public enum EventCodeNames {
    /// The name of a code, e.g. `KEY_A`; nil when libevdev has none.
    /// The corresponding C function is `libevdev_event_code_get_name`.
    public static func name(type: UInt16, code: UInt16) -> String? {
        guard let cName = libevdev_event_code_get_name(UInt32(type), UInt32(code)) else { return nil }
        return String(cString: cName)
    }

    /// The name of a key code, or `KEY_<code>` in decimal for codes libevdev does not name.
    public static func keyName(_ code: UInt16) -> String {
        name(type: EventType.key, code: code) ?? "KEY_\(code)"
    }

    /// The name of an event type, e.g. `EV_KEY`.
    /// The corresponding C function is `libevdev_event_type_get_name`.
    public static func typeName(_ type: UInt16) -> String? {
        guard let cName = libevdev_event_type_get_name(UInt32(type)) else { return nil }
        return String(cString: cName)
    }

    /// The code for a name such as `KEY_LEFTCTRL` (or `BTN_LEFT`), nil if unknown.
    /// The corresponding C function is `libevdev_event_code_from_name`.
    public static func keyCode(named name: String) -> UInt16? {
        let code = libevdev_event_code_from_name(UInt32(EventType.key), name)
        return code < 0 ? nil : UInt16(code)
    }

    /// The highest code of an event type, nil for types without codes.
    /// The corresponding C function is `libevdev_event_type_get_max`.
    public static func maxCode(type: UInt16) -> Int? {
        let max = libevdev_event_type_get_max(UInt32(type))
        return max < 0 ? nil : Int(max)
    }
}
