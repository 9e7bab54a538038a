import KbdProcess
import Logging
import CLinux
import KbdConfig
import KbdControl
import KbdCore
import KbdKeymap
import KbdJSON
import KbdTOML
import KbdSystem
import KbdCommands
import KbdPipeline
#if canImport(Glibc)
import Glibc
#endif

/// The session agent process: `kbd-commandd-agent` (what `kbd-commandd agent` executes).
public enum Agent {
    /// Whether the agent runs on a text console: logind says so (XDG_SESSION_TYPE=tty, which
    /// pam_systemd sets for a console login) and neither WAYLAND_DISPLAY nor DISPLAY is set (a
    /// display started from the console, startx or a compositor, is a desktop). An environment
    /// without XDG_SESSION_TYPE (a compositor's exec line, a user unit) is not taken for one.
    package static func isTextConsole(_ environment: [String: String]) -> Bool {
        environment["XDG_SESSION_TYPE"] == "tty" && (environment["WAYLAND_DISPLAY"] ?? "").isEmpty && (environment["DISPLAY"] ?? "").isEmpty
    }

    public static func main(arguments: [String]) -> Int32 {
        let parsed: AgentOptions.Parsed
        do { parsed = try AgentOptions.parse(arguments) } catch {
            _ = "Error: \(error.message)\nUsage: \(AgentOptions.synopsis)\n  See 'kbd-commandd agent --help'.\n".withCString { write(2, $0, strlen($0)) }
            return error.code
        }
        switch parsed {
        case .help:
            _ = AgentOptions.help.withCString { write(1, $0, strlen($0)) }
            return ExitStatus.success
        case .version:
            _ = "\(ProgramInfo.version)\n".withCString { write(1, $0, strlen($0)) }
            return ExitStatus.success
        case .run(let options):
            signal(SIGPIPE, SIG_IGN)
            let environment = ProcessEnvironment.current()
            let level = Logger.Level(rawValue: options.logLevel) ?? .info
            let journal = environment["JOURNAL_STREAM"] != nil
            let logger = Logger(label: "kbd-commandd-agent") { _ in StderrLogHandler(level: level, journal: journal) }
            guard let config = options.config ?? AgentOptions.defaultConfig(environment: environment) else {
                logger.error("no config path: HOME and XDG_CONFIG_HOME are unset (use --config)")
                return ExitStatus.usage
            }
            let socket = options.socket ?? ControlSocketPath.forClient(environment: environment, exists: { access($0, F_OK) == 0 })
            guard let socket else {
                logger.error("no control socket: \(ControlSocketPath.system) does not exist and XDG_RUNTIME_DIR is unset (use --socket)")
                return ExitStatus.noInput
            }
            // One agent per user and service, however many ways it was started (issue 27).
            // Keyed by the socket it was given, or by "the default one" (which it follows).
            if let lock = SingleInstance.lockPath(environment: environment, socketPath: options.socket ?? "default") {
                switch SingleInstance.acquire(lock) {
                case .acquired: break  // held until the process exits
                case .heldBy(let pid):
                    logger.info("another kbd-commandd agent runs for this user and \(socket) (pid \(pid), \(lock)); this one exits (started twice: the autostart entry, the user unit or a compositor's exec line)")
                    return ExitStatus.success
                case .unavailable(let e):
                    logger.info("no single-instance lock at \(lock) (\(SystemError(operation: "open", errno: e).message)); going on")
                }
            }
            do {
                let agent = try AgentLoop(configPath: config, socketPath: socket, followsDefaultSocket: options.socket == nil, environment: environment, logger: logger)
                agent.run()
                return ExitStatus.success
            } catch {
                logger.error("\(error)")
                return ExitStatus.failure
            }
        }
    }

    /// The environment of the user's `run` programs: the session's own, without the
    /// agent's service plumbing (sd_notify, socket activation, its journal stream).
    static func childEnvironment(_ environment: [String: String]) -> [String] {
        let plumbing = ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_PID", "WATCHDOG_USEC",
                        "JOURNAL_STREAM", "INVOCATION_ID", "MANAGERPID", "SYSTEMD_EXEC_PID"]
        return environment.filter { !plumbing.contains($0.key) }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    }
}

/// The agent's event loop: one thread, epoll over the control socket, signals, the
/// config's directory (inotify), a reconnect timer and the children. Idle, it sleeps in
/// epoll_wait with no timeout (0 wake-ups); a timer runs only while reconnecting.
final class AgentLoop {
    private enum Token {
        static let socket: UInt64 = 1
        static let signals: UInt64 = 2
        static let config: UInt64 = 3
        static let timer: UInt64 = 4
        static let focus: UInt64 = 5
        static let textInput: UInt64 = 6
        static let keymap: UInt64 = 7
        static let portal: UInt64 = 8
        static let outputs: UInt64 = 1 << 32
        static let processes: UInt64 = 2 << 32
    }

    let configPath: String
    /// The service's socket: given with --socket, else chosen again before each connection
    /// attempt (the system socket once it exists, else the user's), so an agent started
    /// while the service was down finds it when it comes (it used to wait at the user's
    /// path forever).
    private(set) var socketPath: String
    private let followsDefaultSocket: Bool
    private let logger: Logger
    private let epoll: Epoll
    private let signals: Int32
    private let timer: Int32
    private var inotify: Int32 = -1
    private let runner: CommandRunner
    private let osk: OnScreenKeyboard
    /// The shortcuts bar, a child while `[bar] enabled` says so.
    private let bar: BarProcess
    private var config: Config?
    /// The service's socket; connected only to a server of root, the service's user or this user.
    private var client: ControlClient
    private var backoff = ReconnectBackoff()
    /// The ids registered on this connection: a `command` event for any other id is ignored.
    private var registeredIDs: Set<String> = []
    /// The refusal said once (at WARNING); later attempts wait quietly.
    private var saidRefusal = false
    /// Whether the service answered anything on this connection (a close before any answer
    /// is a refusal: ConnectionAdvice).
    private var answered = false
    private var stop = false
    private var ready: [Epoll.Ready] = []
    /// Where the focused window comes from (nil: no desktop interface found).
    private var focus: (any FocusSource)?
    private var focused: FocusedWindow?
    /// Where "a text field has the focus" comes from (nil: `[text_input] source = "none"`,
    /// or the source ended), the source it runs, and what it said last (nil: nothing yet).
    private var textWatch: TextInputWatch?
    private var textWatchSource: TextInputSource?
    private var desktopTextInput: Bool?
    /// What the watch was told of the focused window's application.
    private var toldWindow: FocusedApplication?
    /// What the service has from this agent since it connected (nil: nothing sent yet).
    private var sentScopes: [String]?
    private var sentTextInput: Bool?
    /// The desktop's keymap and sticky keys as the service has them from this agent (nil:
    /// nothing sent on this connection), and the layouts last resolved to names.
    private var sentKeymap: ControlRequest.Keymap??
    private var sentStickyKeys: Bool??
    private var resolvedLayouts: (layouts: DesktopLayouts, keymap: ControlRequest.Keymap?)?
    private var desktopStickyKeys: Bool?
    /// GNOME's and KDE's layouts (sway and Hyprland report theirs through the focus socket),
    /// read by a child process, and what it said last.
    private var keymapWatch: DesktopKeymapWatch?
    /// The desktop portal's GlobalShortcuts backend (a child): apps' bindings, registered with the table.
    private var portal: PortalWatch?
    private var watchedLayouts: DesktopLayouts?
    private var saidLayoutProblem: String?
    private let environment: [String: String]
    /// A text console (XDG_SESSION_TYPE=tty, no WAYLAND_DISPLAY, no DISPLAY): the agent registers the user's table and runs its commands, nothing
    /// graphical: no shortcuts bar, no text-input watch (the accessibility bus would be
    /// started for nothing).
    private let textConsole: Bool
    /// Called with the scopes right after they were sent (the latency bench).
    var scopesSent: (([String]) -> Void)?

    init(configPath: String, socketPath: String, followsDefaultSocket: Bool = false, environment: [String: String], logger: Logger) throws {
        self.configPath = configPath
        self.socketPath = socketPath
        self.followsDefaultSocket = followsDefaultSocket
        client = ControlClient(path: socketPath)
        self.logger = logger
        self.environment = environment
        textConsole = Agent.isTextConsole(environment)
        epoll = try Epoll()
        signals = makeSignalDescriptor([SIGTERM, SIGINT, SIGHUP, SIGCHLD])
        timer = kbd_timerfd_create()
        // SIGCHLD is in `signals`: children are reaped then, without a pidfd each.
        let runner = CommandRunner(maxChildren: 8, environment: Agent.childEnvironment(environment), logger: logger, exitNotice: .sigchld)
        self.runner = runner
        bar = BarProcess(logger: logger)
        osk = OnScreenKeyboard(settings: OnScreenKeyboardSettings(), environment: environment, logger: logger) { argv, label in
            runner.run(argv, commandID: label)
        }
        let epoll = self.epoll
        runner.watch = { fd, kind in try? epoll.add(fd, token: (kind == .output ? Token.outputs : Token.processes) | UInt64(UInt32(bitPattern: fd))) }
        runner.unwatch = { fd in epoll.remove(fd) }
        runner.setPaused = { fd, paused in epoll.modify(fd, token: Token.outputs | UInt64(UInt32(bitPattern: fd)), events: paused ? 0 : Epoll.readable) }
        try epoll.add(signals, token: Token.signals)
        try epoll.add(timer, token: Token.timer)
        watchConfigDirectory()
        loadConfig()
        if textConsole {
            logger.info("a text console (XDG_SESSION_TYPE=tty, no WAYLAND_DISPLAY or DISPLAY): registering your commands and running them; no shortcuts bar, no focus or text-input watch")
        }
        if !textConsole {
            openFocusSource(environment: environment)
            startKeymapWatch()
        }
        startTextInputWatch()
        updateBar()
        startPortal()
        connect()
    }

    deinit {
        client.disconnect()
        if inotify >= 0 { close(inotify) }
        close(timer)
        close(signals)
    }

    func run() {
        while !stop {
            var timeout: Int32 = -1
            var deadline = runner.nextDeadline
            if let h = osk.hookDue, deadline == nil || h < deadline! { deadline = h }
            if let b = bar.restartDue, deadline == nil || b < deadline! { deadline = b }
            if let r = deadline { timeout = Int32(max(0, min(60_000, (r.microseconds - monotonicNow().microseconds) / 1000 + 1))) }
            epoll.wait(timeoutMilliseconds: timeout, into: &ready)
            for r in ready { dispatch(r) }
            if let r = runner.nextDeadline, r <= monotonicNow() { runner.advance(to: monotonicNow()) }
            osk.settleHooks()
            bar.restartIfDue()
        }
        osk.restore()
        bar.stop()
        stopTextInputWatch()
        keymapWatch = nil
        portal = nil
        runner.stopAll()
        logger.info("stopped")
    }

    private func dispatch(_ ready: Epoll.Ready) {
        let fd = Int32(truncatingIfNeeded: ready.token & 0xFFFF_FFFF)
        switch ready.token & 0xFFFF_FFFF_0000_0000 {
        case Token.outputs: runner.drainOutput(fd)
        case Token.processes: runner.processExited(fd)
        default:
            switch ready.token {
            case Token.socket: readSocket()
            case Token.signals: handleSignals()
            case Token.config: configChanged()
            case Token.focus: readFocus()
            case Token.textInput: readTextInput()
            case Token.keymap: readKeymapWatch()
            case Token.portal: readPortal()
            case Token.timer:
                var expirations: UInt64 = 0
                _ = read(timer, &expirations, 8)
                connect()
            default: break
            }
        }
    }

    // MARK: - Config

    /// Loads the config; a bad one keeps the table there was (none at start).
    @discardableResult
    private func loadConfig() -> Bool {
        do throws(ConfigError) {
            let loaded = try ConfigLoader.load(path: configPath, trust: .strict)
            // A [keymap] here would change nothing: refused with the reason, not ignored.
            let refused = ConfigLoader.agentConfigProblems(loaded)
            if !refused.isEmpty { throw ConfigError(problems: refused) }
            config = loaded
            logger.info("loaded \(configPath): \(loaded.table.commands.count) commands, on-screen keyboard \(loaded.osk.backend.rawValue)")
            // The service owns the keyboards: these sections of a user's config do nothing.
            var ignored: [String] = []
            if loaded.devices != DeviceFilter() { ignored.append("[devices]") }
            if loaded.geometry != nil { ignored.append("[geometry]") }
            if !ignored.isEmpty { logger.warning("\(configPath): \(ignored.joined(separator: ", ")) ignored in a user's config") }
            return true
        } catch {
            if config == nil {
                logger.error("\(error.description); going on without commands until the config is fixed")
            } else {
                logger.error("reload failed, keeping the previous table: \(error.description)")
            }
            return false
        }
    }

    private var osksettings: OnScreenKeyboardSettings { config?.osk ?? OnScreenKeyboardSettings() }

    /// inotify on the config's directory: an editor saves by writing or by renaming over it.
    private func watchConfigDirectory() {
        let directory = configPath.lastIndex(of: "/").map { String(configPath[..<$0]) } ?? "."
        inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotify >= 0 else { return }
        let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE) | UInt32(IN_DELETE)
        if inotify_add_watch(inotify, directory, mask) < 0 {
            logger.info("not watching \(directory) for changes (\(SystemError(operation: "inotify_add_watch", errno: errno).message)); SIGHUP reloads")
        }
        try? epoll.add(inotify, token: Token.config)
    }

    private func configChanged() {
        let name = configPath.split(separator: "/").last.map(String.init) ?? configPath
        var buffer = [UInt8](repeating: 0, count: 4096)
        var touched = false
        while true {
            let n = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            var offset = 0
            while offset + 16 <= n {
                let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                let nameBytes = buffer[(offset + 16)..<min(n, offset + 16 + length)].prefix { $0 != 0 }
                if String(decoding: nameBytes, as: UTF8.self) == name { touched = true }
                offset += 16 + length
            }
        }
        if touched { reload() }
    }

    private func reload() {
        guard loadConfig() else { return }
        readDesktopStickyKeys()
        register()
        startTextInputWatch()
        updateBar()
        tellPortal()
        applyFocus()
    }

    // MARK: - Signals

    private func handleSignals() {
        for s in readSignals(signals) {
            switch s {
            case SIGTERM, SIGINT: stop = true
            case SIGHUP: reload()
            case SIGCHLD:
                runner.reap()
                bar.reap()
            default: break
            }
        }
    }

    // MARK: - The service's socket

    private func connect() {
        guard !client.isConnected else { return }
        if followsDefaultSocket, let path = ControlSocketPath.forClient(environment: environment, exists: { access($0, F_OK) == 0 }), path != socketPath {
            logger.info("the service's socket is \(path) now (was \(socketPath))")
            socketPath = path
            client = ControlClient(path: path)
            saidRefusal = false
            updateBar()
        }
        do throws(ControlClientError) {
            try client.connect(nonBlocking: true)
        } catch {
            // A server of another uid is never sent the table nor believed: say so once, loudly.
            if case .untrustedServer = error.kind {
                if !saidRefusal { logger.warning("\(error.message); waiting for the real service") }
                saidRefusal = true
            } else if case .cannotConnect(let errno) = error.kind,
                      let advice = ConnectionAdvice.refusal(.connect(errno: errno), socketPath: socketPath, user: userName) {
                // Refused by the service's socket (not --user-agents, not in its group): once, with what to do.
                if !saidRefusal { logger.warning("\(advice)") }
                saidRefusal = true
            } else if backoff.delayMilliseconds == backoff.initial {
                logger.info("waiting for the service at \(socketPath) (\(error.message))")
            }
            return arm(backoff.failed())
        }
        do { try epoll.add(client.fd, token: Token.socket) } catch {
            client.disconnect()
            logger.warning("cannot watch the service's socket: \(error.message)")
            return arm(backoff.failed())
        }
        backoff.connected(now: monotonicNow().microseconds / 1000)
        answered = false
        logger.info("connected to \(socketPath)")
        send(.subscribe([.presence, .geometry]))  // a failed send reconnects on the backoff timer
        sentScopes = nil
        sentTextInput = nil
        sentKeymap = nil
        sentStickyKeys = nil
        applyFocus()
        register()
        readDesktopStickyKeys()
        applyKeymap()
    }

    private func arm(_ milliseconds: Int) {
        _ = kbd_timerfd_arm(timer, monotonicNow().microseconds + Int64(milliseconds) * 1000)
    }

    /// The user's name for the advice (getpwuid), else the uid.
    private var userName: String {
        guard let pw = getpwuid(getuid()) else { return "\(getuid())" }
        return String(cString: pw.pointee.pw_name)
    }

    private func disconnected(_ reason: String) {
        if client.fd >= 0 { epoll.remove(client.fd) }
        client.disconnect()
        registeredIDs = []
        if !answered, let advice = ConnectionAdvice.refusal(.closedBeforeAnyReply, socketPath: socketPath, user: userName) {
            if !saidRefusal { logger.warning("\(advice)") }
            saidRefusal = true
        } else {
            logger.warning("lost the service (\(reason)); reconnecting")
        }
        // Presence is unknown without the service: the on-screen keyboard comes back.
        osk.forgetPresence()
        arm(backoff.disconnected(now: monotonicNow().microseconds / 1000))
    }

    private func send(_ request: ControlRequest) {
        guard client.isConnected else { return }
        if !client.send(request) { disconnected("cannot send to the service") }
    }

    /// Sends the table (without `run`: the agent keeps that) to the service.
    private func register() {
        guard client.isConnected else { return }
        let commands = config?.table.commands ?? []
        let specs = (portal?.specs ?? []) + commands.map {
            ControlRequest.CommandSpec(id: $0.id, title: $0.title, keys: $0.keysText, scope: $0.scope, repeat: $0.repeat,
                                       priorityOverTextInput: $0.priorityOverTextInput, group: $0.group,
                                       discoverabilityTitle: $0.discoverabilityTitle, action: $0.action)
        }
        var timeout: Int?
        if let t = config?.table.sequenceTimeoutMilliseconds, t != CommandTable.defaultSequenceTimeoutMilliseconds { timeout = t }
        registeredIDs = Set(specs.map(\.id))
        send(.register(commands: specs, sequenceTimeoutMilliseconds: timeout))
    }

    private func readSocket() {
        if case .closed(let reason) = client.read() { return disconnected(reason) }
        while true {
            let line: ControlLine?
            do { line = try client.nextLine() } catch { return disconnected(error.message) }
            guard let line else { return }
            if !answered { saidRefusal = false }
            answered = true
            switch line {
            case .reply(let reply): handle(reply)
            case .event(let event): handle(event)
            }
        }
    }

    private func handle(_ reply: ControlReply) {
        switch reply {
        case .register(let count, let shadowed):
            portal?.shadowed(shadowed)
            if shadowed.isEmpty {
                logger.info("registered \(count) commands")
            } else {
                logger.warning("registered \(count) commands; the service's own table binds the chords of \(shadowed.joined(separator: ", ")) too, and those will not fire")
            }
        case .subscribe(let state):
            presence(state.hardwareKeyboard)
        case .refused("register", let message):
            registeredIDs = []
            logger.error("the service refused the table: \(message)")
        case .refused("subscribe", let message):
            logger.error("the service refused to tell presence: \(message)")
        case .refused(let name, let message) where name == "set_keymap" || name == "set_sticky_keys":
            // Sent again when this user's session is active (a claim of the person at the keyboard).
            if name == "set_keymap" { sentKeymap = nil } else { sentStickyKeys = nil }
            if message.contains("does not own the active session") {
                logger.info("\(name == "set_keymap" ? "keymap" : "sticky keys"): sent again when this session is active")
            } else {
                logger.warning("the service refused the desktop's \(name == "set_keymap" ? "keymap" : "sticky keys"): \(message)")
            }
        default:
            if let error = reply.error { logger.warning("the service: \(error)") }
        }
    }

    private func handle(_ event: ControlEvent) {
        switch event.payload {
        case .presence(let present, _):
            presence(present)
        case .command(let id, _, _, _):
            // Only what this connection registered: not an id of an older table or of a config
            // that failed to register.
            if let portal, registeredIDs.contains(id), portal.owns(id) { return portal.fired(id, press: true) }
            guard registeredIDs.contains(id), let command = config?.table.command(id: id) else { return }
            logger.info("command \(id)")
            if !command.run.isEmpty { runner.run(command.run, commandID: id) }
        case .session(let seat, let active, _):
            // The service routes this user's table only while its session is active on a seat.
            logger.info(active ? "\(seat): this user's session is active; its commands fire for that seat's keyboards"
                               : "\(seat): another session is active; this user's commands wait until it is back")
            if active {
                // The keymap and sticky keys are claims of the person at the keyboard: a claim
                // refused while this session was not active is sent now.
                if sentKeymap == nil { applyKeymap() }
                if sentStickyKeys == nil { readDesktopStickyKeys() }
            }
        default:
            break
        }
    }

    // MARK: - The focused window

    private func openFocusSource(environment: [String: String]) {
        var tried: [String] = []
        focus = FocusSources.open(environment: environment, tried: &tried)
        for t in tried { logger.warning("focus: cannot use \(t)") }
        guard let focus else {
            logger.info("focus: no desktop interface (SWAYSOCK, I3SOCK, HYPRLAND_INSTANCE_SIGNATURE, or DISPLAY outside a Wayland session); scopes do not follow the focused window")
            return
        }
        do { try epoll.add(focus.fd, token: Token.focus) } catch {
            logger.warning("focus: cannot watch \(focus.name): \(error.message)")
            self.focus = nil
            return
        }
        logger.info("focus: scopes follow the focused window through \(focus.name)")
        readFocus()
    }

    private func readFocus() {
        guard let source = focus else { return }
        do {
            let change = try source.read()
            applyKeymap()
            guard let change else { return }
            focused = change.window
            tellTextInputWatch()
        } catch {
            logger.warning("focus: \(source.name): \(error.message); scopes no longer follow the focused window")
            epoll.remove(source.fd)
            focus = nil
            focused = nil
            tellTextInputWatch()
            applyKeymap()
        }
        applyFocus()
    }

    /// The focused window's application as the text-input watch needs it: unknown without a
    /// focus source or when the source does not say whose window it is.
    private var focusedApplication: FocusedApplication {
        guard focus != nil else { return .unknown }
        guard let window = focused else { return .none }
        return window.pid.map { .pid($0) } ?? .unknown
    }

    /// Tells the text-input watch whose window has the focus, when that changed.
    private func tellTextInputWatch() {
        guard let watch = textWatch else { return }
        let now = focusedApplication
        guard now != toldWindow else { return }
        if !watch.tell(now) { logger.warning("text input: the watch did not take the focused window") }
        toldWindow = now
    }

    /// Sends the scopes for the focused window and whether text input is on (what the
    /// desktop says of the focused widget, unless `[scopes]` marks the app) when they differ
    /// from what the service has. Logged without the window's title.
    private func applyFocus() {
        guard client.isConnected else { return }
        let active = (config?.scopes ?? ScopeMap()).resolve(app: focused?.app, title: focused?.title, desktopTextInput: desktopTextInput)
        if focus != nil || sentScopes != nil, active.scopes != sentScopes {
            send(.setScopes(active.scopes))
            sentScopes = active.scopes
            logger.debug("focus: \(focused.map { "app \($0.app)\($0.pid.map { " (pid \($0))" } ?? "")" } ?? "no window") -> scopes [\(active.scopes.joined(separator: ", "))]")
            scopesSent?(active.scopes)
        }
        if active.textInput != (sentTextInput ?? false) {
            send(.setTextInput(active.textInput))
            sentTextInput = active.textInput
            logger.debug("text input \(active.textInput ? "on" : "off")")
        }
    }

    // MARK: - The desktop's keymap and sticky keys

    /// Sends the desktop's layouts and the active one (`set_keymap`) when they differ from
    /// what the service has from this agent; withdraws them when the desktop stopped saying.
    private func applyKeymap() {
        guard client.isConnected else { return }
        var keymap: ControlRequest.Keymap?
        if let hyprland = focus as? HyprlandEvents, hyprland.layoutProblem != saidLayoutProblem {
            saidLayoutProblem = hyprland.layoutProblem
            if let problem = saidLayoutProblem { logger.warning("keymap: Hyprland: \(problem)") }
        }
        if let layouts = focus?.keyboardLayouts ?? watchedLayouts {
            // A switch keeps the names (more layouts than xkb's groups are cut around the active one).
            if let resolved = resolvedLayouts, resolved.layouts.layouts == layouts.layouts, resolved.layouts.options == layouts.options,
               layouts.layouts.count <= ControlRequest.Keymap.maxLayouts {
                keymap = resolved.keymap
                keymap?.group = min(layouts.active, max(0, layouts.layouts.count - 1))
            } else {
                // Read only when the layouts changed (a layout switch keeps the names).
                let (k, problem) = layouts.keymap(rules: layouts.described ? XkbRulesList.load(rules: nil) : nil)
                if let problem { logger.warning("keymap: \(problem); the service keeps its own keymap") }
                keymap = k
            }
            resolvedLayouts = (layouts, keymap)
        }
        guard keymap != nil || sentKeymap != nil, sentKeymap != .some(keymap) else { return }
        send(.setKeymap(keymap))
        sentKeymap = .some(keymap)
        let source = focus?.keyboardLayouts != nil ? focus?.name : keymapWatch?.desktop.name
        logger.info(keymap.map { k in
            "keymap: the desktop's, layout \(k.layout)\(k.variant.map { " variant \($0)" } ?? "")\(k.options.map { " options \($0)" } ?? "") group \(k.group) (\(source ?? ""))"
        } ?? "keymap: withdrawn")
    }

    /// On GNOME and KDE (by XDG_CURRENT_DESKTOP), unless the focus socket already reports the
    /// layouts (sway, Hyprland), starts the child that watches the desktop's layouts.
    private func startKeymapWatch() {
        guard let desktop = DesktopKeymapWatch.desktop(environment) else { return }
        if let focus, focus is HyprlandEvents || focus.name == "sway IPC" { return }
        do {
            let watch = try DesktopKeymapWatch(desktop: desktop, environment: environment)
            try epoll.add(watch.fd, token: Token.keymap)
            keymapWatch = watch
        } catch {
            logger.warning("keymap: cannot watch \(desktop.name): \(error)")
        }
    }

    private func readKeymapWatch() {
        guard let watch = keymapWatch else { return }
        let (lines, ended) = watch.read()
        var failure: String?
        for line in lines {
            switch line {
            case .source(let name): logger.info("keymap: follows \(watch.desktop.name) (\(name))")
            case .layouts(let layouts): watchedLayouts = layouts
            case .none: watchedLayouts = nil
            case .warning(let message): logger.warning("keymap: \(message)")
            case .error(let message): failure = message
            }
        }
        if ended {
            logger.warning("keymap: \(failure ?? "the watch of \(watch.desktop.name) ended"); the service keeps its own keymap")
            epoll.remove(watch.fd)
            keymapWatch = nil
            watchedLayouts = nil
        }
        applyKeymap()
    }

    /// Reads the desktop's sticky-keys setting (at connect and reload) and sends it when it changed.
    private func readDesktopStickyKeys() {
        let (enabled, problem) = DesktopStickyKeys.read(environment)
        if let problem { logger.info("sticky keys: cannot read the desktop's setting (\(problem))") }
        desktopStickyKeys = enabled
        guard client.isConnected, enabled != nil || sentStickyKeys != nil, sentStickyKeys != .some(enabled) else { return }
        send(.setStickyKeys(enabled))
        sentStickyKeys = .some(enabled)
        logger.info("sticky keys: the desktop's setting is \(enabled.map { $0 ? "on" : "off" } ?? "gone")")
    }

    // MARK: - Text input

    /// Starts or stops the shortcuts bar as `[bar] enabled` says; never on a text console.
    private func updateBar() {
        guard !textConsole else { return }
        bar.update(enabled: config?.barEnabled, socketPath: socketPath, configPath: configPath)
    }

    /// (Re)starts the text-input watch when `[text_input] source` changed (or at start); on a
    /// text console there is no text field to watch (and no accessibility bus to start).
    private func startTextInputWatch() {
        guard !textConsole else { return }
        let source = config?.textInputSource ?? .auto
        guard source != textWatchSource else { return }
        stopTextInputWatch()
        textWatchSource = source
        guard source != .none else {
            logger.info("text input: only the [scopes] entries marked text_input (source = \"none\")")
            return
        }
        do {
            let window = focusedApplication
            let watch = try TextInputWatch(source: source, currentDesktop: ProcessEnvironment.current()["XDG_CURRENT_DESKTOP"], window: window)
            try epoll.add(watch.fd, token: Token.textInput)
            textWatch = watch
            toldWindow = window
        } catch {
            logger.warning("text input: cannot start the watch: \(error)")
        }
    }

    private func stopTextInputWatch() {
        if let watch = textWatch { epoll.remove(watch.fd) }
        textWatch = nil
        desktopTextInput = nil
    }

    private func readTextInput() {
        guard let watch = textWatch else { return }
        let (lines, ended) = watch.read()
        var failure: String?
        for line in lines {
            switch line {
            case .source(let name): logger.info("text input: follows \(name)")
            case .textInput(let on): desktopTextInput = on
            case .warning(let message): logger.warning("text input: \(message)")
            case .error(let message): failure = message
            }
        }
        if ended {
            logger.warning("text input: \(failure ?? "the watch ended"); only the [scopes] entries marked text_input set it")
            epoll.remove(watch.fd)
            textWatch = nil
            desktopTextInput = nil
        }
        applyFocus()
    }

    // MARK: - The desktop portal

    private func startPortal() {
        guard !textConsole else { return }
        do {
            let watch = try PortalWatch(policy: config?.portalApprove ?? "ask", approvalsPath: PortalApprovals.path(environment: environment))
            try epoll.add(watch.fd, token: Token.portal)
            portal = watch
            tellPortal()
        } catch {
            logger.warning("portal: cannot start the GlobalShortcuts backend: \(error)")
        }
    }

    private func tellPortal() {
        portal?.tell(policy: config?.portalApprove ?? "ask", table: (config?.table.commands ?? []).map { ($0.keysText, $0.title) })
    }

    private func readPortal() {
        guard let watch = portal else { return }
        let (changed, ended) = watch.read(logger: logger)
        if ended { epoll.remove(watch.fd); portal = nil }
        if changed { register() }
    }

    private func presence(_ present: Bool) {
        osk.update(settings: osksettings)
        osk.hardwareKeyboard(present: present)
    }
}
