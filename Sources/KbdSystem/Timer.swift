import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// A one-shot `CLOCK_MONOTONIC` timer as a descriptor (timerfd): readable from the
/// moment it is due until `acknowledge()`, never while disarmed, so an epoll loop
/// sleeps until then and a disarmed timer costs no wake-ups. It owns the descriptor.
package final class MonotonicTimer {
    package let fileDescriptor: Int32
    /// The absolute time it was last armed for (microseconds of `CLOCK_MONOTONIC`), nil
    /// when disarmed by `arm(at: nil)`.
    package private(set) var armedAt: Int64?

    /// The corresponding C function is `timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)`.
    package init() throws(SystemError) {
        fileDescriptor = kbd_timerfd_create()
        guard fileDescriptor >= 0 else { throw SystemError(operation: "timerfd_create", errno: errno) }
    }

    deinit { close(fileDescriptor) }

    /// Fires once at `microseconds` of `CLOCK_MONOTONIC` (at once if that has passed); nil disarms.
    /// The corresponding C function is `timerfd_settime(TFD_TIMER_ABSTIME)`.
    package func arm(at microseconds: Int64?) {
        armedAt = microseconds
        // 0 would disarm: a time at or before the clock's origin is simply "now".
        _ = kbd_timerfd_arm(fileDescriptor, microseconds.map { max($0, 1) } ?? 0)
    }

    /// Clears the readiness of an expiry (a no-op when it has not fired).
    package func acknowledge() {
        var expirations: UInt64 = 0
        _ = read(fileDescriptor, &expirations, 8)
    }
}
