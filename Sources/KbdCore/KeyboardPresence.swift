/// The set of attached hardware keyboards and the `hardware_keyboard`
/// transitions it implies, debounced: when the last keyboard leaves, the
/// change to false is held for `debounceMilliseconds` and dropped if a
/// keyboard comes back in that time (a USB re-enumeration does not flap).
/// A keyboard arriving makes presence true at once. Pure; time comes from events.
public struct KeyboardPresence: Sendable {
    public static let defaultDebounceMilliseconds = 500

    public let debounceMilliseconds: Int
    public private(set) var keyboards: Set<DeviceID> = []
    /// What subscribers were last told.
    public private(set) var reported = false
    private var pendingFalseAt: EventTime?

    public init(debounceMilliseconds: Int = defaultDebounceMilliseconds) {
        self.debounceMilliseconds = debounceMilliseconds
    }

    /// The time a pending change to false becomes final.
    public var nextDeadline: EventTime? { pendingFalseAt }

    /// A keyboard attached; returns `true` if presence changed.
    public mutating func attach(_ device: DeviceID, at time: EventTime) -> Bool? {
        keyboards.insert(device)
        pendingFalseAt = nil
        if !reported {
            reported = true
            return true
        }
        return nil
    }

    /// A keyboard detached; presence goes false only after the debounce (see `expire`).
    public mutating func detach(_ device: DeviceID, at time: EventTime) -> Bool? {
        guard keyboards.remove(device) != nil else { return nil }
        if keyboards.isEmpty && reported {
            if debounceMilliseconds == 0 {
                reported = false
                return false
            }
            pendingFalseAt = time.adding(milliseconds: debounceMilliseconds)
        }
        return nil
    }

    /// Applies a pending change whose deadline is at or before `time`;
    /// returns the deadline when presence became false.
    public mutating func expire(at time: EventTime) -> EventTime? {
        guard let deadline = pendingFalseAt, time >= deadline else { return nil }
        pendingFalseAt = nil
        reported = false
        return deadline
    }
}
