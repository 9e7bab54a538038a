/// What a device source (live evdev or a recording) tells the pipeline.
public enum SourceEvent: Sendable {
    /// A device appeared; its description decides whether it is a keyboard.
    case attached(DeviceID, DeviceDescription, time: EventTime)
    /// One kernel event from a device.
    case input(DeviceID, InputEvent)
    /// After SYN_DROPPED the source re-read the device: these keys are down now.
    /// nil when the source cannot know (a recording), then every key is released.
    case resynchronized(DeviceID, keysDown: Set<UInt16>?, time: EventTime)
    /// The device went away (unplugged, ENODEV, end of recording).
    case detached(DeviceID, time: EventTime)

    public var time: EventTime {
        switch self {
        case .attached(_, _, let t), .resynchronized(_, _, let t), .detached(_, let t): return t
        case .input(_, let e): return e.time
        }
    }
}
