#if canImport(Glibc)
import Glibc
#endif

/// A kernel event timestamp: seconds and microseconds, as in `struct input_event`.
///
/// Stored as a single count of microseconds so that comparisons and differences
/// are exact (no floating point on the routing path).
public struct EventTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Microseconds since the recording's (or the kernel clock's) origin.
    public var microseconds: Int64

    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    public init(seconds: Int64, microseconds usec: Int64) {
        self.microseconds = seconds * 1_000_000 + usec
    }

    public static let zero = EventTime(microseconds: 0)

    public var seconds: Int64 { microseconds >= 0 ? microseconds / 1_000_000 : -((-microseconds + 999_999) / 1_000_000) }
    public var subsecondMicroseconds: Int64 { microseconds - seconds * 1_000_000 }

    public static func < (lhs: EventTime, rhs: EventTime) -> Bool { lhs.microseconds < rhs.microseconds }

    public func adding(milliseconds: Int) -> EventTime {
        EventTime(microseconds: microseconds + Int64(milliseconds) * 1000)
    }

    /// `sec.usec` with six fraction digits, the way evemu writes it and the
    /// way our JSON output prints `time`.
    public var description: String {
        var out = String(seconds)
        out.append(".")
        let usec = String(subsecondMicroseconds)
        out.append(String(repeating: "0", count: max(0, 6 - usec.count)))
        out.append(usec)
        return out
    }
}

/// `CLOCK_MONOTONIC` as an `EventTime`: the clock evdev timestamps use once
/// `libevdev_set_clock_id(CLOCK_MONOTONIC)` is set.
public func monotonicNow() -> EventTime {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return EventTime(seconds: Int64(ts.tv_sec), microseconds: Int64(ts.tv_nsec / 1000))
}
