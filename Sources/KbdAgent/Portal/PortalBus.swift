import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The portal backend's connection to the user's session bus (sd-bus, in the agent's portal
/// child: the agent itself never maps libsystemd). Owns one `sd_bus`, closed on deinit, and
/// the well-known name `PortalBus.name`. Calls come out of `next` with the message they
/// answer; each is answered exactly once through `reply…` (sd-bus keeps the message until then).
final class PortalBus {
    static let name = "org.freedesktop.impl.portal.desktop.kbd_commandd"
    static let objectPath = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.impl.portal.GlobalShortcuts"
    /// Only the desktop portal's frontend (the owner of this name) may call the backend.
    static let frontend = "org.freedesktop.portal.Desktop"

    private var bus: OpaquePointer?
    private var sd = kbd_sd_bus()
    private var portal = kbd_sd_bus_portal()

    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Connects to the session bus and takes the backend's name (fails when another agent has it).
    init(address: String?) throws(Failure) {
        let loaded = kbd_sd_bus_load(&sd)
        guard loaded == 0, kbd_sd_bus_portal_load(&portal) == 0 else {
            throw Failure(message: "cannot load libsystemd.so.0 (\(String(cString: strerror(-loaded))))")
        }
        var b: OpaquePointer?
        let r = address.map { kbd_bus_open_address(&sd, $0, &b) } ?? sd.open_user(&b)
        guard r >= 0, let b else { throw Failure(message: "session bus: \(String(cString: strerror(-r)))") }
        bus = b
        let n = portal.request_name(b, Self.name, 0)
        guard n >= 0 else { throw Failure(message: "cannot own \(Self.name): \(String(cString: strerror(-n)))") }
    }

    deinit {
        if let bus { _ = sd.flush_close_unref(bus) }
    }

    /// One method call to the backend: its header and the message to answer.
    struct Call {
        var sender: String
        var path: String
        var interface: String
        var member: String
        var signature: String
        /// Borrowed: valid until the reply (the caller answers every call it got).
        let message: OpaquePointer
    }

    /// The next call waiting (nil: nothing left for now); throws when the connection ended.
    /// The message must be answered and then given to `done`.
    func next() throws(Failure) -> Call? {
        while true {
            var m: OpaquePointer?
            let r = kbd_bus_step(&sd, bus, &m)
            guard r >= 0 else { throw Failure(message: "session bus: \(String(cString: strerror(-r)))") }
            guard let m else {
                if r == 0 { return nil }
                continue
            }
            var h = kbd_portal_call()
            guard kbd_portal_read_header(&portal, m, &h) > 0 else {
                _ = portal.message_unref(m)
                continue
            }
            func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
            return Call(sender: text(h.sender), path: text(h.path), interface: text(h.interface), member: text(h.member),
                        signature: text(h.signature), message: m)
        }
    }

    /// Lets go of a call's message (after its reply).
    func done(_ call: Call) { _ = portal.message_unref(call.message) }

    /// Reads the leading object paths and strings of a call ("oos", "oo").
    func strings(_ call: Call, _ signature: String) -> [String]? {
        var out: [UnsafePointer<CChar>?] = [nil, nil, nil]
        let r = out.withUnsafeMutableBufferPointer { kbd_portal_read_strings(&portal, call.message, signature, $0.baseAddress) }
        guard r > 0 else { return nil }
        return out.prefix(signature.utf8.count).map { $0.map { String(cString: $0) } ?? "" }
    }

    /// BindShortcuts' shortcuts (after `strings(call, "oo")`): nil when malformed or past the bounds.
    func shortcuts(_ call: Call, max: Int) -> [PortalShortcutRequest]? {
        var out = [CChar](repeating: 0, count: 65536)
        var count: Int32 = 0
        guard kbd_portal_read_shortcuts(&portal, call.message, &out, out.count, Int32(max), &count) >= 0 else { return nil }
        let text = String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "\u{1e}").map { record in
            let f = record.split(separator: "\u{1f}", omittingEmptySubsequences: false).map(String.init)
            return PortalShortcutRequest(id: f[0], description: f.count > 1 ? f[1] : "", preferredTrigger: f.count > 2 && !f[2].isEmpty ? f[2] : nil)
        }
    }

    static func flatten(_ bindings: [PortalBinding]) -> String {
        bindings.map { "\($0.shortcutID)\u{1f}\($0.description)\u{1f}\($0.trigger.keys)\u{1e}" }.joined()
    }

    /// Answers a portal method: response (0 success, 1 cancelled by the user, 2 other), the
    /// session id and the shortcuts bound, when given.
    func reply(_ message: OpaquePointer, response: UInt32, sessionID: String? = nil, shortcuts: [PortalBinding]? = nil) {
        _ = kbd_portal_reply(&portal, message, response, sessionID, shortcuts.map(Self.flatten))
    }

    func replyEmpty(_ call: Call) { _ = kbd_portal_reply_simple(&portal, call.message, 0, nil, 0) }
    func replyIntrospection(_ call: Call, _ xml: String) { _ = kbd_portal_reply_simple(&portal, call.message, CChar(UInt8(ascii: "s")), xml, 0) }
    func replyVersion(_ call: Call, all: Bool) {
        _ = kbd_portal_reply_simple(&portal, call.message, CChar(UInt8(ascii: all ? "a" : "v")), nil, 1)
    }
    func replyError(_ call: Call, _ name: String, _ message: String) { _ = kbd_portal_reply_error(&portal, call.message, name, message) }

    /// Activated or Deactivated to the frontend only (no other connection sees it).
    func emit(_ member: String, to destination: String, session: String, shortcut: String, timestamp: UInt64) -> Bool {
        kbd_portal_emit(&portal, bus, destination, member, session, shortcut, timestamp) >= 0
    }

    func emitChanged(to destination: String, session: String, bindings: [PortalBinding]) {
        _ = kbd_portal_emit_changed(&portal, bus, destination, session, Self.flatten(bindings))
    }

    func emitClosed(to destination: String, session: String) { _ = kbd_portal_emit_closed(&portal, bus, destination, session) }

    /// The unique name owning a well-known name (nil: none).
    func owner(of name: String) -> String? {
        var error = sd_bus_error()
        var out = [CChar](repeating: 0, count: 256)
        let r = kbd_bus_call_string_arg_string(&sd, bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                               "GetNameOwner", name, &out, out.count, &error)
        sd.error_free(&error)
        guard r >= 0 else { return nil }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The process id of a connection (its unique name), from the bus.
    func pid(of connection: String) -> UInt32? {
        var error = sd_bus_error()
        var out: UInt32 = 0
        let r = kbd_bus_call_string_arg_uint32(&sd, bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                               "GetConnectionUnixProcessID", connection, &out, &error)
        sd.error_free(&error)
        return r >= 0 ? out : nil
    }

    /// Waits until the bus or `other` has something (no timeout: 0 wake-ups idle); whether `other` is readable.
    func wait(orReadable other: Int32) throws(Failure) -> Bool {
        var ready: Int32 = 0
        let others = [other]
        let r = others.withUnsafeBufferPointer { kbd_bus_wait_with(&sd, bus, $0.baseAddress, 1, &ready) }
        guard r >= 0 else { throw Failure(message: "session bus: \(String(cString: strerror(-r)))") }
        return ready & 1 != 0
    }
}
