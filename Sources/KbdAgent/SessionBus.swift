import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The user's session bus through sd-bus (libsystemd, loaded when the first bus is
/// opened: in the agent's DesktopProcess child). Owns one `sd_bus`: opened from `DBUS_SESSION_BUS_ADDRESS` (as sd-bus does for
/// the user bus), closed on deinit. Calls are synchronous with a 2 s timeout: they happen
/// only when presence changes, never per key.
final class SessionBus {
    private var bus: OpaquePointer?
    private var sd = kbd_sd_bus()

    struct Failure: Error, CustomStringConvertible {
        var operation: String
        var message: String
        var description: String { "\(operation): \(message)" }
    }

    init() throws(Failure) {
        let loaded = kbd_sd_bus_load(&sd)
        guard loaded == 0 else {
            throw Failure(operation: "session bus", message: "cannot load libsystemd.so.0 (\(String(cString: strerror(-loaded))))")
        }
        var b: OpaquePointer?
        let r = sd.open_user(&b)
        guard r >= 0, let b else { throw Failure(operation: "session bus", message: String(cString: strerror(-r))) }
        _ = sd.set_method_call_timeout(b, 2_000_000)
        bus = b
    }

    deinit { if let bus { _ = sd.flush_close_unref(bus) } }

    private func check(_ r: Int32, _ error: inout sd_bus_error, _ operation: String) throws(Failure) {
        defer { sd.error_free(&error) }
        guard r < 0 else { return }
        let message = error.message.map { String(cString: $0) } ?? String(cString: strerror(-r))
        throw Failure(operation: operation, message: message)
    }

    /// Whether a well-known name (a service) has an owner now.
    func hasOwner(_ name: String) -> Bool {
        var error = sd_bus_error()
        var has: Int32 = 0
        let r = kbd_bus_name_has_owner(&sd, bus, name, &has, &error)
        sd.error_free(&error)
        return r >= 0 && has != 0
    }

    func call(_ destination: String, _ path: String, _ interface: String, _ member: String, bool value: Bool) throws(Failure) {
        var error = sd_bus_error()
        try check(kbd_bus_call_bool(&sd, bus, destination, path, interface, member, value ? 1 : 0, &error), &error, "\(interface).\(member)")
    }

    func getBool(_ destination: String, _ path: String, _ interface: String, _ property: String) throws(Failure) -> Bool {
        var error = sd_bus_error()
        var value: Int32 = 0
        try check(kbd_bus_get_bool(&sd, bus, destination, path, interface, property, &value, &error), &error, "\(interface).\(property)")
        return value != 0
    }

    func setBool(_ destination: String, _ path: String, _ interface: String, _ property: String, _ value: Bool) throws(Failure) {
        var error = sd_bus_error()
        try check(kbd_bus_set_bool(&sd, bus, destination, path, interface, property, value ? 1 : 0, &error), &error, "\(interface).\(property)")
    }
}
