/// One kernel input event (`struct input_event`), the common currency of the
/// live source (libevdev) and the replay source (evemu files).
public struct InputEvent: Sendable, Hashable {
    public var time: EventTime
    public var type: UInt16
    public var code: UInt16
    public var value: Int32

    public init(time: EventTime, type: UInt16, code: UInt16, value: Int32) {
        self.time = time
        self.type = type
        self.code = code
        self.value = value
    }

    public var isSynReport: Bool { type == EventType.syn && code == SynCode.report }
    public var isSynDropped: Bool { type == EventType.syn && code == SynCode.dropped }
    public var isKey: Bool { type == EventType.key }
}

/// Event types from `linux/input-event-codes.h` that the pipeline looks at.
public enum EventType {
    public static let syn: UInt16 = 0x00
    public static let key: UInt16 = 0x01
    public static let rel: UInt16 = 0x02
    public static let abs: UInt16 = 0x03
    public static let msc: UInt16 = 0x04
    public static let sw: UInt16 = 0x05
    public static let led: UInt16 = 0x11
    public static let snd: UInt16 = 0x12
    public static let rep: UInt16 = 0x14
    public static let ff: UInt16 = 0x15
    public static let pwr: UInt16 = 0x16
    public static let ffStatus: UInt16 = 0x17
    /// `EV_CNT`: one past the highest event type.
    public static let count: Int = 0x20
}

public enum SynCode {
    public static let report: UInt16 = 0
    public static let config: UInt16 = 1
    public static let mtReport: UInt16 = 2
    public static let dropped: UInt16 = 3
}

/// The value of an `EV_KEY` event.
public enum KeyState: String, Sendable, Hashable {
    case release
    case press
    case `repeat`

    public init?(value: Int32) {
        switch value {
        case 0: self = .release
        case 1: self = .press
        case 2: self = .repeat
        default: return nil
        }
    }
}
