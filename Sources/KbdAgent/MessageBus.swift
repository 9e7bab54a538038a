import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// A message bus through sd-bus (libsystemd, loaded when the first bus is opened: in a
/// child process of the agent, never in the agent itself). Owns one `sd_bus`: the user's
/// session bus (from `DBUS_SESSION_BUS_ADDRESS`, as sd-bus does for the user bus) or a bus
/// at an address (the accessibility bus), closed on deinit. Calls are synchronous with a
/// 2 s timeout: they happen when presence or the focus changes, never per key.
final class MessageBus {
    private var bus: OpaquePointer?
    private var sd = kbd_sd_bus()

    struct Failure: Error, CustomStringConvertible {
        var operation: String
        var message: String
        var description: String { "\(operation): \(message)" }
    }

    /// The user's session bus (`address` nil), or the bus at `address` (a D-Bus address such
    /// as `unix:path=…`: the accessibility bus), as a client.
    init(address: String? = nil, callTimeoutMicroseconds: UInt64 = 2_000_000) throws(Failure) {
        let what = address.map { "bus at \($0)" } ?? "session bus"
        let loaded = kbd_sd_bus_load(&sd)
        guard loaded == 0 else {
            throw Failure(operation: what, message: "cannot load libsystemd.so.0 (\(String(cString: strerror(-loaded))))")
        }
        var b: OpaquePointer?
        let r: Int32
        if let address { r = kbd_bus_open_address(&sd, address, &b) } else { r = sd.open_user(&b) }
        guard r >= 0, let b else { throw Failure(operation: what, message: String(cString: strerror(-r))) }
        _ = sd.set_method_call_timeout(b, callTimeoutMicroseconds)
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

    /// A method without arguments that answers one string.
    func callString(_ destination: String, _ path: String, _ interface: String, _ member: String) throws(Failure) -> String {
        var error = sd_bus_error()
        var out = [CChar](repeating: 0, count: 1024)
        try check(kbd_bus_call_string(&sd, bus, destination, path, interface, member, &out, out.count, &error), &error, "\(interface).\(member)")
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A method with one string argument and no answer.
    func call(_ destination: String, _ path: String, _ interface: String, _ member: String, string value: String) throws(Failure) {
        var error = sd_bus_error()
        try check(kbd_bus_call_string_arg(&sd, bus, destination, path, interface, member, value, &error), &error, "\(interface).\(member)")
    }

    /// A method without arguments that answers one uint32.
    func callUInt32(_ destination: String, _ path: String, _ interface: String, _ member: String) throws(Failure) -> UInt32 {
        var error = sd_bus_error()
        var value: UInt32 = 0
        try check(kbd_bus_call_uint32(&sd, bus, destination, path, interface, member, &value, &error), &error, "\(interface).\(member)")
        return value
    }

    /// A method without arguments that answers an array of uint32 (at most 8 are kept).
    func callUInt32Array(_ destination: String, _ path: String, _ interface: String, _ member: String) throws(Failure) -> [UInt32] {
        var error = sd_bus_error()
        var words = [UInt32](repeating: 0, count: 8)
        var count = 0
        try check(kbd_bus_call_uint32_array(&sd, bus, destination, path, interface, member, &words, words.count, &count, &error),
                  &error, "\(interface).\(member)")
        return Array(words.prefix(count))
    }

    /// A method without arguments that answers a(sss) (at most 16 KiB of them).
    func callStringTriples(_ destination: String, _ path: String, _ interface: String, _ member: String) throws(Failure) -> [[String]] {
        var error = sd_bus_error()
        var out = [CChar](repeating: 0, count: 16384)
        try check(kbd_bus_call_string_triples(&sd, bus, destination, path, interface, member, &out, out.count, &error),
                  &error, "\(interface).\(member)")
        let text = String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    /// An object reference: an application's bus name and an object path.
    struct ObjectReference: Equatable {
        var name: String
        var path: String
    }

    private static func objects(_ buffer: [CChar]) -> [ObjectReference] {
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            return parts.count == 2 ? ObjectReference(name: String(parts[0]), path: String(parts[1])) : nil
        }
    }

    /// A method without arguments that answers object references, a(so) (at most 16 KiB of them).
    func callObjects(_ destination: String, _ path: String, _ interface: String, _ member: String) throws(Failure) -> [ObjectReference] {
        var error = sd_bus_error()
        var out = [CChar](repeating: 0, count: 16384)
        try check(kbd_bus_call_objects(&sd, bus, destination, path, interface, member, &out, out.count, &error), &error, "\(interface).\(member)")
        return Self.objects(out)
    }

    /// Asks the bus for the signals matching `rule` (a D-Bus match rule).
    func addMatch(_ rule: String) throws(Failure) {
        let r = kbd_bus_add_match(&sd, bus, rule)
        guard r >= 0 else { throw Failure(operation: "AddMatch \(rule)", message: String(cString: strerror(-r))) }
    }

    /// One signal that arrived: what the watchers read of it.
    struct Signal {
        var interface: String
        var member: String
        var sender: String
        var path: String
        /// The first argument when it is a string (an AT-SPI event's detail, a bus name).
        var detail: String
        /// AT-SPI events: detail1 (1: the state was set, 0: cleared).
        var detail1: Int32
        /// NameOwnerChanged: the new owner ("" when the name is gone).
        var newOwner: String
    }

    /// Waits (as long as it takes: no timeout, no wake-up) for the next signal the matches
    /// asked for; throws when the connection ended.
    func nextSignal() throws(Failure) -> Signal {
        while true {
            var m: OpaquePointer?
            let r = kbd_bus_next_message(&sd, bus, &m)
            guard r >= 0, let m else { throw Failure(operation: "bus", message: r < 0 ? String(cString: strerror(-r)) : "no message") }
            defer { _ = sd.message_unref(m) }
            var fields = kbd_bus_signal_fields()
            guard kbd_bus_read_signal(&sd, m, &fields) > 0 else { continue }
            func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
            return Signal(interface: text(fields.interface), member: text(fields.member), sender: text(fields.sender), path: text(fields.path),
                          detail: text(fields.detail), detail1: fields.detail1, newOwner: text(fields.new_owner))
        }
    }
}
