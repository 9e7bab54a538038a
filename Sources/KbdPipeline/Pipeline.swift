public import KbdCore
public import KbdKeymap
public import KbdCommands
public import KbdGeometry
/// The stages after the source, shared by the live daemon and replay:
/// device bookkeeping and keyboard classification, `KeyMapper` (xkbcommon),
/// `ChordRouter` (command table), `KeyboardPresence`. Data flows one way:
/// `process` takes a `SourceEvent` and appends `PipelineEvent`s.
///
/// Time comes only from events; `nextDeadline` says when the caller must call
/// `advance(to:)` if no event arrives first (a pending sequence or presence
/// debounce). With nothing pending it is nil and the daemon can sleep.
public final class Pipeline {
    public struct Options: Sendable {
        /// Emit `.key` events (typed text): only for `--print keys` or an allowed subscriber.
        public var emitKeys: Bool
        public var compose: ComposeSource
        public var deviceFilter: DeviceFilter
        public var presenceDebounceMilliseconds: Int
        public var presencePolicy: PresencePolicy
        /// `[accessibility] sticky_keys`.
        public var stickyKeys: Bool
        /// `[hud]`: when the discoverability HUD shows (nil or not enabled: never).
        public var hud: HudSettings?
        /// `[device.keymap]` of each `deviceFilter.dedicated` (same order; nil: none): the
        /// keyboard it matches reads with that keymap and never with a desktop's.
        public var deviceKeymaps: [KeymapNames?]

        public init(
            emitKeys: Bool = false, compose: ComposeSource = .none, deviceFilter: DeviceFilter = DeviceFilter(),
            presenceDebounceMilliseconds: Int = KeyboardPresence.defaultDebounceMilliseconds, presencePolicy: PresencePolicy = .auto,
            stickyKeys: Bool = false, hud: HudSettings? = nil, deviceKeymaps: [KeymapNames?] = []
        ) {
            self.deviceKeymaps = deviceKeymaps
            self.stickyKeys = stickyKeys
            self.hud = hud
            self.emitKeys = emitKeys
            self.compose = compose
            self.deviceFilter = deviceFilter
            self.presenceDebounceMilliseconds = presenceDebounceMilliseconds
            self.presencePolicy = presencePolicy
        }
    }

    final class Device {
        let name: String
        let description: DeviceDescription
        let verdict: KeyboardClassifier.Verdict
        /// The logind seat (udev `ID_SEAT`, else seat0): a user's table fires only for keys
        /// typed on a seat where that user's session is active.
        let seat: String
        /// The seat's index in `seatNames` (0: the default seat), compared on each key.
        let seatIndex: Int
        /// Name, id and grab, for commands limited to keyboards (`devices = [...]`).
        let identity: DeviceIdentity
        /// Inside a SYN_DROPPED frame: events are discarded until SYN_REPORT.
        var dropping = false
        var droppedEvents = 0
        init(name: String, description: DeviceDescription, verdict: KeyboardClassifier.Verdict, seatIndex: Int, grabbed: Bool) {
            self.name = name
            identity = DeviceIdentity(name: description.name, id: description.id, grabbed: grabbed)
            self.description = description
            self.verdict = verdict
            self.seat = description.seat
            self.seatIndex = seatIndex
        }
    }

    public let options: Options
    public private(set) var mapper: KeyMapper
    /// The service's own keymap (the config's), which `setKeymap(nil, …)` brings back.
    public let baseKeymap: XkbKeymap
    /// The compiled `Options.deviceKeymaps`, by index of `deviceFilter.dedicated` (one keymap
    /// per distinct description).
    private let dedicatedKeymaps: [Int: XkbKeymap]
    /// How the commands of pads with their own keymap show (the HUD, the bar), made once here.
    public let padKeycaps: PadKeycaps
    /// The system table's router of the seat whose keyboard typed last (the default seat's
    /// until another seat's keyboard types); the other seats' wait in `parkedRouters`, each
    /// with its own scopes, text input and pending sequence.
    public private(set) var router: ChordRouter
    /// Seat names by index; 0 is the default seat.
    private var seatNames: [String] = [ActiveSessions.defaultSeat]
    /// Per seat index, its system router while another seat's is `router` (nil: it is `router`).
    private var parkedRouters: [ChordRouter?] = [nil]
    private var routerSeat = 0
    /// How each seat's keys are read when its session (or an operator) claimed it: a
    /// desktop's keymap and locked layout, sticky keys. A seat absent here reads with the
    /// service's own keymap and the config's sticky keys.
    private var seatKeymaps: [String: (keymap: XkbKeymap, layout: Int?)] = [:]
    private var seatSticky: [String: Bool] = [:]
    public private(set) var presence: KeyboardPresence
    /// The layout guide that presence drives (nil: no `[geometry]` configured).
    public private(set) var geometry: KeyboardGeometry?
    private var devices = DeviceMap<Device>()
    /// Devices inside a SYN_DROPPED frame (their events are discarded until SYN_REPORT).
    private var droppingDevices = 0
    private var routerOutputs: [ChordRouter.Output] = []
    /// The discoverability HUD (hold, `action = "hud"`, pending sequences).
    public private(set) var hud: HudState
    /// `[hud] enabled` (read once per key: off, the HUD costs typing nothing more).
    private let hudEnabled: Bool
    private var hudOutputs: [HudState.Output] = []
    /// Events read from devices and processed, or counted as dropped.
    public private(set) var eventsProcessed = 0
    public private(set) var eventsDropped = 0

    public init(
        keymap: XkbKeymap, table: CommandTable, scopes: [String] = [], textInputActive: Bool = false, geometry: GeometryState? = nil,
        options: Options = Options()
    ) throws(KeymapError) {
        self.options = options
        self.geometry = geometry.map { KeyboardGeometry($0) }
        self.baseKeymap = keymap
        self.dedicatedKeymaps = try Self.compile(options.deviceKeymaps, base: keymap)
        self.padKeycaps = PadKeycaps(dedicated: options.deviceFilter.dedicated, keymaps: dedicatedKeymaps)
        self.mapper = try KeyMapper(keymap: keymap, options: KeyMapper.Options(wantsText: options.emitKeys, compose: options.compose,
                                                                                 stickyKeys: options.stickyKeys))
        self.router = ChordRouter(table: table, scopes: scopes, textInputActive: textInputActive)
        self.presence = KeyboardPresence(debounceMilliseconds: options.presenceDebounceMilliseconds, policy: options.presencePolicy)
        self.hud = HudState(settings: options.hud ?? HudSettings(enabled: false))
        self.hudEnabled = options.hud?.enabled ?? false
    }

    public var table: CommandTable { router.table }

    /// Compiles each distinct `[device.keymap]` once, in the base keymap's context: the rules
    /// and model are the base's unless it names its own, and so are the layout (with its
    /// variant) and the options.
    private static func compile(_ names: [KeymapNames?], base: XkbKeymap) throws(KeymapError) -> [Int: XkbKeymap] {
        var compiled: [KeymapNames: XkbKeymap] = [:]
        var out: [Int: XkbKeymap] = [:]
        for (i, own) in names.enumerated() {
            guard let own else { continue }
            let full = own.forDevice(base: base.names)
            if let k = compiled[full] {
                out[i] = k
            } else {
                let k = try XkbKeymap(context: base.context, names: full)
                compiled[full] = k
                out[i] = k
            }
        }
        return out
    }


    /// Users' tables (their agents'), by owner: routed after the system table, which
    /// always wins a key it has a command or a pending sequence for. `uid` is set for a
    /// table that is not an operator's: it fires only for keys typed on a seat where that
    /// uid owns the active session.
    private var userRouters: [(owner: Int, uid: UInt32?, router: ChordRouter)] = []
    /// Who is at each seat (logind): read only while a user's table is registered.
    public private(set) var activeSessions = ActiveSessions.unavailable
    /// Keys held when a seat changed hands (device, code): their repeats fire nothing until
    /// they are released, so a chord held across a user switch does not reach the next user.
    private var heldAtSwitch: Set<HeldKey> = []
    private struct HeldKey: Hashable {
        var device: DeviceID
        var code: UInt16
    }
    /// Scopes and text input an owner set for its own table (its session's focused window);
    /// an owner without a claim follows the system table's.
    private var ownScopes: [Int: [String]] = [:]
    private var ownTextInput: [Int: Bool] = [:]

    /// Sets (or with nil removes) the table of `owner`. `uid` nil: an operator's table,
    /// routed whoever is at the keyboard; else it fires only where `uid` is active.
    public func setUserTable(_ table: CommandTable?, owner: Int, uid: UInt32? = nil) {
        userRouters.removeAll { $0.owner == owner }
        if let table {
            userRouters.append((owner, uid, ChordRouter(table: table, scopes: ownScopes[owner] ?? router.activeScopes,
                                                   textInputActive: ownTextInput[owner] ?? router.textInputActive)))
        }
    }

    /// The users' tables, by owner.
    public var userTables: [(owner: Int, table: CommandTable)] { userRouters.map { ($0.owner, $0.router.table) } }

    /// Who is at each seat now. When a seat changed hands, every pending sequence starts over
    /// and the keys held at that moment fire nothing until released (held chords are reset).
    public func setActiveSessions(_ sessions: ActiveSessions) {
        let changed = !sessions.changes(from: activeSessions).isEmpty
        activeSessions = sessions
        guard changed else { return }
        forEachSystemRouter { $0.cancelPending() }
        for i in userRouters.indices { userRouters[i].router.cancelPending() }
        for (id, device) in devices.entries where device.verdict.isKeyboard {
            for code in mapper.keysDown(id) { heldAtSwitch.insert(HeldKey(device: id, code: code)) }
        }
    }

    /// The scopes and text input routing the table of `owner` (nil: it has none).
    public func userState(owner: Int) -> (scopes: [String], textInput: Bool)? {
        userRouters.first { $0.owner == owner }.map { ($0.router.activeScopes, $0.router.textInputActive) }
    }

    /// Sets the active scopes (most specific first) of the system table and of the users'
    /// tables whose owners set none of their own. A router whose scopes do not change keeps
    /// its pending sequence.
    public func setScopes(_ scopes: [String]) {
        setScopes(scopes, seat: ActiveSessions.defaultSeat)
    }

    /// Sets the active scopes of `seat`'s system table (its keyboards route with them), and of
    /// the users' tables without scopes of their own when it is the default seat.
    public func setScopes(_ scopes: [String], seat: String) {
        withSystemRouter(seat) { if $0.activeScopes != scopes { $0.setScopes(scopes) } }
        guard seat == ActiveSessions.defaultSeat else { return }
        for i in userRouters.indices where ownScopes[userRouters[i].owner] == nil && userRouters[i].router.activeScopes != scopes {
            userRouters[i].router.setScopes(scopes)
        }
    }

    /// The scopes and text input of `seat`'s system table.
    public func systemRouting(seat: String) -> (scopes: [String], textInput: Bool) {
        guard let i = seatNames.firstIndex(of: seat), i != routerSeat, let parked = parkedRouters[i] else {
            return seatNames.firstIndex(of: seat) == nil ? ([], false) : (router.activeScopes, router.textInputActive)
        }
        return (parked.activeScopes, parked.textInputActive)
    }

    /// The index of `seat`, a router for it made on first sight (no scopes, no text input
    /// until the seat's claims arrive).
    private func seatIndex(_ seat: String) -> Int {
        if let i = seatNames.firstIndex(of: seat) { return i }
        seatNames.append(seat)
        parkedRouters.append(ChordRouter(table: router.table))
        return seatNames.count - 1
    }

    /// Applies `change` to the system router of `seat`.
    private func withSystemRouter(_ seat: String, _ change: (inout ChordRouter) -> Void) {
        let i = seatIndex(seat)
        if i == routerSeat { change(&router) } else { change(&parkedRouters[i]!) }
    }

    /// Makes `router` the system router of seat `index`, parking the one it was.
    private func switchRouter(to index: Int) {
        guard index != routerSeat, let next = parkedRouters[index] else { return }
        parkedRouters[routerSeat] = router
        parkedRouters[index] = nil
        router = next
        routerSeat = index
    }

    /// Every system router: the current one, then the parked ones.
    private func forEachSystemRouter(_ body: (inout ChordRouter) -> Void) {
        body(&router)
        for i in parkedRouters.indices where parkedRouters[i] != nil { body(&parkedRouters[i]!) }
    }

    /// Sets the scopes of `owner`'s own table (its session's focus); nil: it follows the
    /// system table's again.
    public func setScopes(_ scopes: [String]?, owner: Int) {
        ownScopes[owner] = scopes
        let effective = scopes ?? router.activeScopes
        for i in userRouters.indices where userRouters[i].owner == owner && userRouters[i].router.activeScopes != effective {
            userRouters[i].router.setScopes(effective)
        }
    }

    public func setTextInputActive(_ active: Bool) {
        setTextInputActive(active, seat: ActiveSessions.defaultSeat)
    }

    /// Sets whether text is typed on `seat`, for its system table (and, on the default seat,
    /// for the users' tables without a claim of their own).
    public func setTextInputActive(_ active: Bool, seat: String) {
        withSystemRouter(seat) { $0.textInputActive = active }
        guard seat == ActiveSessions.defaultSeat else { return }
        for i in userRouters.indices where ownTextInput[userRouters[i].owner] == nil { userRouters[i].router.textInputActive = active }
    }

    /// Sets whether text is typed in `owner`'s session (for its own table); nil: it follows
    /// the system table's again.
    public func setTextInputActive(_ active: Bool?, owner: Int) {
        ownTextInput[owner] = active
        for i in userRouters.indices where userRouters[i].owner == owner {
            userRouters[i].router.textInputActive = active ?? router.textInputActive
        }
    }

    /// Takes over the routing of `other`, the pipeline this one replaces (a reload with a new
    /// keymap): the system table's scopes and text input, and each user's table with its own
    /// scopes and text input, in one step. Pending sequences start over.
    public func adoptRouting(from other: Pipeline) {
        router.setScopes(other.router.activeScopes)
        router.textInputActive = other.router.textInputActive
        seatNames = other.seatNames
        routerSeat = other.routerSeat
        parkedRouters = other.parkedRouters.map { $0.map { ChordRouter(table: router.table, scopes: $0.activeScopes, textInputActive: $0.textInputActive) } }
        ownScopes = other.ownScopes
        ownTextInput = other.ownTextInput
        activeSessions = other.activeSessions
        hudDrawn = other.hudDrawn
        userRouters = other.userRouters.map {
            ($0.owner, $0.uid, ChordRouter(table: $0.router.table, scopes: $0.router.activeScopes, textInputActive: $0.router.textInputActive))
        }
    }

    /// Maps every keyboard's keys with `keymap` (the session's desktop keymap) and `layout`
    /// locked (its active layout); nil: the service's own keymap again, first layout. Keys
    /// held stay held; both the system table and users' tables see the keys mapped so.
    public func setKeymap(_ keymap: XkbKeymap?, layout: Int?) throws(KeymapError) {
        seatKeymaps.removeAll()
        try mapper.setKeymap(keymap ?? baseKeymap, layout: keymap == nil ? nil : layout)
    }

    /// How chords show on the keycaps of `seat`'s keymap and active layout (the HUD, the bar).
    public func keycaps(seat: String) -> ChordKeycaps {
        guard let reading = seatKeymaps[seat] else { return mapper.keycaps() }
        return ChordKeycaps(keymap: reading.keymap, layout: reading.layout ?? 0, positions: mapper.keyPositions(reading.keymap))
    }

    /// Maps `seat`'s keyboards with `keymap` and `layout` locked (nil: the service's own
    /// again); the other seats' keyboards are read as before.
    public func setKeymap(_ keymap: XkbKeymap?, layout: Int?, seat: String) throws(KeymapError) {
        seatKeymaps[seat] = keymap.map { ($0, layout) }
        let ids = keyboards(on: seat)
        try mapper.setKeymap(keymap ?? baseKeymap, layout: keymap == nil ? nil : layout, devices: ids)
    }

    /// Sticky keys as the desktop has them; nil: as `Options.stickyKeys` (the config) says.
    public func setStickyKeys(_ on: Bool?) {
        seatSticky.removeAll()
        mapper.setStickyKeys(on ?? options.stickyKeys)
    }

    /// The keyboards of `seat`.
    private func keyboards(on seat: String) -> [DeviceID] {
        devices.entries.filter { $0.1.seat == seat && $0.1.verdict.isKeyboard }.map(\.0)
    }

    /// Sticky keys on `seat`'s keyboards (nil: as the config says).
    public func setStickyKeys(_ on: Bool?, seat: String) {
        seatSticky[seat] = on
        let ids = keyboards(on: seat)
        mapper.setStickyKeys(on ?? options.stickyKeys, devices: ids)
    }

    /// Swaps in a new command table (a config reload that validated).
    public func replaceTable(_ table: CommandTable) { forEachSystemRouter { $0.replaceTable(table) } }

    /// The keyboard verdict for a device description under this pipeline's device filter.
    public func classify(_ description: DeviceDescription) -> KeyboardClassifier.Verdict {
        KeyboardClassifier.classify(description, filter: options.deviceFilter)
    }

    /// Names and verdicts of the attached devices.
    public var attachedDevices: [(DeviceID, String, KeyboardClassifier.Verdict)] {
        devices.entries.sorted { $0.0 < $1.0 }.map { ($0.0, $0.1.name, $0.1.verdict) }
    }

    /// The earliest time something happens without new input.
    public var nextDeadline: EventTime? {
        var earliest: EventTime? = presence.nextDeadline
        if let a = router.nextDeadline, earliest == nil || a < earliest! { earliest = a }
        // Other seats' routers exist only where a second seat has keyboards (read per event).
        if parkedRouters.count > 1 {
            for i in parkedRouters.indices {
                if let a = parkedRouters[i]?.nextDeadline, earliest == nil || a < earliest! { earliest = a }
            }
        }
        if let a = hud.nextDeadline, earliest == nil || a < earliest! { earliest = a }
        for u in userRouters {
            if let a = u.router.nextDeadline, earliest == nil || a < earliest! { earliest = a }
        }
        return earliest
    }

    /// Fires timers due at or before `time`.
    public func advance(to time: EventTime, into out: inout [PipelineEvent]) {
        if hudEnabled, let due = hud.nextDeadline, due <= time {
            // Before the routers: a prefix's continuations show at their delay (never after the
            // sequence's timeout: sequencePending does not wait longer), and the sequence then
            // waits a timeout more, while they are read.
            hud.expire(at: time, into: &hudOutputs)
            emitHud(into: &out)
        }
        routerOutputs.removeAll(keepingCapacity: true)
        forEachSystemRouter { $0.expire(at: time, into: &routerOutputs) }
        emitTimedCommands(owner: nil, into: &out)
        for i in userRouters.indices {
            let before = routerOutputs.count
            userRouters[i].router.expire(at: time, into: &routerOutputs)
            emitTimedCommands(owner: userRouters[i].owner, from: before, into: &out)
        }
        if hudEnabled { hudSequenceSignals(at: time, into: &out) }
        if let (at, reason) = presence.expire(at: time) { emitPresence(false, reason, at: at, into: &out) }
    }

    /// The HUD after a change between events (scopes, tables, who is at the seat): a
    /// prefix's continuations shown for a sequence no longer pending are hidden.
    public func settleHud(at time: EventTime, into out: inout [PipelineEvent]) {
        guard hudEnabled, hud.sequenceActive, pendingFor(hud.pendingOwner) == nil else { return }
        hud.sequenceEnded(at: time, into: &hudOutputs)
        emitHud(into: &out)
    }

    /// Toggles the HUD (a command with `action = "hud"` ran through `run_command`).
    public func toggleHud(at time: EventTime, into out: inout [PipelineEvent]) {
        guard hudEnabled else { return }
        hud.toggle(at: time, into: &hudOutputs)
        emitHud(into: &out)
    }

    /// Commands the routers fired without a key (a `hold_ms` reached, a keyboard detached
    /// while its keys were held), from `routerOutputs[start...]`, as `owner`'s (nil: the system table's).
    private func emitTimedCommands(owner: Int?, from start: Int = 0, into out: inout [PipelineEvent]) {
        guard routerOutputs.count > start else { return }
        for output in routerOutputs[start...] {
            guard case .command(let time, let id, let command, let chord, let phase) = output else { continue }
            if hudEnabled || command.action == .hud, hudCommand(command, owner: owner, at: time, into: &out) { continue }
            let device = devices[id]?.name ?? ""
            let text = command.isSequence || command.tapModifier != nil ? command.chordText : chord.description
            if let owner {
                out.append(.ownedCommand(owner: owner, time: time, device: device, command: command, chord: text, phase: phase))
            } else {
                out.append(.command(time: time, device: device, command: command, chord: text, phase: phase))
            }
        }
    }

    /// The routers' outputs about sequences (in `routerOutputs`), for the HUD.
    private func hudSequenceSignals(at time: EventTime, into out: inout [PipelineEvent]) {
        for output in routerOutputs {
            if case .sequenceCancelled(let at, _) = output { hud.sequenceEnded(at: at, into: &hudOutputs) }
        }
        emitHud(into: &out)
    }

    /// The pending prefix of the system table's router (`owner` nil) or of `owner`'s.
    private func pendingFor(_ owner: Int?) -> (keys: [ChordKey], scope: String)? {
        guard let owner else { return router.pendingPrefix }
        return userRouters.first { $0.owner == owner }?.router.pendingPrefix
    }

    /// The HUD's view for the system table (the daemon completes it for each reader).
    public func hudView(pending: HudState.Pending?) -> Discoverability.View {
        Discoverability.View(pending: pending, sources: [Discoverability.Source(table: router.table, scopes: router.activeScopes,
                                                                                textInput: router.textInputActive, keycaps: mapper.keycaps(),
                                                                                pads: padKeycaps)])
    }

    /// The seat whose keyboard last drove the HUD: only the user active there (and
    /// operators) are sent what it shows.
    public var hudSeat: String { seatNames[hudSeatIndex] }
    /// Its index in `seatNames` (an Int stored per key the HUD sees, not a string).
    private var hudSeatIndex = 0

    /// Whether a subscriber draws the HUD (the daemon says; replay has none). Only then, and
    /// only with `[hud] extend_sequence_timeout`, does a shown prefix wait longer.
    public var hudDrawn = false

    /// The HUD's outputs as pipeline events. A shown prefix extends its sequence's wait when
    /// the user asked for it and someone draws the HUD.
    private func emitHud(into out: inout [PipelineEvent]) {
        guard !hudOutputs.isEmpty else { return }
        for output in hudOutputs {
            switch output {
            case .show(let time, let trigger, let pending):
                if let pending, hudDrawn, hud.settings.extendSequenceTimeout {
                    let wait = time.adding(milliseconds: (pending.owner == nil ? router.table : userRouters.first { $0.owner == pending.owner }?.router.table)?.sequenceTimeoutMilliseconds ?? 0)
                    if let owner = pending.owner {
                        for i in userRouters.indices where userRouters[i].owner == owner { userRouters[i].router.extendPending(until: wait) }
                    } else {
                        router.extendPending(until: wait)
                    }
                }
                out.append(.hud(time: time, trigger: trigger, view: hudView(pending: pending)))
            case .hide(let time, let trigger):
                out.append(.hud(time: time, trigger: trigger, view: nil))
            }
        }
        hudOutputs.removeAll(keepingCapacity: true)
    }

    /// Ends a pending presence debounce now (after the devices present at start were opened:
    /// a laptop started in tablet mode reports absent at once, not present then absent).
    public func settlePresence(at time: EventTime, into out: inout [PipelineEvent]) {
        if let reason = presence.settleNow(at: time) { emitPresence(false, reason, at: time, into: &out) }
    }

    /// Processes one source event.
    public func process(_ event: SourceEvent, into out: inout [PipelineEvent]) {
        // Most events are SYN_REPORT and MSC_SCAN: while no device is inside a dropped frame
        // they change nothing and need neither a device lookup nor the timers (a deadline
        // they pass fires at the next event that does something, or at `advance`/`finish`,
        // with the same output: timers fire at their own times).
        if case .input(_, let input) = event, droppingDevices == 0, input.type != EventType.key, input.type != EventType.sw,
           !(input.type == EventType.syn && input.code == SynCode.dropped) {
            eventsProcessed += 1
            return
        }
        if let deadline = nextDeadline, event.time > deadline { advance(to: event.time, into: &out) }
        switch event {
        case .attached(let id, let description, let given, let time):
            advance(to: time, into: &out)
            let verdict = given ?? classify(description)
            if let old = devices[id], old.dropping { droppingDevices -= 1 }
            let dedicated = options.deviceFilter.dedicated(name: description.name, id: description.id)
            let grabbed = verdict.isKeyboard && dedicated?.grab == true
            devices[id] = Device(name: description.name, description: description, verdict: verdict, seatIndex: seatIndex(description.seat),
                                 grabbed: grabbed)
            out.append(.attach(time: time, device: description.name, keyboard: verdict.isKeyboard,
                               integration: verdict.isKeyboard ? verdict.integration : nil,
                               integrationReason: verdict.isKeyboard ? verdict.integrationReason : nil))
            if verdict.isKeyboard {
                if let own = options.deviceFilter.dedicatedIndex(name: description.name, id: description.id).flatMap({ dedicatedKeymaps[$0] }) {
                    // Its own [device.keymap]: not the seat's nor a desktop's.
                    try? mapper.attach(id, ownKeymap: own, sticky: seatSticky[description.seat])
                } else {
                    // A seat whose session claimed how keys are read reads this keyboard so too.
                    let reading = seatKeymaps[description.seat]
                    try? mapper.attach(id, keymap: reading?.keymap, layout: reading?.layout, sticky: seatSticky[description.seat])
                }
                // A grabbed pad is no keyboard the user types on, unless `presence = true` says so.
                if !grabbed || dedicated?.presence == true, let (present, reason) = presence.attach(id, integration: verdict.integration, at: time) {
                    emitPresence(present, reason, at: time, into: &out)
                }
            } else if verdict.isSwitch, let (present, reason) = presence.setSwitches(id, description.switchStates, at: time) {
                emitPresence(present, reason, at: time, into: &out)
            }

        case .input(let id, let input):
            eventsProcessed += 1
            guard let device = devices[id] else { return }
            if input.type == EventType.syn {
                if input.code == SynCode.dropped {
                    if !device.dropping { droppingDevices += 1 }
                    device.dropping = true
                } else if input.code == SynCode.report, device.dropping {
                    device.dropping = false
                    droppingDevices -= 1
                    // A recording cannot tell which keys are still down: release them all.
                    resync(id, keysDown: nil, at: input.time, into: &out)
                }
                return
            }
            if device.dropping {
                device.droppedEvents += 1
                eventsDropped += 1
                return
            }
            if input.type == EventType.sw {
                // Lid and tablet mode, from a switch device only (a keyboard's own switches do not count).
                if device.verdict.isSwitch, let (present, reason) = presence.setSwitch(id, code: input.code, value: input.value, at: input.time) {
                    emitPresence(present, reason, at: input.time, into: &out)
                }
                return
            }
            guard input.type == EventType.key, device.verdict.isKeyboard else { return }
            switch mapper.map(input, device: id) {
            case .key(let key): route(key, device: device, into: &out)
            case .dropped: eventsDropped += 1
            case .ignored: break
            }

        case .resynchronized(let id, let keys, let time):
            if let device = devices[id], device.dropping {
                device.dropping = false
                droppingDevices -= 1
            }
            resync(id, keysDown: keys, at: time, into: &out)

        case .switches(let id, let states, let time):
            guard let device = devices[id], device.verdict.isSwitch else { return }
            if device.dropping {
                device.dropping = false
                droppingDevices -= 1
            }
            if let (present, reason) = presence.setSwitches(id, states, at: time) { emitPresence(present, reason, at: time, into: &out) }

        case .detached(let id, let time):
            guard let device = devices[id] else { return }
            advance(to: time, into: &out)
            if device.verdict.isKeyboard {
                for key in mapper.detach(id, at: time) { route(key, device: device, into: &out) }
                routerOutputs.removeAll(keepingCapacity: true)
                forEachSystemRouter { $0.deviceDetached(id, at: time, into: &routerOutputs) }
                emitTimedCommands(owner: nil, into: &out)
                for i in userRouters.indices {
                    let before = routerOutputs.count
                    userRouters[i].router.deviceDetached(id, at: time, into: &routerOutputs)
                    emitTimedCommands(owner: userRouters[i].owner, from: before, into: &out)
                }
                if hudEnabled {
                    hud.deviceDetached(id, at: time, into: &hudOutputs)
                    hudSequenceSignals(at: time, into: &out)
                }
            }
            if device.dropping { droppingDevices -= 1 }
            devices[id] = nil
            out.append(.detach(time: time, device: device.name, keyboard: device.verdict.isKeyboard))
            if device.verdict.isKept, let (present, reason) = presence.detach(id, at: time) {
                emitPresence(present, reason, at: time, into: &out)
            }
        }
    }

    /// Ends a run (end of the recordings): fires every pending timer.
    public func finish(into out: inout [PipelineEvent]) {
        while let deadline = nextDeadline {
            advance(to: deadline, into: &out)
        }
    }

    private func resync(_ id: DeviceID, keysDown: Set<UInt16>?, at time: EventTime, into out: inout [PipelineEvent]) {
        guard let device = devices[id], device.verdict.isKeyboard else { return }
        let keys = keysDown.map { mapper.synchronize(id, keysDown: $0, at: time) } ?? mapper.releaseAll(id, at: time)
        for key in keys { route(key, device: device, into: &out) }
        if device.droppedEvents > 0 {
            out.append(.dropped(time: time, device: device.name, count: device.droppedEvents, reason: "SYN_DROPPED"))
            device.droppedEvents = 0
        }
    }

    private func route(_ key: KeyEvent, device source: Device, into out: inout [PipelineEvent]) {
        let device = source.name
        // Each seat routes with its own claims (an Int compare while one seat types).
        if source.seatIndex != routerSeat { switchRouter(to: source.seatIndex) }
        if options.emitKeys { out.append(.key(key, device: device)) }
        // The HUD sees modifier keys, and every key only while it is shown or a hold is armed.
        if hudEnabled, key.isModifierKey || !hud.isQuiet {
            hudSeatIndex = source.seatIndex
            hud.handle(key, othersHeld: self.mapper.keysDown(key.device).contains { $0 != key.code }, into: &hudOutputs)
            emitHud(into: &out)
        }
        guard !key.synthetic else {
            if key.state == .release { syntheticRelease(key, source.identity, into: &out) }
            return
        }
        if !heldAtSwitch.isEmpty, heldAtSwitch.contains(HeldKey(device: key.device, code: key.code)) {
            // Held across a user switch: its repeats fire nothing; a release or a new press ends that.
            if key.state != .repeat { heldAtSwitch.remove(HeldKey(device: key.device, code: key.code)) }
            if key.state != .press { return }
        }
        // Emptied only when not empty: removeAll is a generic replaceSubrange call (~80
        // instructions) even on an empty array, once per key event.
        if !routerOutputs.isEmpty { routerOutputs.removeAll(keepingCapacity: true) }
        router.handle(key, on: source.identity, into: &routerOutputs)
        var systemTook = router.isPending
        for output in routerOutputs {
            switch output {
            case .chord(let time, _, let chord):
                out.append(.chord(time: time, device: device, chord: chord.description))
            case .command(let time, _, let command, let chord, let phase):
                systemTook = true
                if hudEnabled || command.action == .hud, hudCommand(command, owner: nil, at: time, into: &out) { continue }
                let text = command.isSequence || command.tapModifier != nil ? command.chordText : chord.description
                out.append(.command(time: time, device: device, command: command, chord: text, phase: phase))
            case .sequencePending(let time, _):
                if hudEnabled, let p = router.pendingPrefix {
                    hudPending(HudState.Pending(owner: nil, keys: p.keys, scope: p.scope), table: router.table, at: time, into: &out)
                }
            case .sequenceCancelled(let time, _):
                if hudEnabled {
                    hud.sequenceEnded(at: time, into: &hudOutputs)
                    emitHud(into: &out)
                }
            }
        }
        guard !userRouters.isEmpty else { return }
        for i in userRouters.indices {
            if let uid = userRouters[i].uid, activeSessions.activeUID[source.seat] != uid {
                // Not that user's keyboard now: nobody else's typing reaches a user's table.
                userRouters[i].router.cancelPending()
                continue
            }
            if systemTook {
                // The system table has this key: no user table sees it.
                userRouters[i].router.cancelPending()
                continue
            }
            if !routerOutputs.isEmpty { routerOutputs.removeAll(keepingCapacity: true) }
            userRouters[i].router.handle(key, on: source.identity, into: &routerOutputs)
            let owner = userRouters[i].owner
            for output in routerOutputs {
                switch output {
                case .command(let time, _, let command, let chord, let phase):
                    if hudEnabled || command.action == .hud, hudCommand(command, owner: owner, at: time, into: &out) { continue }
                    let text = command.isSequence || command.tapModifier != nil ? command.chordText : chord.description
                    out.append(.ownedCommand(owner: owner, time: time, device: device, command: command, chord: text, phase: phase))
                case .sequencePending(let time, _):
                    if hudEnabled, let p = userRouters[i].router.pendingPrefix {
                        hudPending(HudState.Pending(owner: owner, keys: p.keys, scope: p.scope), table: userRouters[i].router.table, at: time, into: &out)
                    }
                case .sequenceCancelled(let time, _):
                    if hudEnabled {
                        hud.sequenceEnded(at: time, into: &hudOutputs)
                        emitHud(into: &out)
                    }
                case .chord:
                    break
                }
            }
        }
        // A user's prefix the loop above dropped (the service's table took the key, or the key
        // came from another seat) takes its continuations with it.
        if hudEnabled, let owner = hud.pendingOwner, pendingFor(owner) == nil {
            hud.sequenceEnded(at: key.time, into: &hudOutputs)
            emitHud(into: &out)
        }
    }

    /// A release the pipeline made up (a SYN_DROPPED resync, a detach): only the key phases
    /// see it, so a held command still gets its release (push-to-talk is not left on).
    private func syntheticRelease(_ key: KeyEvent, _ identity: DeviceIdentity, into out: inout [PipelineEvent]) {
        if router.table.hasPhases {
            routerOutputs.removeAll(keepingCapacity: true)
            router.handle(key, on: identity, into: &routerOutputs)
            emitTimedCommands(owner: nil, into: &out)
        }
        for i in userRouters.indices where userRouters[i].router.table.hasPhases {
            routerOutputs.removeAll(keepingCapacity: true)
            userRouters[i].router.handle(key, on: identity, into: &routerOutputs)
            emitTimedCommands(owner: userRouters[i].owner, into: &out)
        }
    }

    /// A fired command, for the HUD: a sequence that completed ends its continuations; a
    /// command with `action = "hud"` toggles the HUD instead of running (true: it did).
    private func hudCommand(_ command: Command, owner: Int?, at time: EventTime, into out: inout [PipelineEvent]) -> Bool {
        // With the HUD off (`[hud] enabled = false`), a HUD command does nothing at all.
        guard hudEnabled else { return true }
        if hud.sequenceActive, hud.pendingOwner == owner { hud.sequenceEnded(at: time, into: &hudOutputs) }
        if command.action == .hud { hud.toggle(at: time, into: &hudOutputs) }
        emitHud(into: &out)
        return command.action == .hud
    }

    /// A prefix is pending: the HUD shows its continuations after `[hud] sequence_delay_ms`,
    /// unless the sequence times out first (then never: `check` warns).
    private func hudPending(_ pending: HudState.Pending, table: CommandTable, at time: EventTime, into out: inout [PipelineEvent]) {
        if hud.settings.sequenceDelayMilliseconds <= table.sequenceTimeoutMilliseconds || hud.shown?.trigger == .sequence {
            hud.sequencePending(pending, at: time, into: &hudOutputs)
        } else {
            hud.sequenceEnded(at: time, into: &hudOutputs)
        }
        emitHud(into: &out)
    }

    private func emitPresence(_ present: Bool, _ reason: PresenceReason, at time: EventTime, into out: inout [PipelineEvent]) {
        out.append(.presence(time: time, hardwareKeyboard: present, reason: reason))
        if let report = geometry?.setHardwareKeyboard(present) {
            out.append(.geometry(time: time, report: report))
        }
    }
}
