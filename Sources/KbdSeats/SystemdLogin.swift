public import KbdCore
import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// logind through sd-login (libsystemd, loaded with dlopen when first needed: the idle
/// service never maps it): `sd_get_seats`, `sd_seat_get_active`, `sd_session_get_state`,
/// `sd_session_get_class`, `sd_session_get_uid`, and two `sd_login_monitor`s, on the seats
/// and on the sessions (a logout changes only the session's file: logind keeps the
/// session as the seat's active one, in state `closing`, while any of its processes lives).
/// Both monitors' descriptors are watched by the daemon's loop (each readable when its
/// category changed; no epoll inside an epoll).
/// sd-login reads logind's files under /run/systemd (seats, sessions, users), which logind
/// replaces by rename; elogind's libelogind reads its own, the same way.
public final class SystemdLogin: LoginSource {
    private var functions: kbd_sd_login
    private var monitors: [OpaquePointer] = []
    public private(set) var changeDescriptors: [Int32] = []

    /// Loads sd-login and starts watching the seats and sessions; throws why logind cannot
    /// be followed (libsystemd missing, the system not booted with systemd, no logind).
    public init() throws(SeatsUnavailable) {
        var f = kbd_sd_login()
        let loaded = kbd_sd_login_load(&f)
        guard loaded == 0 else {
            throw SeatsUnavailable(loaded == -ENOENT ? "libsystemd.so.0 is not installed" : "libsystemd.so.0 lacks sd-login")
        }
        guard f.booted() > 0 else { throw SeatsUnavailable("the system was not booted with systemd (no /run/systemd/system)") }
        functions = f
        for category in ["seat", "session"] {
            var m: OpaquePointer?
            let r = f.monitor_new(category, &m)
            guard r >= 0, let m else {
                throw SeatsUnavailable("logind is not running (sd_login_monitor_new(\(category)): \(String(cString: strerror(-r))))")
            }
            monitors.append(m)
            let fd = f.monitor_get_fd(m)
            guard fd >= 0 else { throw SeatsUnavailable("sd_login_monitor(\(category)): no descriptor to watch") }
            changeDescriptors.append(fd)
        }
    }

    deinit {
        for monitor in monitors { _ = functions.monitor_unref(monitor) }
    }

    public func acknowledgeChange() {
        for monitor in monitors { _ = functions.monitor_flush(monitor) }
    }

    public func read() -> ActiveSessions {
        var result = ActiveSessions(available: true)
        // Seat names are short ("seat0", "seat-usb1"); 64 of them fit.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 8192) { buffer in
            let n = kbd_sd_login_seats(&functions, buffer.baseAddress!, buffer.count)
            guard n > 0 else { return }
            var start = 0
            for _ in 0..<n {
                let seat = String(cString: buffer.baseAddress! + start)
                start += seat.utf8.count + 1
                var uid: uid_t = 0
                if kbd_sd_login_active_uid(&functions, seat, &uid) == 0 { result.activeUID[seat] = UInt32(uid) }
            }
        }
        return result
    }
}

/// No logind: nobody is known to be at a keyboard, nothing to watch.
public final class NoLogin: LoginSource {
    public let reason: String
    public init(reason: String) { self.reason = reason }
    public func read() -> ActiveSessions { .unavailable }
    public var changeDescriptors: [Int32] { [] }
    public func acknowledgeChange() {}
}
