import KbdProcess
import KbdControl
import KbdKeymap
import KbdCommands
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
    /// `consentDialog`: the bar's binary, whose consent dialog asks about a shortcut under
    /// approve = "ask" (in the child; nil: no dialog, nothing new is bound).
    init(policy: String, approvalsPath: String?, consentDialog: String?) throws(ChildProcessError) {
        let initial = PortalApprovalPolicy(rawValue: policy) ?? .ask
        child = try WatchChild(input: true) { output in
            let bus: PortalBus
            do throws(PortalBus.Failure) { bus = try PortalBus(address: nil) } catch {
                ChildLine.error(error.message).write(to: output)
                return
            }
            let meanwhile = PortalConsentMeanwhile()
            let consent = consentDialog.map { PortalConsentDialog.bar(path: $0, meanwhile: meanwhile, note: { ChildLine.warning($0).write(to: output) }) }
            PortalBackend(bus: bus, output: output, input: 0, policy: initial, approvalsPath: approvalsPath,
                          consent: consent ?? PortalConsentDialog.none, meanwhile: meanwhile).run()
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

    /// A binding's command fired: Activated at the press, Deactivated at the release; a
    /// modifier alone fires at its tap, and the bar's tap (run_command) comes without a
    /// phase: both are Activated then Deactivated. A hold or a repeat says nothing more.
    func fired(_ commandID: String, phase: KeyPhase?) {
        for line in Self.lines(for: phase) { child.send("\(line) \(commandID)") }
    }

    static func lines(for phase: KeyPhase?) -> [String] {
        switch phase {
        case .press: ["press"]
        case .release: ["release"]
        case nil, .tap: ["press", "release"]
        case .hold, .repeat: []
        }
    }

    /// The bindings the service's own table shadows (the register reply): they are unbound.
    func shadowed(_ ids: [String]) {
        for id in ids where owns(id) { child.send("shadowed \(id)") }
    }

    func owns(_ commandID: String) -> Bool { commandID.hasPrefix("portal:") && bindings.contains { $0.commandID == commandID } }

    /// The bindings as commands of the user's table.
    var specs: [ControlRequest.CommandSpec] { bindings.map(Self.spec) }

    /// A binding as a command: in the app's group, titled by its description; a chord with an
    /// empty run_on_release, so the service reports its release too (Deactivated); a modifier
    /// alone fires at its tap.
    static func spec(_ b: Binding) -> ControlRequest.CommandSpec {
        ControlRequest.CommandSpec(id: b.commandID, title: b.description.isEmpty ? b.app : b.description, keys: b.keys,
                                   group: b.app, discoverabilityTitle: b.description.isEmpty ? nil : b.description,
                                   phases: Command.PhaseKeys(runOnRelease: PortalTrigger(keys: b.keys).isChord ? [] : nil))
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
        if text.hasPrefix("binding "), let b = Self.binding(text.utf8.dropFirst(8)), (incoming?.count ?? 0) < 512 { incoming?.append(b) }
        return nil
    }

    /// `ID KEYS APP_BYTES APP DESCRIPTION`: only a chord the service's parser takes (a bad
    /// one would refuse the whole table).
    static func binding(_ line: Substring.UTF8View) -> Binding? {
        let words = line.split(separator: UInt8(ascii: " "), maxSplits: 3, omittingEmptySubsequences: false)
        guard words.count == 4, let count = Int(String(decoding: words[2], as: UTF8.self)), count > 0, words[3].count >= count else { return nil }
        let id = String(decoding: words[0], as: UTF8.self), keys = String(decoding: words[1], as: UTF8.self)
        let app = String(decoding: words[3].prefix(count), as: UTF8.self)
        let rest = words[3].dropFirst(count)
        guard id.hasPrefix("portal:"), rest.isEmpty || rest.first == UInt8(ascii: " "), PortalTrigger(keys: keys).isRegistrable else { return nil }
        return Binding(commandID: id, keys: keys, app: app, description: String(decoding: rest.dropFirst(), as: UTF8.self))
    }
}
