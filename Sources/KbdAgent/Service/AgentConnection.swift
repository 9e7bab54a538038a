import Logging
import KbdConfig
import KbdControl
import KbdProcess
import KbdCore
import KbdCommands
import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// The agent's connection to the service, on ControlConnection's lifecycle (the bar's and
/// `watch`'s too): connect, back off 0.1 s doubling to 5 s, say a refusal or a stranger's
/// socket once, subscribe again after a reconnect. On each connection the agent then sends
/// its table and its claims (scopes, text input, the desktop's keymap and sticky keys) as
/// they are now.
extension AgentLoop {
    /// Does what the connection's lifecycle says, in order.
    func perform(_ actions: [ControlConnection.Action]) {
        for action in actions {
            switch action {
            case .connect: attemptConnection()
            case .watch(let fd):
                do throws(SystemError) { try loop.watch(fd, as: .service) } catch {
                    logger.warning("cannot watch the service's socket: \(error.message)")
                    perform(connection.lost("cannot watch the socket", nowMilliseconds: loop.clock().microseconds / 1000))
                }
            case .unwatch:
                if client.fd >= 0 { loop.unwatch(client.fd) }
                client.disconnect()
                registeredIDs = []
                // Presence is unknown without the service: the on-screen keyboard comes back.
                osk.forgetPresence()
            case .send(let requests):
                for request in requests where client.isConnected { send(request) }
            case .armTimer(let milliseconds):
                loop.timers.arm(.reconnect, at: loop.clock().adding(milliseconds: milliseconds))
            case .say(let notice): say(notice)
            case .giveUp: break  // the agent's policy never gives up
            }
        }
    }

    private func say(_ notice: ControlConnection.Notice) {
        switch notice {
        case .waiting(let message): logger.info("waiting for the service at \(socketPath) (\(message))")
        case .untrustedServer(let message): logger.warning("\(message); waiting for the real service")
        case .refused(let advice): logger.warning("\(advice)")
        case .connected: logger.info("connected to \(socketPath)")
        case .lost(let reason): logger.warning("lost the service (\(reason)); reconnecting")
        }
    }

    /// One attempt: the default socket chosen again (when not given), connect, then the
    /// table and the claims on the new connection.
    private func attemptConnection() {
        guard !client.isConnected else { return }
        if followsDefaultSocket, let path = ControlSocketPath.forClient(environment: environment, exists: { access($0, F_OK) == 0 }), path != socketPath {
            logger.info("the service's socket is \(path) now (was \(socketPath))")
            socketPath = path
            client = ControlClient(path: path)
            connection.serverMoved()
            updateBar()
        }
        do throws(ControlClientError) {
            try client.connect(nonBlocking: true)
        } catch {
            // Refused by the service's socket (not --user-agents, not in its group): once, with what to do.
            var advice: String?
            if case .cannotConnect(let errno) = error.kind { advice = ConnectionAdvice.refusal(.connect(errno: errno), socketPath: socketPath, user: userName) }
            return perform(connection.connectFailed(error, advice: advice))
        }
        perform(connection.connected(fd: client.fd, nowMilliseconds: loop.clock().microseconds / 1000))
        guard client.isConnected else { return }
        sentScopes = nil
        sentTextInput = nil
        sentKeymap = nil
        sentStickyKeys = nil
        applyFocus()
        register()
        readDesktopStickyKeys()
        applyKeymap()
    }

    /// The user's name for the advice (getpwuid), else the uid.
    private var userName: String {
        guard let pw = getpwuid(getuid()) else { return "\(getuid())" }
        return String(cString: pw.pointee.pw_name)
    }

    /// The connection ended: a close before any answer is a refusal (said once).
    func disconnected(_ reason: String) {
        let advice = ConnectionAdvice.refusal(.closedBeforeAnyReply, socketPath: socketPath, user: userName)
        perform(connection.lost(reason, nowMilliseconds: loop.clock().microseconds / 1000, advice: advice))
    }

    func send(_ request: ControlRequest) {
        guard client.isConnected else { return }
        if !client.send(request) { disconnected("cannot send to the service") }
    }

    /// Sends the table (without `run`: the agent keeps that) to the service.
    func register() {
        guard client.isConnected else { return }
        let commands = config?.table.commands ?? []
        // The apps' bindings first (the portal's), then the user's table.
        let specs = (portal?.specs ?? []) + commands.map {
            ControlRequest.CommandSpec(id: $0.id, title: $0.title, keys: $0.keysText, scope: $0.scope, repeat: $0.repeat,
                                       priorityOverTextInput: $0.priorityOverTextInput, group: $0.group,
                                       discoverabilityTitle: $0.discoverabilityTitle, action: $0.action,
                                       phases: Command.PhaseKeys(of: $0), localize: $0.localize, mirror: $0.mirror,
                                       devices: $0.devices.isEmpty ? nil : $0.devices.map(\.text))
        }
        var timeout: Int?
        if let t = config?.table.sequenceTimeoutMilliseconds, t != CommandTable.defaultSequenceTimeoutMilliseconds { timeout = t }
        registeredIDs = Set(specs.map(\.id))
        send(.register(commands: specs, sequenceTimeoutMilliseconds: timeout))
    }

    func readSocket() {
        if case .closed(let reason) = client.read() { return disconnected(reason) }
        while true {
            let line: ControlLine?
            do { line = try client.nextLine() } catch { return disconnected(error.message) }
            guard let line else { return }
            connection.received()
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
        case .command(let id, _, _, _, let phase):
            // Only what this connection registered: not an id of an older table or of a config
            // that failed to register.
            if let portal, registeredIDs.contains(id), portal.owns(id) { return portal.fired(id, phase: phase) }
            guard registeredIDs.contains(id), let command = config?.table.command(id: id) else { return }
            logger.info(phase.map { "command \(id) (\($0.rawValue))" } ?? "command \(id)")
            // At a release, a command with run_on_release runs that (issue 36); else its run.
            let argv = command.argv(for: phase ?? .press)
            if !argv.isEmpty { runner.run(argv, commandID: id) }
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
}
