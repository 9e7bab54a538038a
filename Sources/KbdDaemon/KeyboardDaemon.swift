import KbdSystem
public import KbdCore
import KbdKeymap
public import KbdCommands
public import KbdPipeline
public import KbdConfig
import KbdControl
import KbdGeometry
public import KbdSeats
public import Logging
public import KbdProcess
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// The live service: one thread runs `run()`, owns every device handle (`DeviceSet`), the
/// control socket and the children, and sleeps in its `EventLoop` with no timeout unless a
/// named timer is armed (a pending sequence, presence debounce, a command's limit). Devices
/// feed the same `Pipeline` as replay; the control session decides what each client is sent,
/// and the daemon writes it.
///
/// Everything that touches the process (signals, sd_notify, the config path) is
/// the caller's: signals come in through `addExternal`, config through `load`.
public final class KeyboardDaemon {
    public let options: Options
    public let logger: Logger
    private let clock: () -> EventTime
    /// When the service started, on the clock event times use (the subscribe reply's
    /// `started`: `watch` prints times relative to it).
    private let started: EventTime
    private let load: () throws -> Loaded
    /// The loop: every descriptor registered as a `DaemonRegistration`, the deadlines as named timers.
    private let loop: DaemonLoop
    private var loaded: Loaded
    private var pipeline: Pipeline
    private var control: ControlServer?
    public let runner: CommandRunner
    private let devices: DeviceSet
    /// Outside descriptors' handlers (`addExternal`), by `.external(index)`.
    private var externals: [Int: () -> Void] = [:]
    /// Clients the loop handed over in this turn (the backlog timer serves the others).
    private var readyClients: Set<Int32> = []
    /// The control socket's rules and the claims clients hold (scopes, text input, users'
    /// tables): the daemon applies what it decides to the pipeline.
    private let session = ControlSession()
    /// Desktop keymaps compiled (or refused) for `set_keymap`.
    private var desktopKeymaps = DesktopKeymapCache()
    /// When a change of the keymap or of sticky keys was last logged at info: more within a
    /// minute go to debug (a desktop cycling layouts must not fill the journal).
    private var keymapLoggedAt: EventTime?
    private var stickyLoggedAt: EventTime?
    /// Who is at each seat (logind), followed from the first client that is not an operator
    /// on (an idle service, or one serving operators only, never loads libsystemd).
    private var seats: SeatTracker?
    /// Why logind is not followed, once it was tried (nil: not tried yet, or followed).
    private var seatsProblem: String?
    /// Opens the logind source (tests give a fake; default: sd-login from libsystemd).
    public var loginSource: () throws(SeatsUnavailable) -> any LoginSource = { () throws(SeatsUnavailable) -> any LoginSource in try SystemdLogin() }
    /// The result of a reload already done in this turn of the loop: repeated requests share it.
    private var reloadThisTurn: ReloadOutcome?
    private var stopRequested = false
    private var events: [PipelineEvent] = []
    /// Called with every pipeline event after the daemon handled it (tests, metrics).
    public var observer: ((PipelineEvent) -> Void)?
    /// Called after each command was dispatched: (command, event time, dispatch time), for latency figures.
    public var dispatchObserver: ((Command, EventTime, EventTime) -> Void)?

    /// Loads the config (throws if the first one is bad), opens the socket, scans devices.
    public init(options: Options, source: any DeviceSource, logger: Logger, clock: @escaping () -> EventTime = monotonicNow,
                load: @escaping () throws -> Loaded) throws {
        self.options = options
        self.logger = logger
        self.clock = clock
        self.started = clock()
        self.load = load
        let loop = try DaemonLoop(clock: clock, inputFirst: { $0.isInput })
        self.loop = loop
        self.loaded = try load()
        self.runner = CommandRunner(maxChildren: options.maxChildren, environment: options.childEnvironment, logger: logger, clock: clock,
                                    exitNotice: options.childExits)
        self.pipeline = try Self.makePipeline(loaded, options: options)
        self.devices = DeviceSet(source: source, logger: logger, clock: clock, loop: loop)
        runner.watch = { fd, kind in try? loop.watch(fd, as: kind == .output ? .commandOutput(fd) : .commandExit(fd)) }
        runner.unwatch = { fd in loop.unwatch(fd) }
        runner.setPaused = { fd, paused in loop.modify(fd, events: paused ? 0 : Epoll.readable) }
        if let path = options.socketPath {
            control = try ControlServer(path: path, mode: options.userAgents ? 0o666 : 0o660, logger: logger, loop: loop,
                                        maxClients: options.maxClients, userAgents: options.userAgents)
            logger.info("control socket at \(path)")
        }
        connectDevices()
        if try !devices.startWatching() { logger.warning("cannot watch for new devices yet (no input directory); will retry") }
        devices.scan()
        pipeline.settlePresence(at: clock(), into: &events)
        publish()
        let refused = devices.unreadableNodes
        if refused > 0 { logger.warning("\(refused) keyboard or switch nodes could not be opened: permission denied. \(DeviceSet.accessFix)") }
        logger.info("ready: \(loaded.config.table.commands.count) commands, \(keyboardCount) keyboards, \(devices.openCount - keyboardCount) switches\(refused > 0 ? ", \(refused) keyboard or switch nodes not readable" : "")")
    }

    /// The devices' events go to the pipeline (whichever is current after a reload).
    private func connectDevices() {
        devices.deliver = { [unowned self] event in pipeline.process(event, into: &events) }
        devices.publish = { [unowned self] in publish() }
        devices.classify = { [unowned self] description in pipeline.classify(description) }
        devices.grabReason = { [unowned self] in loaded.config.devices.grabReason(name: $0, id: $1) }
    }

    private static func makePipeline(_ loaded: Loaded, options: Options) throws -> Pipeline {
        try Pipeline(keymap: loaded.keymap, table: loaded.config.table, geometry: try loaded.config.geometryState(),
                     options: Pipeline.Options(emitKeys: options.allowKeyEvents, compose: options.allowKeyEvents ? options.compose : .none,
                                               deviceFilter: loaded.config.devices,
                                               presenceDebounceMilliseconds: options.presenceDebounceMilliseconds,
                                               presencePolicy: loaded.config.presence, stickyKeys: loaded.config.stickyKeys,
                                               hud: loaded.config.hud, deviceKeymaps: loaded.config.deviceKeymaps))
    }

    public var config: Config { loaded.config }
    public var keyboardCount: Int { devices.keyboardCount }
    /// Every node seen, with its verdict or why it could not be opened.
    public var known: [String: DeviceRow] { devices.known }
    public var hardwareKeyboardPresent: Bool { pipeline.presence.reported }
    public var presenceReason: PresenceReason { pipeline.presence.reason }
    public var socketPath: String? { control?.path }
    /// When the pipeline next needs the loop without input (a pending sequence, a HUD's
    /// delay, presence debounce); nil: nothing pending, the loop sleeps until input.
    public var pipelineDeadline: EventTime? { pipeline.nextDeadline }

    /// Watches an outside descriptor (a signalfd, say); `handler` runs when it is readable.
    public func addExternal(_ fd: Int32, handler: @escaping () -> Void) throws {
        let index = externals.count
        externals[index] = handler
        try loop.watch(fd, as: .external(index))
    }

    public func requestStop() { stopRequested = true }

    /// Replaces the control socket's peer check (default: root, our uid, or a member of our
    /// group); `groups` are the peer's supplementary groups (`SO_PEERGROUPS`).
    public func setPeerAuthorization(_ check: @escaping (_ uid: UInt32, _ gid: UInt32, _ groups: [UInt32]) -> Bool) {
        control?.authorize = check
    }

    /// Replaces how the control socket reads a client's credentials (`SO_PEERCRED`; tests give
    /// clients other uids): (pid, uid, gid) from the real ones, nil to drop the client.
    public func setPeerCredentials(_ credentials: @escaping (_ fd: Int32, _ real: (pid: Int32, uid: UInt32, gid: UInt32)) -> (pid: Int32, uid: UInt32, gid: UInt32)?) {
        control?.peerCredentials = { fd in
            var cred = kbd_peer()
            guard kbd_peer_credentials(fd, &cred) == 0, let fake = credentials(fd, (cred.pid, cred.uid, cred.gid)) else { return nil }
            return kbd_peer(pid: fake.pid, uid: fake.uid, gid: fake.gid)
        }
    }

    /// Replaces how the control socket accepts (tests simulate running out of descriptors):
    /// returns the new descriptor, or -1 and the errno.
    public func setAccept(_ accept: @escaping (_ listener: Int32) -> (Int32, Int32)) {
        control?.accept = accept
    }

    /// Whether the control socket stopped accepting (out of descriptors).
    public var acceptingPaused: Bool { control?.acceptRetryAt != nil }

    /// The most bytes read from one control client in one wakeup.
    public var largestClientReadPerWakeup: Int { control?.largestReadPerWakeup ?? 0 }

    /// The control clients connected now.
    public var controlClientCount: Int { control?.clients.count ?? 0 }

    /// Runs until `requestStop()`.
    public func run() {
        while !stopRequested { runOnce(maxWaitMilliseconds: nil) }
        shutdown()
    }

    /// Waits for activity (at most until the next deadline, or `maxWaitMilliseconds`) and handles it.
    public func runOnce(maxWaitMilliseconds: Int?) {
        reloadThisTurn = nil
        control?.startTurn()
        readyClients.removeAll(keepingCapacity: true)
        armTimers()
        // The deadlines are armed again once the turn's input is handled: one it made due fires now.
        loop.runOnce(maxWait: maxWaitMilliseconds, beforeTimers: armTimers) { [unowned self] event in handle(event) }
        // A command's process has usually exited by the next wake-up (the key's release).
        if runner.exitNotice == .polled { runner.reap() }
        // After the replies: toolbars that changed, and what run_command fired.
        if toolbarsStale { refreshToolbars() }
        if !events.isEmpty { publish() }
    }

    /// Each timer from the deadline of what owns it.
    private func armTimers() {
        loop.timers.arm(.pipeline, at: pipeline.nextDeadline)
        loop.timers.arm(.commands, at: runner.nextDeadline)
        loop.timers.arm(.unreadableNodes, at: devices.nextAccessCheck)
        loop.timers.arm(.acceptRetry, at: control?.acceptRetryAt)
        loop.timers.arm(.backlog, at: control?.backlog.isEmpty == false ? clock() : nil)
    }

    private func handle(_ event: DaemonLoop.Event) {
        switch event {
        case .ready(let registration, let events): ready(registration, events: events)
        case .timer(let timer): fire(timer)
        case .signal, .directoryChanged: break  // the caller's signals come through addExternal
        }
    }

    private func ready(_ registration: DaemonRegistration, events: UInt32) {
        switch registration {
        case .device(let id): devices.read(id)
        case .hotplug: devices.hotplug()
        case .listener: acceptClients()
        case .client(let fd):
            readyClients.insert(fd)
            if let client = control?.clients[fd] { clientReady(client, events: events) }
        case .commandOutput(let fd): runner.drainOutput(fd)
        case .commandExit(let fd): runner.processExited(fd)
        case .external(let index): externals[index]?()
        case .seats: seatsChanged()
        }
    }

    private func fire(_ timer: DaemonTimer) {
        let now = clock()
        switch timer {
        case .pipeline:
            pipeline.advance(to: now, into: &events)
            publish()
        case .commands: runner.advance(to: now)
        case .unreadableNodes: devices.reportUnreadable(at: now)
        case .acceptRetry: control?.resumeAccepting()
        case .backlog:
            // Clients over their share of a turn, not already served in this one.
            guard let control else { return }
            for fd in control.backlog where !readyClients.contains(fd) {
                if let client = control.clients[fd] { serve(client, readFirst: false) }
            }
        }
    }

    // MARK: - Devices

    /// Keyboard and switch nodes the service may not read (permission denied), as `list_devices`
    /// shows them; nodes the source says are neither are not counted.
    public var unreadableNodes: Int { devices.unreadableNodes }

    /// Retries watching and scanning (the input directory appeared later, as in a container).
    public func rescan() { devices.rescan() }

    // MARK: - Output

    private func publish() {
        guard !events.isEmpty else { return }
        for event in events {
            switch event {
            case .chord(_, let device, let chord):
                logger.debug("chord \(chord) on \"\(device)\"")
            case .command(let time, let device, let command, let chord, let phase):
                // A binding on a key that types text would put what was typed in the log:
                // such commands are logged without their chord.
                let when = EventFormatter.shownPhase(command, phase).map { " (\($0.rawValue))" } ?? ""
                if command.keys.contains(where: { !$0.hasCommandModifier }) && command.tapModifier == nil {
                    logger.info("command \(command.id) \"\(command.title)\" on \"\(device)\"\(when)")
                } else {
                    logger.info("command \(command.id) \"\(command.title)\" (\(chord)) on \"\(device)\"\(when)")
                }
                // At a release, a command with run_on_release runs that (issue 36); else its run.
                let argv = command.argv(for: phase)
                if !argv.isEmpty { runner.run(argv, commandID: command.id) }
                dispatchObserver?(command, time, clock())
            case .ownedCommand(let owner, _, _, let command, let chord, _):
                // Only to the agent that registered it; the log names the user, not the device.
                sendOwnedCommand(event, owner: owner, command: command, chord: chord)
                observer?(event)
                continue
            case .presence(_, let present, let reason):
                logger.info("hardware keyboard \(present ? "present" : "absent") (\(reason.rawValue))")
            case .dropped(_, let device, let count, let reason):
                logger.warning("\(count) events dropped on \"\(device)\" (\(reason))")
            case .hud(let time, let trigger, let view):
                // Each reader gets its own: the system table and its uid's, if it may see them.
                logger.debug("hud \(view == nil ? "hidden" : "shown") (\(trigger.rawValue))")
                deliver(session.hudDeliveries(time: time, trigger: trigger, view: view, pipeline: pipeline))
                observer?(event)
                continue
            case .key, .attach, .detach, .geometry:
                break
            }
            broadcast(event)
            observer?(event)
        }
        events.removeAll(keepingCapacity: true)
    }

    /// A user's command, to the client whose table has it.
    private func sendOwnedCommand(_ event: PipelineEvent, owner: Int, command: Command, chord: String) {
        guard let control, let client = control.client(id: owner) else { return }
        if command.keys.contains(where: { !$0.hasCommandModifier }) {
            // Its id is the user's to choose (it could name the key): neither is logged.
            logger.info("user command for uid \(client.uid) (a chord that types text: id and chord not logged)")
        } else {
            logger.info("user command \(command.id) (\(chord)) for uid \(client.uid)")
        }
        send(EventFormatter.json(event), to: client)
    }

    /// A pipeline event to every client subscribed to its kind.
    private func broadcast(_ event: PipelineEvent) {
        guard let control else { return }
        var line: String?
        session.forEachSubscriber(of: event.eventKind) { id in
            guard let client = control.client(id: id) else { return }
            if line == nil { line = EventFormatter.json(event) }
            send(line!, to: client)
        }
    }

    /// Writes what the session decided each client is sent. `dropOnOverflow` false: a client
    /// whose queue is full misses the event but stays (session events).
    private func deliver(_ deliveries: [ControlSession.Delivery], dropOnOverflow: Bool = true) {
        guard let control else { return }
        for delivery in deliveries {
            guard let client = control.client(id: delivery.client) else { continue }
            send(delivery.event.line, to: client, dropOnOverflow: dropOnOverflow)
        }
    }

    /// Queues a line for a client; one that stopped reading or went away is dropped.
    private func send(_ line: String, to client: ControlServer.Client, dropOnOverflow: Bool = true) {
        guard let control else { return }
        switch control.send(line, to: client) {
        case .sent: break
        case .overflow:
            if dropOnOverflow { drop(client, reason: "not reading its events (more than \(control.maxQueuedBytes) bytes queued)") }
        case .broken: drop(client, reason: nil)
        }
    }

    // MARK: - HUD and toolbar

    /// Something a toolbar shows may have changed (scopes, text input, tables, who is at the
    /// seat, a subscription): checked once the turn's requests are answered.
    private var toolbarsStale = false

    /// Sends each `toolbar` subscriber that may see it what it shows now, when that changed;
    /// a pending prefix no longer pending hides its HUD.
    private func refreshToolbars() {
        toolbarsStale = false
        pipeline.settleHud(at: clock(), into: &events)
        // A HUD still shown follows what it lists (a toggled one may stay up while the focus moves).
        if events.isEmpty, let shown = pipeline.hud.shown {
            deliver(session.hudDeliveries(time: clock(), trigger: shown.trigger, view: pipeline.hudView(pending: shown.pending),
                                          onlyChanged: true, pipeline: pipeline))
        }
        guard control != nil else { return }
        // A sequence waits longer for its shown continuations only while someone draws them.
        pipeline.hudDrawn = session.hudDrawn
        deliver(session.toolbarDeliveries(time: clock(), pipeline: pipeline))
    }

    // MARK: - Control socket

    private func acceptClients() {
        guard let control else { return }
        // Whether a user's client is the active session's (its reserved slots): asks logind.
        let isActive = { [unowned self] (uid: UInt32) -> Bool in
            followSeats()
            return session.sessions.isActive(uid)
        }
        for client in control.acceptPending(now: clock(), isActive: isActive) {
            session.connected(client.peer)
            logger.debug("control: client \(client.id) connected (uid \(client.uid))")
            if !client.trusted { followSeats() }
        }
    }

    // MARK: - Seats

    /// Who is active at each seat, as the control session and the pipeline know it.
    public var activeSessions: ActiveSessions { session.sessions }

    /// Starts following logind (once): the monitor's descriptor joins the loop.
    public func followSeats() {
        guard seats == nil, seatsProblem == nil else { return }
        do throws(SeatsUnavailable) {
            let tracker = SeatTracker(source: try loginSource())
            for fd in tracker.source.changeDescriptors { try? loop.watch(fd, as: .seats) }
            seats = tracker
            logger.info("following logind: \(Self.describe(tracker.current))")
            // Where things stand when following starts is no switch: nobody is told.
            apply(session.sessionsChanged(tracker.current, problem: nil).filter { if case .sessionEvent = $0 { false } else { true } }, for: nil)
        } catch {
            seatsProblem = error.reason
            logger.warning("cannot follow logind (\(error.reason)): tables of users outside the service's group are refused")
            apply(session.sessionsChanged(.unavailable, problem: error.reason), for: nil)
        }
    }

    private func seatsChanged() {
        guard let seats else { return }
        if !seats.refresh().isEmpty || seats.current != session.sessions {
            apply(session.sessionsChanged(seats.current, problem: nil), for: nil)
        }
    }

    private static func describe(_ sessions: ActiveSessions) -> String {
        sessions.activeUID.isEmpty ? "no active session" : sessions.activeUID.sorted { $0.key < $1.key }.map { "\($0.key): uid \($0.value)" }.joined(separator: ", ")
    }

    private func drop(_ client: ControlServer.Client, reason: String?) {
        guard let control, control.clients[client.fd] === client else { return }
        if let reason { logger.warning("control: disconnecting client \(client.id): \(reason)") }
        control.remove(client)
        // What the client claimed leaves with it.
        let effects = session.disconnected(client.id)
        apply(effects, for: client)
        // A table that left gives its memory back to the system, not only to malloc.
        if effects.contains(where: { if case .userTable = $0 { true } else { false } }) { kbd_malloc_trim() }
    }

    private func clientReady(_ client: ControlServer.Client, events: UInt32) {
        guard let control else { return }
        if events & Epoll.writable != 0 || client.queuedBytes > 0 {
            guard control.flush(client) else { return drop(client, reason: nil) }
        }
        if events & (Epoll.readable | Epoll.hangup) != 0 { serve(client, readFirst: true) }
    }

    /// Reads (once, within the budget) and handles the client's request lines.
    private func serve(_ client: ControlServer.Client, readFirst: Bool) {
        guard let control else { return }
        let handle: (String) -> Bool = { [unowned self] line in
            let reply = self.handle(line, from: client)
            switch control.send(reply, to: client) {
            case .sent: return true
            case .overflow: self.drop(client, reason: "not reading its replies"); return false
            case .broken: self.drop(client, reason: nil); return false
            }
        }
        let outcome = readFirst ? control.read(client, now: clock(), handle: handle) : control.handleBuffered(client, now: clock(), handle: handle)
        if case .closed(let reason) = outcome { drop(client, reason: reason) }
    }

    /// Handles one request line; returns the reply line.
    private func handle(_ line: String, from client: ControlServer.Client) -> String {
        let peer = ControlSession.Peer(id: client.id, uid: client.uid, trusted: client.trusted)
        let view = ControlSession.View(
            hardwareKeyboard: pipeline.presence.reported, presenceReason: pipeline.presence.reason.rawValue,
            started: Double(started.microseconds) / 1_000_000, geometry: pipeline.geometry?.report, systemTable: pipeline.table, allowKeyEvents: options.allowKeyEvents,
            devices: { [unowned self] in self.deviceList().map(ControlReply.ListedDevice.init) },
            keymapProblem: { [unowned self] keymap in
                do throws(KeymapError) { _ = try self.desktopKeymap(keymap) } catch { return error.message }
                return nil
            }, keymapKnown: { [unowned self] keymap in self.desktopKeymaps.knows(self.desktopNames(keymap)) }, now: clock())
        let outcome = session.handle(line, from: peer, view: view)
        var reply = outcome.reply
        if apply(outcome.effects, for: client) {
            // A flood of reload requests compiles the config once per turn of the loop.
            let result = reloadThisTurn ?? reloadOutcome()
            reloadThisTurn = result
            var refusal: String?
            if case .refused(let reason) = result { refusal = reason }
            reply = ControlSession.reloaded(commands: pipeline.table.commands.count, refusal: refusal)
        }
        return (reply ?? .ping).line
    }

    /// Applies the session's effects to the pipeline and the client; true when a reload was asked for.
    @discardableResult
    private func apply(_ effects: [ControlSession.Effect], for client: ControlServer.Client?) -> Bool {
        var reload = false
        if effects.contains(where: { if case .log = $0 { false } else { true } }) { toolbarsStale = true }
        for effect in effects {
            switch effect {
            case .systemScopes(let scopes, let seat): pipeline.setScopes(scopes, seat: seat)
            case .systemTextInput(let active, let seat): pipeline.setTextInputActive(active, seat: seat)
            case .ownScopes(let owner, let scopes): pipeline.setScopes(scopes, owner: owner)
            case .ownTextInput(let owner, let active): pipeline.setTextInputActive(active, owner: owner)
            case .userTable(let owner, let table, let uid): pipeline.setUserTable(table, owner: owner, uid: uid)
            case .activeSessions(let sessions): pipeline.setActiveSessions(sessions)
            case .sessionEvent(let uid, let seat, let active):
                // To the clients of `uid`; subscribers of `session` events (operators) learn it from the broadcast.
                deliver(session.sessionEventDeliveries(uid: uid, seat: seat, active: active, time: clock()), dropOnOverflow: false)
            case .keymap(let keymap, let seat): applyDesktopKeymap(keymap, seat: seat)
            case .stickyKeys(let on, let seat):
                pipeline.setStickyKeys(on, seat: seat)
                logReading("\(seat): sticky keys \(on ?? pipeline.options.stickyKeys ? "on" : "off") (\(on == nil ? "the config's [accessibility] sticky_keys" : "the desktop's setting"))",
                           last: &stickyLoggedAt)
            case .subscribe: break  // the session keeps them
            case .runCommand(let command, let owner, let uid):
                // As if typed: the usual command event (logged, run, broadcast), or to the agent
                // that registered it; a HUD command toggles the HUD. Published after the reply.
                let now = clock(), device = "run_command (uid \(uid))"
                if command.action == .hud {
                    pipeline.toggleHud(at: now, into: &events)
                } else {
                    // A tap is a press and a release: a command with run_on_release gets both
                    // (an app's portal binding hears Activated then Deactivated).
                    for phase in command.runOnRelease == nil ? [KeyPhase.press] : [.press, .release] {
                        if let owner {
                            events.append(.ownedCommand(owner: owner, time: now, device: device, command: command, chord: command.chordText, phase: phase))
                        } else {
                            events.append(.command(time: now, device: device, command: command, chord: command.chordText, phase: phase))
                        }
                    }
                }
            case .reload: reload = true
            case .log(.debug, let message): logger.debug("\(message)")
            case .log(.info, let message): logger.info("\(message)")
            case .log(.warning, let message): logger.warning("\(message)")
            }
        }
        return reload
    }

    /// The names a desktop's keymap compiles from: its layout, variant (none when it does not
    /// say) and options (the service's own when it does not say), with the service's rules
    /// and model.
    private func desktopNames(_ keymap: ControlRequest.Keymap) -> KeymapNames {
        let own = loaded.keymap.names
        return KeymapNames(rules: own.rules, model: own.model, layout: keymap.layout, variant: keymap.variant ?? "",
                           options: keymap.options ?? own.options)
    }

    /// The compiled keymap of a desktop's keymap (from the cache when it was compiled or refused before).
    private func desktopKeymap(_ keymap: ControlRequest.Keymap) throws(KeymapError) -> XkbKeymap {
        try desktopKeymaps.keymap(desktopNames(keymap), context: loaded.keymap.context)
    }

    /// Logs a change of how keys are read: at info at most once a minute per kind, else at debug.
    private func logReading(_ message: String, last: inout EventTime?) {
        let now = clock()
        if let l = last, now < l.adding(milliseconds: 60_000) {
            logger.debug("\(message)")
        } else {
            logger.info("\(message)\(last == nil ? "" : " (changes within the next minute are logged at debug)")")
            last = now
        }
    }

    /// Maps keys with the desktop's keymap and active layout (nil: the service's own again).
    private func applyDesktopKeymap(_ keymap: ControlRequest.Keymap?, seat: String) {
        guard let keymap else {
            try? pipeline.setKeymap(nil, layout: nil, seat: seat)
            logReading("\(seat): keymap: the service's own again (\(loaded.keymap.names))", last: &keymapLoggedAt)
            return
        }
        do {
            try pipeline.setKeymap(try desktopKeymap(keymap), layout: keymap.group, seat: seat)
            logReading("\(seat): keymap: the desktop's, layout \(keymap.layout) variant \(keymap.variant ?? "") group \(keymap.group)", last: &keymapLoggedAt)
        } catch {
            logger.warning("\(seat): keymap: cannot use the desktop's (\(error)); keeping the one it had")
        }
    }

    /// Control clients with a registered table (by client id).
    public var commandTableOwners: [Int] { session.tableOwners }

    /// Every node seen, sorted by path.
    public func deviceList() -> [DeviceRow] {
        devices.list()
    }

    // MARK: - Reload

    /// Loads the config again. A bad config is logged and the old one kept (returns false).
    @discardableResult
    public func reload() -> Bool { reloadOutcome() == .reloaded }

    /// What a reload did: the new config is in use, or it was refused for this reason (every
    /// problem, one per line, as `check` prints them) and the previous one kept.
    public enum ReloadOutcome: Equatable, Sendable {
        case reloaded
        case refused(String)
    }

    public func reloadOutcome() -> ReloadOutcome {
        let next: Loaded
        do { next = try load() } catch {
            logger.error("reload failed, keeping the previous config: \(error)")
            return .refused(String(describing: error))
        }
        do {
            if next.keymap.names == loaded.keymap.names && next.config.devices == loaded.config.devices
                && next.config.deviceKeymaps == loaded.config.deviceKeymaps && next.config.presence == loaded.config.presence
                && next.config.stickyKeys == loaded.config.stickyKeys && next.config.hud == loaded.config.hud && geometryUnchanged(next.config) {
                pipeline.replaceTable(next.config.table)
            } else {
                // A new keymap needs new xkb states: rebuild the pipeline and re-attach the open keyboards.
                let fresh = try Self.makePipeline(next, options: options)
                devices.attach(to: fresh)
                // The claims and users' tables carry over as they are (not replayed request by request).
                fresh.adoptRouting(from: pipeline)
                pipeline = fresh
                desktopKeymaps.removeAll()
                loaded = next
                // A desktop's keymap and sticky keys still hold: compiled with the new rules and model.
                for seat in session.knownSeats {
                    let claims = session.claims(seat: seat)
                    if claims.keymap != nil { applyDesktopKeymap(claims.keymap, seat: seat) }
                    if let sticky = claims.stickyKeys { pipeline.setStickyKeys(sticky, seat: seat) }
                }
            }
        } catch {
            logger.error("reload failed, keeping the previous config: \(error)")
            return .refused(String(describing: error))
        }
        loaded = next
        toolbarsStale = true
        // Every file read (the main file and each drop-in), so the line names the one that changed.
        logger.info("reloaded \(next.config.files.isEmpty ? next.config.path : next.config.files.joined(separator: ", ")): \(next.config.table.commands.count) commands")
        return .reloaded
    }

    private func geometryUnchanged(_ next: Config) -> Bool {
        (next.geometry == nil) == (loaded.config.geometry == nil) && next.geometry == loaded.config.geometry
    }

    private func shutdown() {
        devices.closeAll(reason: "daemon stopping")
        runner.stopAll()
        control = nil
        // Break the cycles callers' closures may form with the daemon (a signal handler holding it).
        externals.removeAll()
        observer = nil
        dispatchObserver = nil
        logger.info("stopped")
    }
}
