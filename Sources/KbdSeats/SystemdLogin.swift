public import KbdCore
import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// logind through sd-login (libsystemd, loaded with dlopen when first needed: the idle
/// service never maps it): `sd_get_seats`, `sd_seat_get_active`, `sd_session_get_uid`,
/// and an `sd_login_monitor` on the seats whose descriptor goes into the daemon's epoll.
/// sd-login reads logind's files under /run/systemd (seats, sessions, users), which logind
/// replaces by rename; elogind's libelogind reads its own, the same way.
public final class SystemdLogin: LoginSource {
    private var functions: kbd_sd_login
    private var monitor: OpaquePointer?
    public let changeDescriptor: Int32?

    /// Loads sd-login and starts watching the seats; throws why logind cannot be followed
    /// (libsystemd missing, the system not booted with systemd, no logind).
    public init() throws(SeatsUnavailable) {
        var f = kbd_sd_login()
        let loaded = kbd_sd_login_load(&f)
        guard loaded == 0 else {
            throw SeatsUnavailable(loaded == -ENOENT ? "libsystemd.so.0 is not installed" : "libsystemd.so.0 lacks sd-login")
        }
        guard f.booted() > 0 else { throw SeatsUnavailable("the system was not booted with systemd (no /run/systemd/system)") }
        var m: OpaquePointer?
        let r = f.monitor_new("seat", &m)
        guard r >= 0, let m else {
            throw SeatsUnavailable("logind is not running (sd_login_monitor_new: \(String(cString: strerror(-r))))")
        }
        functions = f
        monitor = m
        let fd = f.monitor_get_fd(m)
        changeDescriptor = fd >= 0 ? fd : nil
    }

    deinit {
        if let monitor { _ = functions.monitor_unref(monitor) }
    }

    public func acknowledgeChange() {
        if let monitor { _ = functions.monitor_flush(monitor) }
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
    public var changeDescriptor: Int32? { nil }
    public func acknowledgeChange() {}
}
