public import KbdCore
public import KbdCommands
public import KbdPipeline

/// Who is sent what: the session decides, for each connected client, which events it may
/// see (its subscriptions, whether it is an operator or the user at the seat) and with which
/// tables; the daemon writes the lines it is handed and drops a client whose socket fails.
extension ControlSession {
    /// A connected client as the session knows it.
    struct ClientState {
        var peer: Peer
        var subscriptions: Set<ControlEventKind> = []
        /// The last `toolbar` event sent (nil: none yet, or the client may not see one now).
        var lastToolbar: ControlEvent.Toolbar?
        /// The last `hud` event sent (its content, for a refresh while the HUD stays shown).
        var lastHud: ControlEvent.Hud?
    }

    /// One event for one client.
    public struct Delivery: Sendable, Equatable {
        public var client: Int
        public var event: ControlEvent
        public init(client: Int, event: ControlEvent) {
            self.client = client
            self.event = event
        }
    }

    /// A client connected (the daemon accepted it): it is sent nothing until it subscribes,
    /// but the session events of its uid.
    public func connected(_ peer: Peer) {
        clients[peer.id] = ClientState(peer: peer)
    }

    /// What `client` subscribed to (empty: nothing, or not connected).
    public func subscriptions(of client: Int) -> Set<ControlEventKind> { clients[client]?.subscriptions ?? [] }

    /// Calls `body` with each client subscribed to `kind` (pipeline events go to them as they
    /// are: presence, geometry, commands, chords, keys where allowed).
    public func forEachSubscriber(of kind: ControlEventKind, _ body: (Int) -> Void) {
        for (id, client) in clients where client.subscriptions.contains(kind) { body(id) }
    }

    /// Whether a client that may see it draws the HUD (a sequence then waits longer for its
    /// shown continuations).
    public var hudDrawn: Bool { clients.values.contains { $0.subscriptions.contains(.hud) && seesCommands($0.peer) } }

    /// What a client's HUD and toolbar show: the system table as the client's seat routes it
    /// (a user at seat1 sees seat1's chain), and the tables its uid registered.
    func commandSources(for peer: Peer, pipeline: Pipeline) -> [Discoverability.Source] {
        let seat = seat(of: peer)
        let routing = pipeline.systemRouting(seat: seat)
        // Chords as that seat's keycaps show them (localize, mirror); a pad's commands as the pad's own.
        let keycaps = pipeline.keycaps(seat: seat), pads = pipeline.padKeycaps
        var sources = [Discoverability.Source(table: pipeline.table, scopes: routing.scopes, textInput: routing.textInput, keycaps: keycaps,
                                              pads: pads)]
        for owner in tableOwners(uid: peer.uid) {
            guard let table = pipeline.userTables.first(where: { $0.owner == owner })?.table, let state = pipeline.userState(owner: owner) else { continue }
            sources.append(Discoverability.Source(table: table, owner: owner, scopes: state.scopes, textInput: state.textInput, keycaps: keycaps,
                                                  pads: pads))
        }
        return sources
    }

    /// A `hud` event to each subscriber that may see it (an operator, or the user active on
    /// the seat whose keyboard drove the HUD), with its own tables. A prefix of a user's table
    /// shows only to that user's clients. With `onlyChanged`, a client gets it only when it
    /// differs from the last it got (a refresh of a HUD that stays shown while the focus, text
    /// input or tables change).
    public func hudDeliveries(time: EventTime, trigger: HudTrigger, view: Discoverability.View?, onlyChanged: Bool = false,
                              pipeline: Pipeline) -> [Delivery] {
        let seconds = Double(time.microseconds) / 1_000_000
        let hudSeatUser = sessions.activeUID[pipeline.hudSeat]
        var out: [Delivery] = []
        for id in clients.keys.sorted() {
            guard let client = clients[id], client.subscriptions.contains(.hud), client.peer.trusted || client.peer.uid == hudSeatUser else { continue }
            var hud = ControlEvent.Hud.hidden(trigger)
            if let view {
                let sources = commandSources(for: client.peer, pipeline: pipeline)
                if let owner = view.pending?.owner, !sources.contains(where: { $0.owner == owner }) { continue }
                hud = ControlEvent.Hud(trigger: trigger, view: Discoverability.View(pending: view.pending, sources: sources))
            }
            if onlyChanged, hud == client.lastHud { continue }
            clients[id]?.lastHud = hud
            out.append(Delivery(client: id, event: ControlEvent(time: seconds, payload: .hud(hud))))
        }
        return out
    }

    /// What each `toolbar` subscriber that may see it shows now, for those it changed for.
    public func toolbarDeliveries(time: EventTime, pipeline: Pipeline) -> [Delivery] {
        let seconds = Double(time.microseconds) / 1_000_000
        var out: [Delivery] = []
        for id in clients.keys.sorted() {
            guard let client = clients[id], client.subscriptions.contains(.toolbar) else { continue }
            guard seesCommands(client.peer) else {
                clients[id]?.lastToolbar = nil
                continue
            }
            let bar = ControlEvent.Toolbar(Discoverability.View(pending: nil, sources: commandSources(for: client.peer, pipeline: pipeline)))
            guard bar != client.lastToolbar else { continue }
            clients[id]?.lastToolbar = bar
            out.append(Delivery(client: id, event: ControlEvent(time: seconds, payload: .toolbar(bar))))
        }
        return out
    }

    /// Tells the clients of `uid` that its session on `seat` came or went (those subscribed
    /// to `session` events, operators' clients, learn it from the broadcast that follows a
    /// session becoming active).
    public func sessionEventDeliveries(uid: UInt32, seat: String, active: Bool, time: EventTime) -> [Delivery] {
        let seconds = Double(time.microseconds) / 1_000_000
        var out: [Delivery] = []
        let direct = ControlEvent(time: seconds, payload: .session(seat: seat, active: active, uid: nil))
        for id in clients.keys.sorted() where clients[id]!.peer.uid == uid && !clients[id]!.subscriptions.contains(.session) {
            out.append(Delivery(client: id, event: direct))
        }
        guard active else { return out }
        let broadcast = ControlEvent(time: seconds, payload: .session(seat: seat, active: true, uid: uid))
        for id in clients.keys.sorted() where clients[id]!.subscriptions.contains(.session) {
            out.append(Delivery(client: id, event: broadcast))
        }
        return out
    }
}
