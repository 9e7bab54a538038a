import KbdSystem
public import KbdCore
public import KbdKeymap
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

/// The live service: one thread runs `run()`, owns every device handle, the
/// control socket and the children, and sleeps in `epoll_wait` with no timeout
/// unless a sequence or presence debounce is pending. Devices feed the same
/// `Pipeline` as replay.
///
/// Everything that touches the process (signals, sd_notify, the config path) is
/// the caller's: signals come in through `addExternal`, config through `load`.
public final class KeyboardDaemon {
    public struct Options: Sendable {
        /// Where the control socket goes; nil for none.
        public var socketPath: String?
        /// Let clients subscribe to `key` events (typed text).
        public var allowKeyEvents: Bool
        public var maxChildren: Int
        public var presenceDebounceMilliseconds: Int
        public var compose: ComposeSource
        /// "NAME=value" strings `run` programs get (`KBD_COMMAND_ID` is added per child).
        public var childEnvironment: [String]
        /// At most this many control clients at once.
        public var maxClients: Int
        /// Serve every local user's session agent (socket mode 0666): a peer that is not
        /// root, the service's user or in its group may register its own table and learn
        /// presence and geometry, nothing else. Off: such peers are refused (mode 0660).
        public var userAgents: Bool
        /// How the runner learns that a command's process exited (`.polled`: the daemon reaps
        /// after each turn of its loop; CommandRunner.ExitNotice).
        public var childExits: CommandRunner.ExitNotice

        public init(socketPath: String? = nil, allowKeyEvents: Bool = false, maxChildren: Int = 8,
                    presenceDebounceMilliseconds: Int = KeyboardPresence.defaultDebounceMilliseconds, compose: ComposeSource = .none,
                    childEnvironment: [String] = CommandRunner.defaultEnvironment, maxClients: Int = 256, userAgents: Bool = false,
                    childExits: CommandRunner.ExitNotice = .pidfd) {
            self.socketPath = socketPath
            self.allowKeyEvents = allowKeyEvents
            self.maxChildren = maxChildren
            self.presenceDebounceMilliseconds = presenceDebounceMilliseconds
            self.compose = compose
            self.childEnvironment = childEnvironment
            self.maxClients = maxClients
            self.userAgents = userAgents
            self.childExits = childExits
        }
    }

    /// A loaded configuration: the table and the keymap compiled for it.
    public struct Loaded {
        public var config: Config
        public var keymap: XkbKeymap
        public init(config: Config, keymap: XkbKeymap) {
            self.config = config
            self.keymap = keymap
        }
    }


    private enum Token {
        static let hotplug: UInt64 = 1
        static let listener: UInt64 = 2
        static let devices: UInt64 = 1 << 32
        static let clients: UInt64 = 2 << 32
        static let children: UInt64 = 3 << 32
        static let external: UInt64 = 4 << 32
        static let processes: UInt64 = 5 << 32
        static let seats: UInt64 = 3
    }

    public let options: Options
    public let logger: Logger
    private let source: any DeviceSource
    private let clock: () -> EventTime
    /// When the service started, on the clock event times use (the subscribe reply's
    /// `started`: `watch` prints times relative to it).
    private let started: EventTime
    private let load: () throws -> Loaded
    private let epoll: Epoll
    private var loaded: Loaded
    private var pipeline: Pipeline
    private var control: ControlServer?
    public let runner: CommandRunner
    private var open: [DeviceID: any InputDevice] = [:]
    private var byPath: [String: DeviceID] = [:]
    /// Every node seen, with its verdict or why it could not be opened.
    public private(set) var known: [String: DeviceRow] = [:]
    private var nextDevice = 1
    /// Hotplugged nodes still unreadable after udev changed them, with when to say so: udev
    /// makes several changes (owner, mode, then the rule's ACL), so one refusal in between
    /// is no verdict; still refused after `accessGraceMilliseconds`, the node is named.
    private var accessChecks: [String: EventTime] = [:]
    static let accessGraceMilliseconds = 2000
    /// Nodes not opened (permission denied) that the source says are neither keyboards nor
    /// switches (a PC speaker, a mouse, a tablet): the service does not need them, so they are
    /// not counted as unreadable.
    private var unneededNodes: Set<String> = []
    private var externals: [UInt64: (Int32, () -> Void)] = [:]
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
    private var inputBuffer: [InputEvent] = []
    private var ready: [Epoll.Ready] = []
    /// Called with every pipeline event after the daemon handled it (tests, metrics).
    public var observer: ((PipelineEvent) -> Void)?
    /// Called after each command was dispatched: (command, event time, dispatch time), for latency figures.
    public var dispatchObserver: ((Command, EventTime, EventTime) -> Void)?

    /// Loads the config (throws if the first one is bad), opens the socket, scans devices.
    public init(options: Options, source: any DeviceSource, logger: Logger, clock: @escaping () -> EventTime = monotonicNow,
                load: @escaping () throws -> Loaded) throws {
        self.options = options
        self.source = source
        self.logger = logger
        self.clock = clock
        self.started = clock()
        self.load = load
        self.epoll = try Epoll()
        self.loaded = try load()
        self.runner = CommandRunner(maxChildren: options.maxChildren, environment: options.childEnvironment, logger: logger, clock: clock,
                                    exitNotice: options.childExits)
        self.pipeline = try Self.makePipeline(loaded, options: options)
        let epoll = self.epoll
        runner.watch = { fd, kind in
            try? epoll.add(fd, token: (kind == .output ? Token.children : Token.processes) | UInt64(UInt32(bitPattern: fd)))
        }
        runner.unwatch = { fd in epoll.remove(fd) }
        runner.setPaused = { fd, paused in
            epoll.modify(fd, token: Token.children | UInt64(UInt32(bitPattern: fd)), events: paused ? 0 : Epoll.readable)
        }
        if let path = options.socketPath {
            let server = try ControlServer(path: path, mode: options.userAgents ? 0o666 : 0o660, logger: logger, epoll: epoll,
                                           clientTokens: Token.clients, listenerToken: Token.listener, maxClients: options.maxClients,
                                           userAgents: options.userAgents)
            control = server
            logger.info("control socket at \(path)")
        }
        if source.startWatching(), let fd = source.hotplugDescriptor {
            try epoll.add(fd, token: Token.hotplug)
        } else {
            logger.warning("cannot watch for new devices yet (no input directory); will retry")
        }
        for path in source.scan() { openDevice(path) }
        pipeline.settlePresence(at: clock(), into: &events)
        publish()
        let refused = unreadableNodes
        if refused > 0 { logger.warning("\(refused) keyboard or switch nodes could not be opened: permission denied. \(Self.accessFix)") }
        logger.info("ready: \(loaded.config.table.commands.count) commands, \(keyboardCount) keyboards, \(open.count - keyboardCount) switches\(refused > 0 ? ", \(refused) keyboard or switch nodes not readable" : "")")
    }

    private static func makePipeline(_ loaded: Loaded, options: Options) throws -> Pipeline {
        try Pipeline(keymap: loaded.keymap, table: loaded.config.table, geometry: try loaded.config.geometryState(),
                     options: Pipeline.Options(emitKeys: options.allowKeyEvents, compose: options.allowKeyEvents ? options.compose : .none,
                                               deviceFilter: loaded.config.devices,
                                               presenceDebounceMilliseconds: options.presenceDebounceMilliseconds,
                                               presencePolicy: loaded.config.presence, stickyKeys: loaded.config.stickyKeys,
                                               hud: loaded.config.hud))
    }

    public var config: Config { loaded.config }
    public var keyboardCount: Int { known.values.filter { $0.id != nil && $0.verdict?.isKeyboard == true }.count }
    public var hardwareKeyboardPresent: Bool { pipeline.presence.reported }
    public var presenceReason: PresenceReason { pipeline.presence.reason }
    public var socketPath: String? { control?.path }
    /// When the pipeline next needs the loop without input (a pending sequence, a HUD's
    /// delay, presence debounce); nil: nothing pending, the loop sleeps until input.
    public var pipelineDeadline: EventTime? { pipeline.nextDeadline }

    /// Watches an outside descriptor (a signalfd, say); `handler` runs when it is readable.
    public func addExternal(_ fd: Int32, handler: @escaping () -> Void) throws {
        let token = Token.external | UInt64(externals.count)
        externals[token] = (fd, handler)
        try epoll.add(fd, token: token)
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
        var timeout: Int32 = -1
        var deadline = pipeline.nextDeadline
        if let r = runner.nextDeadline, deadline == nil || r < deadline! { deadline = r }
        if let r = control?.acceptRetryAt, deadline == nil || r < deadline! { deadline = r }
        if let r = accessChecks.values.min(), deadline == nil || r < deadline! { deadline = r }
        // Clients with request lines still buffered are served in the next turn, after devices.
        if control?.backlog.isEmpty == false { deadline = clock() }
        if let deadline {
            let ms = max(0, (deadline.microseconds - clock().microseconds + 999) / 1000)
            timeout = Int32(min(ms, 60_000))
        }
        if let cap = maxWaitMilliseconds { timeout = timeout < 0 ? Int32(cap) : min(timeout, Int32(cap)) }
        epoll.wait(timeoutMilliseconds: timeout, into: &ready)
        // Keys and signals first: whatever else is ready in this batch has a budget, so a
        // chord waits for at most one bounded batch.
        for r in ready where Self.isInput(r.token) { dispatch(r) }
        for r in ready where !Self.isInput(r.token) { dispatch(r) }
        if pipeline.nextDeadline != nil {
            pipeline.advance(to: clock(), into: &events)
            publish()
        }
        if let r = runner.nextDeadline, r <= clock() { runner.advance(to: clock()) }
        // A command's process has usually exited by the next wake-up (the key's release).
        if runner.exitNotice == .polled { runner.reap() }
        if !accessChecks.isEmpty { reportUnreadable(at: clock()) }
        if let control {
            if let r = control.acceptRetryAt, r <= clock() { control.resumeAccepting() }
            for fd in control.backlog where !ready.contains(where: { $0.token == Token.clients | UInt64(UInt32(bitPattern: fd)) }) {
                if let client = control.clients[fd] { serve(client, readFirst: false) }
            }
        }
        // After the replies: toolbars that changed, and what run_command fired.
        if toolbarsStale { refreshToolbars() }
        if !events.isEmpty { publish() }
    }

    private static func isInput(_ token: UInt64) -> Bool {
        let kind = token & 0xFFFF_FFFF_0000_0000
        return kind == Token.devices || kind == Token.external
    }

    private func dispatch(_ ready: Epoll.Ready) {
        let token = ready.token
        let fd = Int32(truncatingIfNeeded: token & 0xFFFF_FFFF)
        switch token & 0xFFFF_FFFF_0000_0000 {
        case Token.devices: readDevice(DeviceID(Int(token & 0xFFFF_FFFF)))
        case Token.clients: if let c = control?.clients[fd] { clientReady(c, events: ready.events) }
        case Token.children: runner.drainOutput(fd)
        case Token.processes: runner.processExited(fd)
        case Token.external: externals[token]?.1()
        default:
            if token == Token.hotplug { hotplug() } else if token == Token.listener { acceptClients() } else if token == Token.seats { seatsChanged() }
        }
    }

    // MARK: - Devices

    private func openDevice(_ path: String) {
        guard byPath[path] == nil else { return }
        let device: any InputDevice
        do { device = try source.open(path) } catch {
            // EACCES right after creation is normal: udev has not set the permissions yet.
            // EACCES again after udev changed the node (a hotplug retry): the service lacks the right.
            let retried = known[path]?.error != nil
            known[path] = DeviceRow(path: path, name: "", error: error.message, reportsOpen: true)
            if error.errno == EACCES || error.errno == EPERM {
                // Only keyboards and switches matter (udev's marks or the capabilities say).
                if source.isKeyboardOrSwitch(path) == false {
                    if unneededNodes.insert(path).inserted { logger.debug("not opened: \(path) (\(error.message)); not a keyboard or switch") }
                    accessChecks[path] = nil
                    return
                }
                unneededNodes.remove(path)
                if retried, accessChecks[path] == nil { accessChecks[path] = clock().adding(milliseconds: Self.accessGraceMilliseconds) }
            } else if error.errno != ENOENT && error.errno != ENODEV {
                logger.warning("cannot open \(path): \(error.message)")
            }
            return
        }
        accessChecks[path] = nil
        unneededNodes.remove(path)
        let verdict = pipeline.classify(device.description)
        known[path] = DeviceRow(path: path, name: device.description.name, verdict: verdict, reportsOpen: true)
        guard verdict.isKept else {
            logger.debug("ignoring \(path) \"\(device.description.name)\": \(verdict.reason)")
            return  // closed when `device` goes out of scope: non-keyboards cost no wake-ups
        }
        if loaded.config.devices.grab && verdict.isKeyboard {
            do { try device.setGrabbed(true) } catch { logger.warning("cannot grab \(path): \(error.message)") }
        }
        let id = DeviceID(nextDevice)
        nextDevice += 1
        do { try epoll.add(device.fileDescriptor, token: Token.devices | UInt64(id.rawValue)) } catch {
            logger.error("cannot watch \(path): \(error.message)")
            return
        }
        open[id] = device
        byPath[path] = id
        known[path]?.id = id
        if verdict.isKeyboard {
            logger.info("keyboard attached: \(path) \"\(device.description.name)\" (\(device.description.id), \(verdict.integration.rawValue)): \(verdict.integrationReason)")
        } else {
            logger.info("switch attached: \(path) \"\(device.description.name)\" (\(verdict.reason))")
        }
        pipeline.process(.attached(id, device.description, verdict: verdict, time: clock()), into: &events)
        // Keys already down when we opened it (a chord being held) are taken as they are.
        let keys = device.keysDown()
        if !keys.isEmpty { pipeline.process(.resynchronized(id, keysDown: keys, time: clock()), into: &events) }
        publish()
    }

    /// What to do when nodes are not readable.
    /// The package relies on its udev rule (a read ACL for the service's user, set with setfacl
    /// from the acl package), never on group input, which would let the service write events too.
    static let accessFix = "Keys on those devices are not seen: the service reads keyboards and switches through the udev rule /usr/lib/udev/rules.d/60-kbd-commandd.rules (shipped with the package; a read ACL for the service's user, set by setfacl from the package acl). Check that the rule is installed and not overridden in /etc/udev/rules.d, that `getfacl NODE` shows user:kbd-commandd:r--, and run `udevadm trigger --subsystem-match=input`"

    /// Keyboard and switch nodes the service may not read (permission denied), as `list_devices`
    /// shows them; nodes the source says are neither are not counted.
    public var unreadableNodes: Int {
        known.values.filter {
            $0.id == nil && !unneededNodes.contains($0.path)
                && ($0.error?.includes("Permission denied") ?? false || $0.error?.includes("Operation not permitted") ?? false)
        }.count
    }

    private func closeDevice(_ id: DeviceID, reason: String) {
        guard let device = open.removeValue(forKey: id) else { return }
        epoll.remove(device.fileDescriptor)
        byPath[device.path] = nil
        let kind = known.removeValue(forKey: device.path)?.verdict?.isSwitch == true ? "switch" : "keyboard"
        logger.info("\(kind) detached: \(device.path) \"\(device.description.name)\" (\(reason))")
        pipeline.process(.detached(id, time: clock()), into: &events)
        publish()
    }

    private func readDevice(_ id: DeviceID) {
        guard let device = open[id] else { return }
        inputBuffer.removeAll(keepingCapacity: true)
        let status = device.read(into: &inputBuffer)
        for event in inputBuffer { pipeline.process(.input(id, event), into: &events) }
        switch status {
        case .drained: break
        case .resynchronized(let keys, let dropped):
            logger.warning("\(device.path): the kernel dropped events (SYN_DROPPED); resynchronised, \(dropped) state changes replayed")
            pipeline.process(.resynchronized(id, keysDown: keys, time: clock()), into: &events)
            // A lid or tablet-mode change lost in the drop: libevdev's view is current again.
            pipeline.process(.switches(id, device.switchStates(), time: clock()), into: &events)
        case .gone:
            publish()
            closeDevice(id, reason: "device gone")
            return
        case .failed(let e):
            publish()
            closeDevice(id, reason: e.description)
            return
        }
        publish()
    }

    /// Names the hotplugged nodes that stayed unreadable past the grace time.
    private func reportUnreadable(at now: EventTime) {
        for (path, due) in accessChecks.sorted(by: { $0.key < $1.key }) where due <= now {
            accessChecks[path] = nil
            guard let error = known[path]?.error else { continue }
            logger.warning("cannot open \(path): \(error); \(unreadableNodes) keyboard or switch nodes not readable. \(Self.accessFix)")
        }
    }

    private func hotplug() {
        let (added, removed) = source.readHotplug()
        for path in removed {
            if let id = byPath[path] { closeDevice(id, reason: "node removed") }
            known[path] = nil
            accessChecks[path] = nil
            unneededNodes.remove(path)
        }
        for path in added where byPath[path] == nil { openDevice(path) }
    }

    /// Retries watching and scanning (the input directory appeared later, as in a container).
    public func rescan() {
        if source.hotplugDescriptor == nil, source.startWatching(), let fd = source.hotplugDescriptor {
            try? epoll.add(fd, token: Token.hotplug)
        }
        for path in source.scan() where byPath[path] == nil { openDevice(path) }
    }

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
                if let control, let client = control.clients.values.first(where: { $0.id == owner }) {
                    if command.keys.contains(where: { !$0.hasCommandModifier }) {
                        // Its id is the user's to choose (it could name the key): neither is logged.
                        logger.info("user command for uid \(client.uid) (a chord that types text: id and chord not logged)")
                    } else {
                        logger.info("user command \(command.id) (\(chord)) for uid \(client.uid)")
                    }
                    switch control.send(EventFormatter.json(event), to: client) {
                    case .sent: break
                    case .overflow: drop(client, reason: "not reading its events (more than \(control.maxQueuedBytes) bytes queued)")
                    case .broken: drop(client, reason: nil)
                    }
                }
                observer?(event)
                continue
            case .presence(_, let present, let reason):
                logger.info("hardware keyboard \(present ? "present" : "absent") (\(reason.rawValue))")
            case .dropped(_, let device, let count, let reason):
                logger.warning("\(count) events dropped on \"\(device)\" (\(reason))")
            case .hud(let time, let trigger, let view):
                // Each reader gets its own: the system table and its uid's, if it may see them.
                logger.debug("hud \(view == nil ? "hidden" : "shown") (\(trigger.rawValue))")
                sendHud(time: time, trigger: trigger, view: view)
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

    private func broadcast(_ event: PipelineEvent) {
        guard let control else { return }
        var line: String?
        for client in control.clients.values where client.subscriptions.contains(event.eventKind) {
            if line == nil { line = EventFormatter.json(event) }
            switch control.send(line!, to: client) {
            case .sent: break
            case .overflow: drop(client, reason: "not reading its events (more than \(control.maxQueuedBytes) bytes queued)")
            case .broken: drop(client, reason: nil)
            }
        }
    }

    // MARK: - HUD and toolbar

    private func peer(_ client: ControlServer.Client) -> ControlSession.Peer {
        ControlSession.Peer(id: client.id, uid: client.uid, trusted: client.trusted)
    }

    /// What a client's HUD and toolbar show: the system table, and the tables its uid registered.
    private func commandSources(for client: ControlServer.Client) -> [Discoverability.Source] {
        // The system table as the client's seat routes it (a user at seat1 sees seat1's chain).
        let routing = pipeline.systemRouting(seat: session.seat(of: peer(client)))
        var sources = [Discoverability.Source(table: pipeline.table, scopes: routing.scopes, textInput: routing.textInput)]
        for owner in session.tableOwners(uid: client.uid) {
            guard let table = pipeline.userTables.first(where: { $0.owner == owner })?.table, let state = pipeline.userState(owner: owner) else { continue }
            sources.append(Discoverability.Source(table: table, owner: owner, scopes: state.scopes, textInput: state.textInput))
        }
        return sources
    }

    /// A `hud` event to each subscriber that may see it (an operator, or the user who owns
    /// an active session), with its own tables. A prefix of a user's table shows only to
    /// that user's clients.
    /// With `onlyChanged`, a client gets it only when it differs from the last it got (a
    /// refresh of a HUD that stays shown while the focus, text input or tables change).
    private func sendHud(time: EventTime, trigger: HudTrigger, view: Discoverability.View?, onlyChanged: Bool = false) {
        guard let control else { return }
        let seconds = Double(time.microseconds) / 1_000_000
        // Only operators and the user active on the seat whose keyboard drove the HUD.
        let hudSeatUser = session.sessions.activeUID[pipeline.hudSeat]
        for client in control.clients.values where client.subscriptions.contains(.hud) && (client.trusted || client.uid == hudSeatUser) {
            var hud = ControlEvent.Hud.hidden(trigger)
            if let view {
                let sources = commandSources(for: client)
                if let owner = view.pending?.owner, !sources.contains(where: { $0.owner == owner }) { continue }
                hud = ControlEvent.Hud(trigger: trigger, view: Discoverability.View(pending: view.pending, sources: sources))
            }
            if onlyChanged, hud == client.lastHud { continue }
            client.lastHud = hud
            switch control.send(ControlEvent(time: seconds, payload: .hud(hud)).line, to: client) {
            case .sent: break
            case .overflow: drop(client, reason: "not reading its events (more than \(control.maxQueuedBytes) bytes queued)")
            case .broken: drop(client, reason: nil)
            }
        }
    }

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
            sendHud(time: clock(), trigger: shown.trigger, view: pipeline.hudView(pending: shown.pending), onlyChanged: true)
        }
        guard let control else { return }
        // A sequence waits longer for its shown continuations only while someone draws them.
        pipeline.hudDrawn = control.clients.values.contains { $0.subscriptions.contains(.hud) && session.seesCommands(peer($0)) }
        let seconds = Double(clock().microseconds) / 1_000_000
        for client in control.clients.values where client.subscriptions.contains(.toolbar) {
            guard session.seesCommands(peer(client)) else {
                client.lastToolbar = nil
                continue
            }
            let bar = ControlEvent.Toolbar(Discoverability.View(pending: nil, sources: commandSources(for: client)))
            guard bar != client.lastToolbar else { continue }
            client.lastToolbar = bar
            switch control.send(ControlEvent(time: seconds, payload: .toolbar(bar)).line, to: client) {
            case .sent: break
            case .overflow: drop(client, reason: "not reading its events (more than \(control.maxQueuedBytes) bytes queued)")
            case .broken: drop(client, reason: nil)
            }
        }
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
            for fd in tracker.source.changeDescriptors { try? epoll.add(fd, token: Token.seats) }
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

    /// Tells the clients of `uid` that its session on `seat` came or went (subscribers of
    /// `session` events, operators' clients, learn it from the broadcast).
    private func sendSessionEvent(uid: UInt32, seat: String, active: Bool) {
        guard let control else { return }
        let time = Double(clock().microseconds) / 1_000_000
        let direct = ControlEvent(time: time, payload: .session(seat: seat, active: active, uid: nil)).line
        for client in control.clients.values where client.uid == uid && !client.subscriptions.contains(.session) {
            if case .broken = control.send(direct, to: client) { drop(client, reason: nil) }
        }
        guard active else { return }
        let broadcast = ControlEvent(time: time, payload: .session(seat: seat, active: true, uid: uid)).line
        for client in control.clients.values where client.subscriptions.contains(.session) {
            if case .broken = control.send(broadcast, to: client) { drop(client, reason: nil) }
        }
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
            started: Double(started.microseconds) / 1_000_000, geometry: pipeline.geometry?.report.jsonObject(), systemTable: pipeline.table, allowKeyEvents: options.allowKeyEvents,
            devices: { [unowned self] in self.deviceList().map(\.jsonValue) },
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
            case .sessionEvent(let uid, let seat, let active): sendSessionEvent(uid: uid, seat: seat, active: active)
            case .keymap(let keymap, let seat): applyDesktopKeymap(keymap, seat: seat)
            case .stickyKeys(let on, let seat):
                pipeline.setStickyKeys(on, seat: seat)
                logReading("\(seat): sticky keys \(on ?? pipeline.options.stickyKeys ? "on" : "off") (\(on == nil ? "the config's [accessibility] sticky_keys" : "the desktop's setting"))",
                           last: &stickyLoggedAt)
            case .subscribe(_, let kinds):
                client?.subscriptions = kinds
                client?.lastToolbar = nil
            case .runCommand(let command, let owner, let uid):
                // As if typed: the usual command event (logged, run, broadcast), or to the agent
                // that registered it; a HUD command toggles the HUD. Published after the reply.
                let now = clock(), device = "run_command (uid \(uid))"
                if command.action == .hud {
                    pipeline.toggleHud(at: now, into: &events)
                } else if let owner {
                    events.append(.ownedCommand(owner: owner, time: now, device: device, command: command, chord: command.chordText))
                } else {
                    events.append(.command(time: now, device: device, command: command, chord: command.chordText))
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
        known.values.sorted { $0.path.count == $1.path.count ? $0.path < $1.path : $0.path.count < $1.path.count }
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
            if next.keymap.names == loaded.keymap.names && next.config.devices == loaded.config.devices && next.config.presence == loaded.config.presence
                && next.config.stickyKeys == loaded.config.stickyKeys && next.config.hud == loaded.config.hud && geometryUnchanged(next.config) {
                pipeline.replaceTable(next.config.table)
            } else {
                // A new keymap needs new xkb states: rebuild the pipeline and re-attach the open keyboards.
                let fresh = try Self.makePipeline(next, options: options)
                var discard: [PipelineEvent] = []
                for (id, device) in open.sorted(by: { $0.key < $1.key }) {
                    fresh.process(.attached(id, device.description, verdict: fresh.classify(device.description), time: clock()), into: &discard)
                    let keys = device.keysDown()
                    if !keys.isEmpty { fresh.process(.resynchronized(id, keysDown: keys, time: clock()), into: &discard) }
                    fresh.process(.switches(id, device.switchStates(), time: clock()), into: &discard)
                }
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
        // Keyboards first: a switch device leaving first would make presence flip on the way out.
        let switches = Set(known.values.compactMap { $0.verdict?.isSwitch == true ? $0.id : nil })
        for id in open.keys.sorted(by: { (switches.contains($0) ? 1 : 0, $0) < (switches.contains($1) ? 1 : 0, $1) }) {
            closeDevice(id, reason: "daemon stopping")
        }
        runner.stopAll()
        control = nil
        // Break the cycles callers' closures may form with the daemon (a signal handler holding it).
        externals.removeAll()
        observer = nil
        dispatchObserver = nil
        logger.info("stopped")
    }
}
