import KbdProcess
import KbdControl
import KbdKeymap
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The agent's side of the desktop portal's backend: a long-lived child (like the text-input
/// watch, so the agent never maps libsystemd) that owns the session-bus connection and the
/// sessions (PortalBackend), and tells the agent the bindings to register with the user's
/// table. The agent tells it the presses and releases of those commands, the approval policy
/// and the chords of the user's table (conflicts).
final class PortalWatch {
    private let child: WatchChild
    var fd: Int32 { child.fd }
    /// The bindings as the child said them last.
    private(set) var bindings: [Binding] = []
    private var incoming: [Binding]?

    struct Binding: Equatable {
        var commandID: String
        var keys: String
        var app: String
        var description: String
    }

    enum Line: Equatable {
        case bindingsChanged
        case note(String)
    }

    /// Starts the child on the session bus (`DBUS_SESSION_BUS_ADDRESS`).
    init(policy: String, approvalsPath: String?) throws(ChildProcessError) {
        let initial = PortalApprovalPolicy(rawValue: policy) ?? .ask
        child = try WatchChild(input: true) { output in
            let bus: PortalBus
            do throws(PortalBus.Failure) { bus = try PortalBus(address: nil) } catch {
                ChildLine.error(error.message).write(to: output)
                return
            }
            PortalBackend(bus: bus, output: output, input: 0, policy: initial, approvalsPath: approvalsPath).run()
        }
    }

    /// The policy and the user's table's chords (sent at start and after every reload).
    func tell(policy: String, table: [(keys: String, title: String)]) {
        child.send("policy \(policy)")
        child.send("taken-reset")
        for t in table where !t.keys.contains("\t") && !t.keys.contains("\n") {
            child.send("taken \(t.keys)\t\(t.title.filter { $0 != "\n" && $0 != "\t" })")
        }
    }

    /// A binding's command fired (`press`) or its chord was released (`release`).
    func fired(_ commandID: String, press: Bool) {
        child.send("\(press ? "press" : "release") \(commandID)")
    }

    func owns(_ commandID: String) -> Bool { commandID.hasPrefix("portal:") && bindings.contains { $0.commandID == commandID } }

    /// The bindings as commands of the user's table: in the app's group, titled by their descriptions.
    var specs: [ControlRequest.CommandSpec] {
        bindings.map {
            ControlRequest.CommandSpec(id: $0.commandID, title: $0.description.isEmpty ? $0.app : $0.description, keys: $0.keys,
                                       group: $0.app, discoverabilityTitle: $0.description.isEmpty ? nil : $0.description)
        }
    }

    /// Reads what the child said and logs it; whether the bindings changed (register again)
    /// and whether the child ended.
    func read(logger: Logger) -> (changed: Bool, ended: Bool) {
        let (lines, ended) = child.readLines()
        var changed = false
        var failure: String?
        for line in lines {
            switch line {
            case .source(let text): logger.info("portal: serves \(text)")
            case .warning(let text): logger.warning("portal: \(text)")
            case .error(let text): failure = text
            case .report(let text):
                switch report(text) {
                case .bindingsChanged: changed = true
                case .note(let note): logger.info("portal: \(note)")
                default: break
                }
            }
        }
        if ended {
            logger.warning("portal: \(failure ?? "the backend ended"); apps' global shortcuts are off until the agent restarts")
            changed = changed || !bindings.isEmpty
            bindings = []
        }
        return (changed, ended)
    }

    private func report(_ text: String) -> Line? {
        if text == "bindings" { incoming = []; return nil }
        if text == "end" {
            defer { incoming = nil }
            guard let incoming, incoming != bindings else { return nil }
            bindings = incoming
            return .bindingsChanged
        }
        if text.hasPrefix("note ") { return .note(String(text.dropFirst(5))) }
        if text.hasPrefix("binding ") {
            let f = text.dropFirst(8).split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            // Only a chord the service's parser takes (a bad one would refuse the whole table).
            guard f.count == 4, f[0].hasPrefix("portal:"), (try? ChordKey.parseSequence(f[1])) != nil, (incoming?.count ?? 0) < 512 else { return nil }
            incoming?.append(Binding(commandID: f[0], keys: f[1], app: f[2], description: f[3]))
        }
        return nil
    }
}
