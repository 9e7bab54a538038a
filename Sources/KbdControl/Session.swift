public import KbdCore
public import KbdCommands
public import KbdGeometry
import KbdJSON
import KbdConfig

/// The control socket's rules, without I/O: who may ask what, the claims clients hold
/// (scopes and text input, by client, here and nowhere else), users' registered tables
/// (validated by the same code as a config file) and the listings. Each request gives a
/// reply and the effects the daemon applies to the pipeline; the daemon owns the sockets.
public final class ControlSession {
    /// A connected client, as the daemon learned it at connect (SO_PEERCRED).
    public struct Peer: Sendable, Equatable {
        public var id: Int
        public var uid: UInt32
        /// An operator (root, the service's user or a member of its group): every request,
        /// and its table fires whoever is at the keyboard. Otherwise a user's client (a
        /// session agent): its own table, fired only for keys typed on a seat where its uid
        /// owns the active session; claims that steer the system table only while it does.
        public var trusted: Bool
        public init(id: Int, uid: UInt32, trusted: Bool) {
            self.id = id
            self.uid = uid
            self.trusted = trusted
        }
    }

    /// What the daemon knows that a reply shows: read when a request needs it.
    public struct View {
        public var hardwareKeyboard: Bool
        public var presenceReason: String
        /// When the service started, in seconds on the clock of event times.
        public var started: Double
        /// The layout guide now (nil: no `[geometry]` in the config).
        public var geometry: GeometryReport?
        public var systemTable: CommandTable
        public var allowKeyEvents: Bool
        public var devices: () -> [ControlReply.ListedDevice]
        /// Why a desktop's keymap cannot be used (it does not compile), nil when it can.
        public var keymapProblem: (ControlRequest.Keymap) -> String?
        /// Whether the keymap's verdict is known without compiling (compiled or refused before).
        public var keymapKnown: (ControlRequest.Keymap) -> Bool
        /// Now, on the clock of event times (the per-uid registration budget refills with it).
        public var now: EventTime

        public init(hardwareKeyboard: Bool, presenceReason: String, started: Double = 0, geometry: GeometryReport?, systemTable: CommandTable,
                    allowKeyEvents: Bool, devices: @escaping () -> [ControlReply.ListedDevice],
                    keymapProblem: @escaping (ControlRequest.Keymap) -> String? = { _ in nil },
                    keymapKnown: @escaping (ControlRequest.Keymap) -> Bool = { _ in true }, now: EventTime = .zero) {
            self.keymapProblem = keymapProblem
            self.keymapKnown = keymapKnown
            self.now = now
            self.hardwareKeyboard = hardwareKeyboard
            self.presenceReason = presenceReason
            self.started = started
            self.geometry = geometry
            self.systemTable = systemTable
            self.allowKeyEvents = allowKeyEvents
            self.devices = devices
        }
    }

    /// What the daemon does after a request: the pipeline's routing and the client's subscriptions.
    public enum Effect {
        /// The system table's scopes on `seat` (the newest claim of an operator or of the
        /// user whose session is active there) changed: its keyboards route with them.
        case systemScopes([String], seat: String)
        case systemTextInput(Bool, seat: String)
        /// The scopes routing `owner`'s own table (nil: it follows the system table's).
        case ownScopes(owner: Int, [String]?)
        case ownTextInput(owner: Int, Bool?)
        /// `owner`'s table (nil: removed). `uid` is set for a table that is not an operator's:
        /// it fires only for keys typed on a seat where that uid owns the active session.
        case userTable(owner: Int, CommandTable?, uid: UInt32?)
        /// Who is at each seat changed: the pipeline routes by it (and starts over).
        case activeSessions(ActiveSessions)
        /// Tell the clients of `uid` that its session on `seat` became active or not.
        case sessionEvent(uid: UInt32, seat: String, active: Bool)
        /// The client's subscriptions (the session keeps them: `deliveries` and `subscribers(of:)`).
        case subscribe(client: Int, Set<ControlEventKind>)
        /// The keymap `seat`'s keys are mapped with: the newest desktop keymap claimed there
        /// (nil: the service's own).
        case keymap(ControlRequest.Keymap?, seat: String)
        /// Sticky keys on `seat`: the newest desktop setting claimed there (nil: the config's).
        case stickyKeys(Bool?, seat: String)
        /// Reload the config; the daemon answers with `reloaded(outcome:)`.
        case reload
        /// A line for the service's log (never typed text, never a window title).
        case log(LogLevel, String)
        /// `run_command`: fire `command` as if its chord had been typed; `owner` nil, the
        /// system table's (the runner runs it), else the client whose table has it (its agent
        /// gets the command event). A command with `action = "hud"` toggles the HUD.
        case runCommand(Command, owner: Int?, uid: UInt32)
    }

    public enum LogLevel: Equatable { case debug, info, warning }

    /// A reply (nil when the daemon answers later, as for reload) and what to apply.
    public struct Outcome {
        public var reply: ControlReply?
        public var effects: [Effect]
    }

    /// At most this many commands in one registered table.
    public static let maxRegisteredCommands = ControlRequest.maxRegisteredCommands
    /// At most this many chords in one registered command's sequence.
    public static let maxSequenceChords = 16
    /// What the tables of one uid outside the service's group may hold together (all its
    /// connections): commands, chords (the chord nodes' bound) and bytes of their text.
    public static let maxUserCommands = 2000
    public static let maxUserChords = 8000
    public static let maxUserBytes = 256 * 1024
    /// Registration work of one uid outside the service's group, in bytes of its commands'
    /// text: at most this much per second (a bucket that holds one second's worth).
    public static let userWorkPerSecond = 256 * 1024

    /// Per uid outside the service's group: the work budget (bytes of registered text, and a
    /// keymap compile's share).
    private var workBudget: [UInt32: RateBudget] = [:]
    /// `run_command`s per uid: at most this many per second (a bucket holding one second's).
    public static let runCommandsPerSecond = 20
    private var runBudget: [UInt32: RateBudget] = [:]
    /// `set_keymap` and `set_sticky_keys` per uid outside the service's group: at most this
    /// many per second (a desktop sends one per layout switch or settings change).
    public static let desktopClaimsPerSecond = 4
    private var desktopClaimBudget: [UInt32: RateBudget] = [:]
    /// What compiling a keymap nobody asked for before costs of a uid's work budget (a
    /// compile takes 3–7 ms of the loop: about what 64 KiB of registered commands cost).
    public static let keymapCompileCost = 64 * 1024

    private struct Claim<Value> {
        var client: Int
        var uid: UInt32
        var trusted: Bool
        var value: Value
    }
    private var scopeClaims: [Claim<[String]>] = []
    private var textInputClaims: [Claim<Bool>] = []
    private var userTables: [(owner: Int, uid: UInt32, trusted: Bool, table: CommandTable)] = []
    private var keymapClaims: [Claim<ControlRequest.Keymap>] = []
    private var stickyClaims: [Claim<Bool>] = []
    /// Who is at each seat (the daemon feeds it from logind), and why logind is not followed.
    public private(set) var sessions = ActiveSessions.unavailable
    public private(set) var loginProblem: String? = "logind is not followed yet"
    /// The connected clients, by id: what each subscribed to and was last sent of the HUD and
    /// the toolbar (SessionDelivery.swift decides from them who is sent what).
    var clients: [Int: ClientState] = [:]

    public init() {}

    /// What steers the system table and the reading of keys on one seat: the newest claims
    /// of operators and of the user whose session is active on that seat.
    public struct SeatClaims: Sendable, Equatable {
        public var scopes: [String] = []
        public var textInput = false
        public var keymap: ControlRequest.Keymap?
        public var stickyKeys: Bool?
        public init() {}
    }

    /// The seats claims are worked out for: the default one and every seat logind named.
    public private(set) var knownSeats: [String] = [ActiveSessions.defaultSeat]

    /// The claims steering `seat`: an operator's steer every seat; a user's only the seat
    /// where their session is active (a user at seat1 steers and watches only seat1).
    public func claims(seat: String) -> SeatClaims {
        let here = sessions.activeUID[seat]
        func steers<Value>(_ c: Claim<Value>) -> Bool { c.trusted || (here != nil && c.uid == here) }
        var out = SeatClaims()
        out.scopes = scopeClaims.last(where: steers)?.value ?? []
        out.textInput = textInputClaims.last(where: steers)?.value ?? false
        out.keymap = keymapClaims.last(where: steers)?.value
        out.stickyKeys = stickyClaims.last(where: steers)?.value
        return out
    }

    /// Every known seat's claims, to compare after a change (`changedClaims(since:)`).
    private func seatClaims() -> [String: SeatClaims] {
        var out: [String: SeatClaims] = [:]
        for seat in knownSeats { out[seat] = claims(seat: seat) }
        return out
    }

    /// The effects that bring every seat from `before` to its claims now.
    private func changedClaims(since before: [String: SeatClaims]) -> [Effect] {
        var effects: [Effect] = []
        for seat in knownSeats {
            let old = before[seat] ?? SeatClaims(), new = claims(seat: seat)
            if old.scopes != new.scopes { effects.append(.systemScopes(new.scopes, seat: seat)) }
            if old.textInput != new.textInput { effects.append(.systemTextInput(new.textInput, seat: seat)) }
            if old.keymap != new.keymap { effects.append(.keymap(new.keymap, seat: seat)) }
            if old.stickyKeys != new.stickyKeys { effects.append(.stickyKeys(new.stickyKeys, seat: seat)) }
        }
        return effects
    }

    /// The seat whose claims apply to `peer`: the seat where its uid is active (the first by
    /// name), else the default seat (operators, who have no seat of their own).
    public func seat(of peer: Peer) -> String {
        peer.trusted ? ActiveSessions.defaultSeat : sessions.seats(of: peer.uid).first ?? ActiveSessions.defaultSeat
    }

    /// The default seat's system scopes: the newest claim of an operator or of the user
    /// active there.
    public var systemScopes: [String] { claims(seat: ActiveSessions.defaultSeat).scopes }
    /// Whether text is being typed, for the system table on the default seat.
    public var systemTextInput: Bool { claims(seat: ActiveSessions.defaultSeat).textInput }
    /// The desktop keymap the default seat's keys are mapped with (nil: the service's own).
    /// A user who leaves the seat no longer steers it; their claim counts again when their
    /// session is active again.
    public var keymap: ControlRequest.Keymap? { claims(seat: ActiveSessions.defaultSeat).keymap }
    /// The desktop's sticky keys on the default seat (nil: `[accessibility] sticky_keys`).
    public var stickyKeys: Bool? { claims(seat: ActiveSessions.defaultSeat).stickyKeys }
    /// The clients with a registered table.
    public var tableOwners: [Int] { userTables.map(\.owner) }
    public func table(of owner: Int) -> CommandTable? { userTables.first { $0.owner == owner }?.table }
    public func ownScopes(_ owner: Int) -> [String]? { scopeClaims.last { $0.client == owner }?.value }
    public func ownTextInput(_ owner: Int) -> Bool? { textInputClaims.last { $0.client == owner }?.value }

    /// Who is at each seat now (from logind; `problem`: why it is not followed, nil when it
    /// is). Returns what to apply: the pipeline's routing, the system table's claims (a user
    /// who left the seat no longer steers them) and an event for each user who came or left.
    public func sessionsChanged(_ next: ActiveSessions, problem: String?) -> [Effect] {
        let before = seatClaims()
        let changes = next.changes(from: sessions)
        sessions = next
        loginProblem = problem
        for seat in next.activeUID.keys.sorted() where !knownSeats.contains(seat) { knownSeats.append(seat) }
        var effects: [Effect] = [.activeSessions(next)]
        effects += changedClaims(since: before)
        for change in changes {
            if let from = change.from { effects.append(.sessionEvent(uid: from, seat: change.seat, active: false)) }
            if let to = change.to { effects.append(.sessionEvent(uid: to, seat: change.seat, active: true)) }
            effects.append(.log(.info, "seat \(change.seat): active session now \(change.to.map { "uid \($0)" } ?? "none")\(change.from.map { " (was uid \($0))" } ?? "")"))
        }
        return effects
    }

    /// Handles one request line from `peer`.
    public func handle(_ line: String, from peer: Peer, view: View) -> Outcome {
        let request: ControlRequest
        do { request = try ControlRequest.parse(line) } catch {
            return Outcome(reply: .refused(name: "error", message: error.message), effects: [])
        }
        return handle(request, from: peer, view: view)
    }

    public func handle(_ request: ControlRequest, from peer: Peer, view: View) -> Outcome {
        if !peer.trusted, let refusal = Self.userRefusal(request) {
            return Outcome(reply: .refused(name: "error", message: "\(refusal) (uid \(peer.uid) may register its own commands, subscribe to presence, geometry, hud and toolbar, run commands while its session is active, set scopes, text input, its keymap and sticky keys, list commands and ping)"), effects: [])
        }
        switch request {
        case .register(let specs, let timeout):
            return register(specs, timeout: timeout, for: peer, view: view)
        case .subscribe(let kinds):
            if kinds.contains(.key) && !view.allowKeyEvents {
                return Outcome(reply: .refused(name: "subscribe", message: "key events carry typed text; the daemon was not started with --allow-key-events"), effects: [])
            }
            let reply = ControlReply.subscribe(.init(events: kinds, hardwareKeyboard: view.hardwareKeyboard, reason: view.presenceReason,
                                                      started: view.started, geometry: view.geometry))
            clients[peer.id]?.subscriptions = kinds
            clients[peer.id]?.lastToolbar = nil
            return Outcome(reply: reply, effects: [.subscribe(client: peer.id, kinds)])
        case .setScopes(let list):
            let before = seatClaims()
            scopeClaims.removeAll { $0.client == peer.id }
            scopeClaims.append(Claim(client: peer.id, uid: peer.uid, trusted: peer.trusted, value: list))
            var effects = changedClaims(since: before)
            effects.append(.ownScopes(owner: peer.id, list))
            // Scope names only: a focus-following agent never sends window titles.
            effects.append(.log(.debug, "control: client \(peer.id) (uid \(peer.uid)) set scopes [\(list.joined(separator: ", "))]"))
            return Outcome(reply: .setScopes(list), effects: effects)
        case .setTextInput(let active):
            let before = seatClaims()
            textInputClaims.removeAll { $0.client == peer.id }
            textInputClaims.append(Claim(client: peer.id, uid: peer.uid, trusted: peer.trusted, value: active))
            var effects = changedClaims(since: before)
            effects.append(.ownTextInput(owner: peer.id, active))
            effects.append(.log(.debug, "control: client \(peer.id) (uid \(peer.uid)) set text input \(active ? "on" : "off")"))
            return Outcome(reply: .setTextInput(active), effects: effects)
        case .listCommands:
            return Outcome(reply: .listCommands(listCommands(for: peer, systemTable: view.systemTable)), effects: [])
        case .listDevices:
            return Outcome(reply: .listDevices(view.devices()), effects: [])
        case .reload:
            return Outcome(reply: nil, effects: [.reload])
        case .ping:
            return Outcome(reply: .ping, effects: [])
        case .setKeymap(let keymap):
            return setKeymap(keymap, for: peer, view: view)
        case .setStickyKeys(let enabled):
            if let refusal = desktopClaimRefusal("set_sticky_keys", clearing: enabled == nil, for: peer, now: view.now) { return refusal }
            let before = seatClaims()
            stickyClaims.removeAll { $0.client == peer.id }
            if let enabled { stickyClaims.append(Claim(client: peer.id, uid: peer.uid, trusted: peer.trusted, value: enabled)) }
            var effects = changedClaims(since: before)
            effects.append(.log(.debug, "control: client \(peer.id) (uid \(peer.uid)) " + (enabled.map { "set sticky keys \($0 ? "on" : "off")" } ?? "withdrew its sticky keys")))
            return Outcome(reply: .setStickyKeys(enabled), effects: effects)
        case .runCommand(let id, let table):
            return runCommand(id: id, table: table, for: peer, view: view)
        }
    }

    /// The reply to a reload request, once the daemon reloaded (or refused the config).
    public static func reloaded(commands: Int, refusal: String?) -> ControlReply {
        .reload(commands: commands, error: refusal)
    }

    /// A client left: what it claimed and registered leaves with it.
    public func disconnected(_ client: Int) -> [Effect] {
        clients[client] = nil
        let before = seatClaims()
        scopeClaims.removeAll { $0.client == client }
        textInputClaims.removeAll { $0.client == client }
        keymapClaims.removeAll { $0.client == client }
        stickyClaims.removeAll { $0.client == client }
        var effects: [Effect] = []
        if userTables.contains(where: { $0.owner == client }) {
            userTables.removeAll { $0.owner == client }
            effects.append(.userTable(owner: client, nil, uid: nil))
        }
        effects += [.ownScopes(owner: client, nil), .ownTextInput(owner: client, nil)]
        effects += changedClaims(since: before)
        return effects
    }

    /// `list_commands`: for an operator, the service's table in the responder-chain order now
    /// active, with `scopes` (global last) and `text_input`; a client with a registered table
    /// also gets it with the scopes routing it. A user's client (not an operator) sees its own
    /// table and its own claims only: never the system table's claims, which may be another
    /// user's session's focus.
    func listCommands(for peer: Peer, systemTable: CommandTable) -> ControlReply.CommandsListing {
        func chain(_ list: [String]) -> [String] {
            var seen: Set<String> = []
            return (list + [CommandTable.globalScope]).filter { seen.insert($0).inserted }
        }
        func listed(_ listing: CommandListing) -> [ControlReply.ListedCommand] {
            listing.groups.flatMap { scope, entries in
                entries.map {
                    ControlReply.ListedCommand(scope: scope, id: $0.command.id, title: $0.command.title, chord: $0.command.chordText, repeat: $0.command.repeat,
                                               group: $0.command.group, discoverabilityTitle: $0.command.discoverabilityTitle, action: $0.command.action)
                }
            }
        }
        let active = peer.trusted ? systemScopes : (ownScopes(peer.id) ?? [])
        let activeText = peer.trusted ? systemTextInput : (ownTextInput(peer.id) ?? false)
        var result = ControlReply.CommandsListing(
            commands: peer.trusted ? listed(CommandListing(table: systemTable, activeScopes: active.isEmpty ? nil : active)) : [],
            scopes: chain(active), textInput: activeText)
        // The caller's own table: the one it registered, else the one its uid's agent registered
        // (`commands --active` run by the user shows their agent's table and scopes).
        let owner = table(of: peer.id) != nil ? peer.id : userTables.first { $0.uid == peer.uid }?.owner
        if let owner, let table = table(of: owner) {
            // A table follows its owner's claims, else the system table's (an operator sees
            // which; a user's client sees only its own claims).
            let scopes = ownScopes(owner) ?? (peer.trusted ? systemScopes : [])
            result.user = .init(commands: listed(CommandListing(table: table, activeScopes: scopes.isEmpty ? nil : scopes)),
                                scopes: chain(scopes), textInput: ownTextInput(owner) ?? (peer.trusted ? systemTextInput : false))
        }
        return result
    }

    /// The clients whose registered tables are `uid`'s (its agents').
    public func tableOwners(uid: UInt32) -> [Int] { userTables.filter { $0.uid == uid }.map(\.owner) }

    /// Whether `peer` may see the HUD and the toolbar and run commands now: an operator, or
    /// the user who owns the active session of a seat (the person at the keyboard).
    public func seesCommands(_ peer: Peer) -> Bool { peer.trusted || sessions.isActive(peer.uid) }

    /// `set_keymap`: the keymap every keyboard is read with, a claim of the person at the
    /// keyboard. A user's client is held to a rate, and a keymap never seen before costs its
    /// compile out of the uid's work budget before it is compiled.
    func setKeymap(_ keymap: ControlRequest.Keymap?, for peer: Peer, view: View) -> Outcome {
        if let refusal = desktopClaimRefusal("set_keymap", clearing: keymap == nil, for: peer, now: view.now) { return refusal }
        if let keymap {
            if !peer.trusted, !view.keymapKnown(keymap), let refusal = chargeWork(Self.keymapCompileCost, uid: peer.uid, now: view.now) {
                return Outcome(reply: .refused(name: "set_keymap", message: "set_keymap: " + refusal), effects: [])
            }
            if let problem = view.keymapProblem(keymap) {
                return Outcome(reply: .refused(name: "set_keymap", message: problem), effects: [])
            }
        }
        let before = seatClaims()
        keymapClaims.removeAll { $0.client == peer.id }
        if let keymap { keymapClaims.append(Claim(client: peer.id, uid: peer.uid, trusted: peer.trusted, value: keymap)) }
        var effects = changedClaims(since: before)
        effects.append(.log(.debug, "control: client \(peer.id) (uid \(peer.uid)) " + (keymap.map { "set keymap layout \($0.layout) group \($0.group)" } ?? "withdrew its keymap")))
        return Outcome(reply: .setKeymap(keymap), effects: effects)
    }

    /// Why a user's client may not claim the keymap or sticky keys now (nil: it may): only
    /// the user whose session is active on a seat steers how keys are read, a few times a
    /// second. Withdrawing one's own claim is always allowed.
    private func desktopClaimRefusal(_ name: String, clearing: Bool, for peer: Peer, now: EventTime) -> Outcome? {
        guard !peer.trusted, !clearing else { return nil }
        guard sessions.isActive(peer.uid) else {
            return Outcome(reply: .refused(name: name, message: "\(name): uid \(peer.uid) does not own the active session of a seat; the keymap and sticky keys are set by the person at the keyboard (operators, or the user whose session is active)"), effects: [])
        }
        let rate = Self.desktopClaimsPerSecond
        guard desktopClaimBudget[peer.uid, default: RateBudget(perSecond: rate, now: now)].take(1, now: now) else {
            return Outcome(reply: .refused(name: name, message: "\(name): more than \(rate) keymap and sticky-keys changes per second for uid \(peer.uid); try again shortly"), effects: [])
        }
        return nil
    }

    /// `run_command`: the command as if its chord had been typed on the caller's seat.
    func runCommand(id: String, table: CommandTableKind, for peer: Peer, view: View) -> Outcome {
        func refused(_ message: String) -> Outcome { Outcome(reply: .refused(name: "run_command", message: "run_command: " + message), effects: []) }
        guard seesCommands(peer) else {
            return refused("uid \(peer.uid) does not own the active session of a seat; commands run for the person at the keyboard (operators, or the user whose session is active)")
        }
        // Like typed chords, a bounded rate: a flood of requests is refused, not queued.
        let rate = Self.runCommandsPerSecond
        guard runBudget[peer.uid, default: RateBudget(perSecond: rate, now: view.now)].left(now: view.now) > 0 else {
            return refused("more than \(rate) commands per second for uid \(peer.uid); try again shortly")
        }
        func unknown(_ ids: [String], _ which: String) -> Outcome {
            let near = NearestNames.nearest(to: id, in: ids, limit: 2)
            return refused("no command \(JSONValue.quoted(id)) in \(which)\(near.isEmpty ? "" : " (did you mean \(NearestNames.list(near))?)")")
        }
        let effect: Effect
        switch table {
        case .system:
            guard let command = view.systemTable.command(id: id) else { return unknown(view.systemTable.commands.map(\.id), "the service's table") }
            if let refusal = outOfChain(command, scopes: claims(seat: seat(of: peer)).scopes) { return refused(refusal) }
            effect = .runCommand(command, owner: nil, uid: peer.uid)
        case .user:
            // The caller's own table if it registered one, else its uid's agent's.
            let owners = [peer.id] + tableOwners(uid: peer.uid).filter { $0 != peer.id }
            guard let (owner, command) = owners.lazy.compactMap({ o in self.table(of: o)?.command(id: id).map { (o, $0) } }).first else {
                return unknown(owners.compactMap { self.table(of: $0) }.flatMap { $0.commands.map(\.id) }, "the table uid \(peer.uid) registered")
            }
            if let refusal = outOfChain(command, scopes: ownScopes(owner) ?? claims(seat: seat(of: peer)).scopes) { return refused(refusal) }
            effect = .runCommand(command, owner: owner, uid: peer.uid)
        }
        _ = runBudget[peer.uid, default: RateBudget(perSecond: rate, now: view.now)].take(1, now: view.now)
        return Outcome(reply: .runCommand, effects: [effect])
    }

    /// Why `command` could not be typed now (its scope is not in the active chain: `scopes`,
    /// then global), nil when it could. A bar or a script runs only what the keys would.
    private func outOfChain(_ command: Command, scopes: [String]) -> String? {
        guard command.scope != CommandTable.globalScope, !scopes.contains(command.scope) else { return nil }
        let chain = (scopes + [CommandTable.globalScope]).joined(separator: ", ")
        return "\(JSONValue.quoted(command.id)) belongs to scope \(JSONValue.quoted(command.scope)), which is not active now (active: \(chain)); it runs only while its chord would"
    }

    /// Why a user's client may not make this request, nil when it may.
    static func userRefusal(_ request: ControlRequest) -> String? {
        switch request {
        case .register, .setScopes, .setTextInput, .listCommands, .ping, .setKeymap, .setStickyKeys, .runCommand: return nil
        case .subscribe(let kinds):
            // hud and toolbar are sent only while the user owns the active session (the daemon checks at each event).
            let other = kinds.subtracting([.presence, .geometry, .hud, .toolbar])
            return other.isEmpty ? nil : "subscribe: \(other.map(\.rawValue).sorted().joined(separator: ", ")) events are for the service's group only"
        case .reload: return "reload is for the service's group only"
        case .listDevices: return "list_devices is for the service's group only"
        }
    }

    /// A user's table: each command held to a config's rules (CommandFields), the table to
    /// the same conflicts as a config's; routed after the system table, its commands sent to
    /// this client only.
    func register(_ specs: [ControlRequest.CommandSpec], timeout: Int?, for peer: Peer, view: View) -> Outcome {
        let systemTable = view.systemTable
        if !peer.trusted, !sessions.available {
            // Without logind nobody is known to be at a keyboard: a user's table could only
            // fire for someone else's typing.
            let why = loginProblem ?? "logind is not running"
            return Outcome(reply: .refused(name: "register", message: "uid \(peer.uid) is not in the service's group, and a user's table fires only for keys typed at a seat where that user's logind session is active; logind cannot be followed: \(why)"), effects: [])
        }
        let cost = specs.reduce(0) { $0 + Self.size(of: $1) }
        if !peer.trusted {
            if let refusal = chargeWork(cost, uid: peer.uid, now: view.now) { return Outcome(reply: .refused(name: "register", message: refusal), effects: []) }
            if let refusal = userBound(specs, cost: cost, for: peer) { return Outcome(reply: .refused(name: "register", message: refusal), effects: []) }
        }
        var commands: [Command] = []
        var problems: [String] = []
        for (i, spec) in specs.enumerated() {
            let command = CommandFields.command(
                id: spec.id, title: spec.title, keys: spec.keys, scope: spec.scope, repeat: spec.repeat,
                priorityOverTextInput: spec.priorityOverTextInput, group: spec.group, discoverabilityTitle: spec.discoverabilityTitle,
                action: spec.action, phases: spec.phases, localize: spec.localize, mirror: spec.mirror, devices: spec.devices,
                location: SourceLocation(path: "commands[\(i)]", line: i + 1)
            ) { _, message in problems.append("commands[\(i)] (\(spec.id)): \(message)") }
            if let command {
                if command.keys.count > Self.maxSequenceChords {
                    problems.append("commands[\(i)] (\(spec.id)): keys: a sequence of \(command.keys.count) chords; at most \(Self.maxSequenceChords) may be registered")
                } else {
                    commands.append(command)
                }
            }
            // A few problems say what is wrong; more would only cost the loop's time.
            if problems.count >= 20 { break }
        }
        var table: CommandTable?
        if problems.isEmpty {
            do {
                table = try CommandTable(commands: commands, sequenceTimeoutMilliseconds: timeout ?? CommandTable.defaultSequenceTimeoutMilliseconds)
            } catch {
                problems += error.conflicts.map(\.description)
            }
        }
        guard let table, problems.isEmpty else {
            return Outcome(reply: .refused(name: "register", message: problems.prefix(20).joined(separator: "; ")), effects: [])
        }
        userTables.removeAll { $0.owner == peer.id }
        // One table per user: a second agent of the same uid (one started from `su -` without
        // the session's runtime directory, say) replaces the first, else every chord would run
        // the user's command twice. Operators' tools may register several.
        var replaced: [Effect] = []
        if !peer.trusted {
            for other in userTables where other.uid == peer.uid {
                replaced.append(.userTable(owner: other.owner, nil, uid: nil))
                replaced.append(.log(.warning, "control: uid \(peer.uid) registered a table from client \(peer.id); it replaces the one of client \(other.owner) (one table per user: is a second agent running?)"))
            }
            userTables.removeAll { $0.uid == peer.uid }
        }
        userTables.append((peer.id, peer.uid, peer.trusted, table))
        // Chords the system table binds in the same scope never reach the user's table.
        let shadowed = table.commands.filter { c in systemTable.commands.contains { $0.scope == c.scope && $0.keys == c.keys } }
        return Outcome(reply: .register(commands: table.commands.count, shadowed: shadowed.map(\.id)),
                       effects: replaced + [.userTable(owner: peer.id, table, uid: peer.trusted ? nil : peer.uid),
                                 .log(.info, "control: uid \(peer.uid) registered \(table.commands.count) commands\(peer.trusted ? "" : sessions.isActive(peer.uid) ? " (active on \(sessions.seats(of: peer.uid).joined(separator: ", ")))" : " (no active session on any seat: fires when it has one)")")])
    }

    /// The bytes a registered command costs (its text, and a fixed share for its entry).
    static func size(of spec: ControlRequest.CommandSpec) -> Int {
        64 + spec.id.utf8.count + (spec.title?.utf8.count ?? 0) + spec.keys.utf8.count + (spec.scope?.utf8.count ?? 0)
            + (spec.group?.utf8.count ?? 0) + (spec.discoverabilityTitle?.utf8.count ?? 0)
            + (spec.phases.runOnRelease?.reduce(0) { $0 + $1.utf8.count + 8 } ?? 0)
            + (spec.devices?.reduce(0) { $0 + $1.utf8.count + 8 } ?? 0)
    }

    /// Takes `cost` from the uid's budget of registration work; why not, when it is spent.
    private func chargeWork(_ cost: Int, uid: UInt32, now: EventTime) -> String? {
        let rate = Self.userWorkPerSecond
        var budget = workBudget[uid] ?? RateBudget(perSecond: rate, now: now)
        defer { workBudget[uid] = budget }
        guard budget.take(cost, now: now) else {
            let what = cost == Self.keymapCompileCost ? "asks for new keymaps faster than \(rate / Self.keymapCompileCost) compiles per second (each counts \(cost / 1024) KiB of its \(rate / 1024) KiB per second of work)"
                : "registers more than \(rate / 1024) KiB of commands per second"
            return "uid \(uid) \(what); try again in \(max(1, budget.wait(for: cost, now: now))) ms"
        }
        return nil
    }

    /// Why the uid's table would outgrow its bound, nil when it fits.
    private func userBound(_ specs: [ControlRequest.CommandSpec], cost: Int, for peer: Peer) -> String? {
        let commands = specs.count, bytes = cost
        var chords = 0
        for spec in specs { chords += spec.keys.split(separator: " ").count }
        // The uid's other tables are replaced by this one (one table per user): only it counts.
        if commands > Self.maxUserCommands { return "uid \(peer.uid) would have \(commands) registered commands; at most \(Self.maxUserCommands) over all its connections" }
        if chords > Self.maxUserChords { return "uid \(peer.uid) would have \(chords) registered chords; at most \(Self.maxUserChords) over all its connections" }
        if bytes > Self.maxUserBytes { return "uid \(peer.uid) would have \(bytes / 1024) KiB of registered commands; at most \(Self.maxUserBytes / 1024) KiB over all its connections" }
        return nil
    }
}
