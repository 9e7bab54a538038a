/// What a device source (live evdev or a recording) tells the pipeline.
public enum SourceEvent: Sendable {
    /// A device appeared. `verdict` is the keyboard classification when the source
    /// already made it (the daemon decides from it whether to keep the device open);
    /// nil lets the pipeline classify the description with its device filter.
    indirect case attached(DeviceID, DeviceDescription, verdict: KeyboardClassifier.Verdict?, time: EventTime)
    /// One kernel event from a device.
    case input(DeviceID, InputEvent)
    /// After SYN_DROPPED the source re-read the device: these keys are down now.
    /// nil when the source cannot know (a recording), then every key is released.
    indirect case resynchronized(DeviceID, keysDown: Set<UInt16>?, time: EventTime)
    /// A switch device's lid and tablet-mode states now, read from the kernel after a
    /// SYN_DROPPED (changes lost in the drop come back this way).
    indirect case switches(DeviceID, [UInt16: Int32], time: EventTime)
    /// The device went away (unplugged, ENODEV, end of recording).
    case detached(DeviceID, time: EventTime)

    public var time: EventTime {
        switch self {
        case .attached(_, _, _, let t), .resynchronized(_, _, let t), .switches(_, _, let t), .detached(_, let t): return t
        case .input(_, let e): return e.time
        }
    }

    /// A device appeared, to be classified by the pipeline.
    public static func attached(_ id: DeviceID, _ description: DeviceDescription, time: EventTime) -> SourceEvent {
        .attached(id, description, verdict: nil, time: time)
    }
}
