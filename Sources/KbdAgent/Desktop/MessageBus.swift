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
    /// Where the answers of `ask` land (C callbacks write them; `step` drains them).
    private let answers = UnsafeMutablePointer<kbd_bus_answers>.allocate(capacity: 1)
    /// The connection's timeout for a call and for the answer to `ask`.
    private let callTimeoutMicroseconds: UInt64

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
        self.callTimeoutMicroseconds = callTimeoutMicroseconds
        bus = b
        answers.initialize(to: kbd_bus_answers())
    }

    // Questions still unanswered when the bus closes are dropped with it (their small
    // records are not freed: the watch closes its bus only to exit).
    deinit {
        if let bus { _ = sd.flush_close_unref(bus) }
        answers.deallocate()
    }

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

    /// The same with its own timeout instead of the connection's (a call that may have to
    /// wait for its service to be started on demand).
    func call(_ destination: String, _ path: String, _ interface: String, _ member: String, string value: String,
              timeoutMicroseconds: UInt64) throws(Failure) {
        _ = sd.set_method_call_timeout(bus, timeoutMicroseconds)
        defer { _ = sd.set_method_call_timeout(bus, callTimeoutMicroseconds) }
        try call(destination, path, interface, member, string: value)
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

    /// A method with one string argument that answers one uint32.
    func callUInt32(_ destination: String, _ path: String, _ interface: String, _ member: String, string value: String) throws(Failure) -> UInt32 {
        var error = sd_bus_error()
        var out: UInt32 = 0
        try check(kbd_bus_call_string_arg_uint32(&sd, bus, destination, path, interface, member, value, &out, &error), &error, "\(interface).\(member)")
        return out
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

    /// The answer to a question asked with `ask`: nil when it failed or did not come within
    /// the call timeout.
    struct Answer {
        var tag: UInt64
        var value: UInt32?
        var words: [UInt32]?
    }

    /// Asks `member` (no argument, or one string) without waiting; the answer comes out of
    /// `step` with `tag`, read as a uint32 or (`words`) an array of uint32.
    func ask(tag: UInt64, _ destination: String, _ path: String, _ interface: String, _ member: String,
             argument: String? = nil, words: Bool) throws(Failure) {
        let r = kbd_bus_ask(&sd, bus, answers, tag, words ? CChar(UInt8(ascii: "a")) : CChar(UInt8(ascii: "u")), destination, path, interface, member, argument)
        guard r >= 0 else { throw Failure(operation: "\(interface).\(member)", message: String(cString: strerror(-r))) }
    }

    /// A method call to this connection (answered at once with an empty return).
    struct Call {
        var sender: String
        var path: String
        var interface: String
        var member: String
        /// Its argument when it is one int32.
        var value: Int32?
    }

    /// Processes what is there without waiting: the signals the matches asked for, the
    /// answers that came (or whose time passed) and the method calls to this connection;
    /// throws when the connection ended.
    func step() throws(Failure) -> (signals: [Signal], answers: [Answer], calls: [Call]) {
        var signals: [Signal] = []
        var out: [Answer] = []
        var calls: [Call] = []
        while true {
            var m: OpaquePointer?
            let r = kbd_bus_step(&sd, bus, &m)
            guard r >= 0 else { throw Failure(operation: "bus", message: String(cString: strerror(-r))) }
            let queued = Int(answers.pointee.count)
            if queued > 0 {
                withUnsafeBytes(of: &answers.pointee.items) { raw in
                    let items = raw.bindMemory(to: kbd_bus_answer.self)
                    for a in items.prefix(queued) {
                        let words = withUnsafeBytes(of: a.words) { Array($0.bindMemory(to: UInt32.self).prefix(Int(a.count))) }
                        out.append(Answer(tag: a.tag, value: a.missing != 0 ? nil : a.value, words: a.missing != 0 ? nil : words))
                    }
                }
                answers.pointee.count = 0
            }
            if let m {
                defer { _ = sd.message_unref(m) }
                if let s = Self.signal(&sd, m) {
                    signals.append(s)
                } else {
                    var fields = kbd_bus_call_fields()
                    if kbd_bus_read_call(&sd, m, &fields) > 0 {
                        func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
                        calls.append(Call(sender: text(fields.sender), path: text(fields.path), interface: text(fields.interface),
                                          member: text(fields.member), value: fields.has_value != 0 ? fields.value : nil))
                    }
                }
            }
            if r == 0 { return (signals, out, calls) }
        }
    }

    /// Waits until the bus has something for `step`, an unanswered question's time passed, or
    /// one of `others` (at most 2; -1 is skipped) is readable; which of them are. Without
    /// questions it waits as long as it takes.
    func wait(orReadable others: [Int32]) throws(Failure) -> [Bool] {
        var ready: Int32 = 0
        let r = others.withUnsafeBufferPointer { kbd_bus_wait_with(&sd, bus, $0.baseAddress, Int32($0.count), &ready) }
        guard r >= 0 else { throw Failure(operation: "bus", message: String(cString: strerror(-r))) }
        return others.indices.map { ready & (1 << $0) != 0 }
    }

    /// The descriptor to wait on for this connection (another bus's `wait` can watch it).
    var fd: Int32 { sd.get_fd(bus) }

    /// This connection's unique name (":1.42").
    func uniqueName() throws(Failure) -> String {
        var out = [CChar](repeating: 0, count: 256)
        let r = kbd_bus_unique_name(&sd, bus, &out, out.count)
        guard r >= 0 else { throw Failure(operation: "unique name", message: String(cString: strerror(-r))) }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A method without arguments whose answer is not read.
    func call(_ destination: String, _ path: String, _ interface: String, _ member: String) throws(Failure) {
        var error = sd_bus_error()
        try check(kbd_bus_call_noarg(&sd, bus, destination, path, interface, member, &error), &error, "\(interface).\(member)")
    }

    /// A method with one string argument that answers one string.
    func callString(_ destination: String, _ path: String, _ interface: String, _ member: String, string value: String) throws(Failure) -> String {
        var error = sd_bus_error()
        var out = [CChar](repeating: 0, count: 1024)
        try check(kbd_bus_call_string_arg_string(&sd, bus, destination, path, interface, member, value, &out, out.count, &error),
                  &error, "\(interface).\(member)")
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A method with two string arguments that answers one int32.
    func callInt32(_ destination: String, _ path: String, _ interface: String, _ member: String, _ a: String, _ b: String) throws(Failure) -> Int32 {
        var error = sd_bus_error()
        var out: Int32 = 0
        try check(kbd_bus_call_strings_int32(&sd, bus, destination, path, interface, member, a, b, &out, &error), &error, "\(interface).\(member)")
        return out
    }

    private static func signal(_ sd: inout kbd_sd_bus, _ m: OpaquePointer) -> Signal? {
        var fields = kbd_bus_signal_fields()
        guard kbd_bus_read_signal(&sd, m, &fields) > 0 else { return nil }
        func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
        return Signal(interface: text(fields.interface), member: text(fields.member), sender: text(fields.sender), path: text(fields.path),
                      detail: text(fields.detail), detail1: fields.detail1, newOwner: text(fields.new_owner))
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
            guard let s = Self.signal(&sd, m) else { continue }
            return s
        }
    }
}
