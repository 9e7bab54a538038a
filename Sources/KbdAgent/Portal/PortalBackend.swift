import KbdProcess
import KbdSystem
import CLinux
import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The GlobalShortcuts backend, run in the agent's portal child (`PortalWatch`): answers the
/// desktop portal's frontend on the session bus, decides with `PortalSessions` and the
/// approvals file, and tells the agent the bindings to register. Lines to the agent:
/// `bindings` then one `binding ID KEYS APP_BYTES APP DESCRIPTION` per binding and
/// `end`; lines from the agent: `policy ask|always|never`, `taken KEYS<TAB>TITLE` (after
/// `taken-reset`), `press ID`, `release ID`, `shadowed ID` (the service's table has
/// that binding's chord).
final class PortalBackend {
    private let bus: PortalBus
    private let output: Int32
    private let input: Int32
    private var sessions = PortalSessions()
    private var policy: PortalApprovalPolicy
    private var taken: [String: String] = [:]
    private let approvalsPath: String?
    private var frontend: String?
    /// How approve = "ask" asks (PortalConsent): the bar's dialog, or none (nothing new is bound).
    private let consent: PortalConsent
    /// The agent's lines, read in `run` and, while a dialog is open, by `meanwhile`.
    private let lines = LineBuffer(maxLineBytes: 4096)
    private var agentGone = false

    /// `meanwhile`, when given, is set to read the agent's lines while a consent dialog is open.
    init(bus: PortalBus, output: Int32, input: Int32, policy: PortalApprovalPolicy, approvalsPath: String?,
         consent: @escaping PortalConsent = PortalConsentDialog.none, meanwhile: PortalConsentMeanwhile? = nil) {
        self.consent = consent
        self.bus = bus
        self.output = output
        self.input = input
        self.policy = policy
        self.approvalsPath = approvalsPath
        meanwhile?.fd = input
        meanwhile?.readable = { [unowned self] in self.readAgent() }
    }

    private func say(_ line: ChildLine) { line.write(to: output) }

    /// Serves until the agent or the bus is gone.
    func run() {
        say(.source("the desktop portal's GlobalShortcuts as \(PortalBus.name)"))
        do throws(PortalBus.Failure) {
            while true {
                while let call = try bus.next() {
                    handle(call)
                    bus.done(call)
                }
                // The agent went away while a dialog was open.
                if agentGone { return }
                guard try bus.wait(orReadable: input) else { continue }
                guard readAgent() else { return }
            }
        } catch {
            say(.error(error.message))
        }
    }

    /// Reads and handles the agent's lines; false when the agent is gone.
    private func readAgent() -> Bool {
        switch lines.read(from: input, budget: 65536) {
        case .eof, .error:
            agentGone = true
            return false
        case .bytes, .again: break
        }
        while case .line(let bytes) = lines.nextLine() { agentSaid(String(decoding: bytes, as: UTF8.self)) }
        return true
    }

    // MARK: - The agent's lines

    private func agentSaid(_ line: String) {
        let (word, rest) = line.firstIndex(of: " ").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) } ?? (line, "")
        switch word {
        case "policy": if let p = PortalApprovalPolicy(rawValue: rest) { policy = p }
        case "taken-reset": taken = [:]
        case "taken":
            let f = rest.split(separator: "\t", maxSplits: 1).map(String.init)
            if f.count == 2 { taken.merge(PortalSessions.taken([(f[0], f[1])])) { a, _ in a } }
        case "press", "release": fire(commandID: rest, press: word == "press")
        case "shadowed":
            // The service's own table binds the chord: it would never fire. The app is told.
            guard let session = sessions.drop(commandID: rest) else { return }
            say(.warning("\(session.app): a shortcut's chord is the service's own; unbound"))
            if let frontend { bus.emitChanged(to: frontend, session: session.path, bindings: session.bindings) }
            tellBindings()
        default: break
        }
    }

    private func fire(commandID: String, press: Bool) {
        guard let (session, binding) = sessions.binding(commandID: commandID), let frontend else { return }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let micros = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
        _ = bus.emit(press ? "Activated" : "Deactivated", to: frontend, session: session.path, shortcut: binding.shortcutID, timestamp: micros)
    }

    /// Tells the agent every binding (it registers them with the user's table).
    private func tellBindings() {
        say(.report("bindings"))
        for (app, b) in sessions.allBindings {
            // The app's name by its length in bytes: it may hold spaces (ChildLine turns tabs into spaces).
            say(.report("binding \(b.commandID) \(b.trigger.keys) \(app.utf8.count) \(app) \(b.description)"))
        }
        say(.report("end"))
    }

    // MARK: - Calls

    private func handle(_ call: PortalBus.Call) {
        switch (call.interface, call.member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"): bus.replyIntrospection(call, Self.introspection(call.path))
        case ("org.freedesktop.DBus.Properties", "Get"), ("org.freedesktop.DBus.Properties", "GetAll"):
            guard call.path == PortalBus.objectPath else { return bus.replyError(call, "org.freedesktop.DBus.Error.UnknownObject", "no such object") }
            bus.replyVersion(call, all: call.member == "GetAll")
        default:
            guard isFrontend(call.sender) else {
                return bus.replyError(call, "org.freedesktop.DBus.Error.AccessDenied", "only the desktop portal (\(PortalBus.frontend)) calls this backend")
            }
            switch (call.interface, call.member) {
            case (PortalBus.interface, "CreateSession"): createSession(call)
            case (PortalBus.interface, "BindShortcuts"): bindShortcuts(call)
            case (PortalBus.interface, "ListShortcuts"): listShortcuts(call)
            case ("org.freedesktop.impl.portal.Session", "Close"):
                if sessions.close(path: call.path) { tellBindings() }
                bus.replyEmpty(call)
            case ("org.freedesktop.impl.portal.Request", "Close"): bus.replyEmpty(call)
            default: bus.replyError(call, "org.freedesktop.DBus.Error.UnknownMethod", "no method \(call.interface).\(call.member)")
            }
        }
    }

    /// Whether `sender` owns the frontend's name (asked again when it does not match: the
    /// frontend may have restarted).
    private func isFrontend(_ sender: String) -> Bool {
        if sender == frontend { return true }
        let owner = bus.owner(of: PortalBus.frontend)
        if owner != frontend, frontend != nil {
            // A new frontend: the old one's sessions are gone with it.
            for s in sessions.sessions { sessions.close(path: s.path) }
            tellBindings()
        }
        frontend = owner
        return sender == owner
    }

    private func createSession(_ call: PortalBus.Call) {
        guard call.signature.hasPrefix("oos"), let f = bus.strings(call, "oos"), Self.isSessionPath(f[1]),
              PortalShortcutRequest.isPlain(f[2], max: PortalApprovals.maxAppBytes, allowEmpty: true) else {
            return bus.replyError(call, "org.freedesktop.DBus.Error.InvalidArgs", "expected a session path under /org/freedesktop/portal/desktop/session/ and an app id")
        }
        guard let app = f[2].isEmpty ? executable(sessionPath: f[1]) : f[2] else { return bus.reply(call.message, response: 2) }
        do throws(PortalSessions.Refusal) {
            try sessions.create(path: f[1], app: app)
            bus.reply(call.message, response: 0, sessionID: f[1])
        } catch {
            say(.warning("portal: \(app): \(error)"))
            bus.reply(call.message, response: 2)
        }
    }

    private func listShortcuts(_ call: PortalBus.Call) {
        guard call.signature.hasPrefix("oo"), let f = bus.strings(call, "oo"), let s = sessions.session(f[1]) else { return bus.reply(call.message, response: 2) }
        bus.reply(call.message, response: 0, shortcuts: s.bindings)
    }

    private func bindShortcuts(_ call: PortalBus.Call) {
        guard call.signature.hasPrefix("ooa(sa{sv})"), let f = bus.strings(call, "oo"), let session = sessions.session(f[1]),
              let requests = bus.shortcuts(call, max: PortalSessions.maxShortcuts) else { return bus.reply(call.message, response: 2) }
        var approvals = loadApprovals()
        let decisions: [PortalSessions.Decision]
        do throws(PortalSessions.Refusal) {
            let decided = try sessions.decide(requests, path: session.path, policy: policy, approvals: approvals, taken: taken)
            // A copy: the agent's lines, read while a dialog is open, may change the sessions.
            let current = sessions
            decisions = current.answer(decided, for: requests, path: session.path, taken: taken, consent: consent)
        } catch {
            say(.warning("portal: \(session.app): \(error)"))
            return bus.reply(call.message, response: 2)
        }
        var bound: [(PortalShortcutRequest, PortalTrigger)] = []
        for (r, d) in zip(requests, decisions) {
            guard case .bind(let trigger) = d else { continue }
            bound.append((r, trigger))
            approvals.approve(.init(app: session.app, shortcutID: r.id, trigger: trigger, description: r.description))
        }
        saveApprovals(approvals)
        sessions.bind(path: session.path, bound)
        let refused = requests.count - bound.count
        let why = Self.notBoundReason(policy)
        say(.report("note \(session.app): \(bound.count) shortcut\(bound.count == 1 ? "" : "s") bound\(refused > 0 ? ", \(refused) not (\(why))" : "")"))
        tellBindings()
        bus.reply(call.message, response: bound.isEmpty && !requests.isEmpty ? 2 : 0, shortcuts: sessions.session(session.path)?.bindings ?? [])
    }

    // MARK: - Helpers

    /// Why shortcuts of a BindShortcuts were not bound, for the log line that counts them.
    static func notBoundReason(_ policy: PortalApprovalPolicy) -> String {
        switch policy {
        case .ask: return "refused or unanswered in the consent dialog, or taken; no dialog without kbd-commandd-bar beside the agent"
        case .never: return "approve = \"never\""
        case .always: return "taken or not a chord"
        }
    }

    static func isSessionPath(_ path: String) -> Bool {
        path.hasPrefix("/org/freedesktop/portal/desktop/session/") && path.utf8.count <= 255
            && path.utf8.allSatisfy { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "_") || (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
    }

    /// The app without an app id (not sandboxed): the executable of the connection the
    /// frontend named the session after (`…/session/1_42/TOKEN` is `:1.42`).
    private func executable(sessionPath: String) -> String? {
        let parts = sessionPath.split(separator: "/")
        guard parts.count >= 7 else { return nil }
        let unique = ":" + parts[5].replacingUnderscores
        guard let pid = bus.pid(of: unique), pid > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let path = String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return PortalShortcutRequest.isPlain(name, max: PortalApprovals.maxAppBytes) ? name : nil
    }

    private func loadApprovals() -> PortalApprovals {
        guard let path = approvalsPath else { return PortalApprovals() }
        do {
            let bytes = try readWholeFile(path: path, limit: 1 << 20)
            return try PortalApprovals(decoding: String(decoding: bytes, as: UTF8.self))
        } catch let error as PortalApprovals.DecodeError {
            say(.warning("portal: \(path): \(error); approvals start empty"))
        } catch {}
        return PortalApprovals()
    }

    private func saveApprovals(_ approvals: PortalApprovals) {
        guard let path = approvalsPath else { return }
        if let problem = PortalApprovalsFile.write(approvals.encoded, to: path) { say(.warning("portal: \(path): \(problem)")) }
    }

    static func introspection(_ path: String) -> String {
        let node = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\" \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>"
        guard path == PortalBus.objectPath else { return node + "</node>" }
        return node + """
            <interface name="org.freedesktop.impl.portal.GlobalShortcuts">\
            <method name="CreateSession"><arg type="o" direction="in"/><arg type="o" direction="in"/><arg type="s" direction="in"/>\
            <arg type="a{sv}" direction="in"/><arg type="u" direction="out"/><arg type="a{sv}" direction="out"/></method>\
            <method name="BindShortcuts"><arg type="o" direction="in"/><arg type="o" direction="in"/><arg type="a(sa{sv})" direction="in"/>\
            <arg type="s" direction="in"/><arg type="a{sv}" direction="in"/><arg type="u" direction="out"/><arg type="a{sv}" direction="out"/></method>\
            <method name="ListShortcuts"><arg type="o" direction="in"/><arg type="o" direction="in"/><arg type="u" direction="out"/>\
            <arg type="a{sv}" direction="out"/></method>\
            <signal name="Activated"><arg type="o"/><arg type="s"/><arg type="t"/><arg type="a{sv}"/></signal>\
            <signal name="Deactivated"><arg type="o"/><arg type="s"/><arg type="t"/><arg type="a{sv}"/></signal>\
            <signal name="ShortcutsChanged"><arg type="o"/><arg type="a(sa{sv})"/></signal>\
            <property name="version" type="u" access="read"/></interface></node>
            """
    }
}

extension Substring {
    fileprivate var replacingUnderscores: String { String(map { $0 == "_" ? "." : $0 }) }
}

/// Writes the approvals file: its directory made (0700) when missing, a temporary file
/// renamed over the old one (a reader never sees half a file).
public enum PortalApprovalsFile {
    public static func write(_ text: String, to path: String) -> String? {
        guard let slash = path.lastIndex(of: "/") else { return "not an absolute path" }
        makeDirectories(String(path[..<slash]))
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return SystemError(operation: "open", errno: errno).message }
        let bytes = Array(text.utf8)
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard n == bytes.count else { unlink(temporary); return "short write" }
        guard rename(temporary, path) == 0 else { return SystemError(operation: "rename", errno: errno).message }
        return nil
    }

    private static func makeDirectories(_ directory: String) {
        var prefix = ""
        for part in directory.split(separator: "/") {
            prefix += "/" + part
            _ = mkdir(prefix, 0o700)
        }
    }
}
