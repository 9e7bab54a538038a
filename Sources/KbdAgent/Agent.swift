import KbdProcess
import Logging
import KbdConfig
import KbdControl
import KbdCore
import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// What the agent's loop watches: one case per kind of descriptor (swift-nio's selector: a
/// registration is an enum value, dispatched with a `switch`). A new source is one case here
/// and one line in `AgentLoop.dispatch`.
enum AgentRegistration: Hashable, Sendable {
    /// The service's control socket.
    case service
    /// The focus source (sway/i3 IPC, Hyprland's events, EWMH, KWin's script).
    case focus
    /// The text-input watch, a child process (its lines).
    case textInput
    /// The desktop-keymap watch on GNOME and KDE, a child process (its lines).
    case keymap
    /// The desktop portal's GlobalShortcuts backend, a child process (its lines).
    case portal
    /// A running command's output, and its pidfd (CommandRunner's descriptors).
    case commandOutput(Int32)
    case commandExit(Int32)
}

/// The agent's named timers (libinput's `timer.h`): each is armed by the part that needs it,
/// and the loop sleeps until the earliest; with none armed it sleeps until input.
enum AgentTimer: Hashable, Sendable {
    /// Connect to the service again (ControlConnection's backoff).
    case reconnect
    /// The command runner's next deadline (a child's output to watch, a log window).
    case commands
    /// The on-screen keyboard's presence hooks, after their debounce.
    case keyboardHooks
    /// Start the shortcuts bar again after it ended unexpectedly.
    case barRestart
}

/// The agent's event loop: one thread on KbdProcess's EventLoop: the control socket, the
/// focus source, the watch children and the commands' descriptors as `AgentRegistration`s,
/// signals, the config's directory, and named timers. Idle, it sleeps in epoll_wait with no
/// timeout (0 wake-ups); a timer runs only while reconnecting or while a command runs.
/// Each concern is in its folder: Service/ (the connection), Focus/, TextInput/,
/// DesktopKeymap/, OnScreenKeyboards/, Bar/, Portal/; this file holds the loop.
final class AgentLoop {
    let configPath: String
    /// The service's socket: given with --socket, else chosen again before each connection
    /// attempt (the system socket once it exists, else the user's), so an agent started
    /// while the service was down finds it when it comes.
    var socketPath: String
    let followsDefaultSocket: Bool
    let logger: Logger
    let loop: EventLoop<AgentRegistration, AgentTimer>
    let runner: CommandRunner
    let osk: OnScreenKeyboard
    /// The shortcuts bar, a child while `[bar] enabled` says so.
    let bar: BarProcess
    var config: Config?
    /// The service's socket; connected only to a server of root, the service's user or this user.
    var client: ControlClient
    /// Connect, back off, say things once, resubscribe (the bar's and `watch`'s lifecycle too).
    var connection = ControlConnection(policy: .agent)
    /// The ids registered on this connection: a `command` event for any other id is ignored.
    var registeredIDs: Set<String> = []
    var stop = false
    /// Where the focused window comes from (nil: no desktop interface found).
    var focus: (any FocusSource)?
    var focused: FocusedWindow?
    /// Where "a text field has the focus" comes from (nil: `[text_input] source = "none"`,
    /// or the source ended), the source it runs, and what it said last (nil: nothing yet).
    var textWatch: TextInputWatch?
    var textWatchSource: TextInputSource?
    var desktopTextInput: Bool?
    /// What the watch was told of the focused window's application.
    var toldWindow: FocusedApplication?
    /// What the service has from this agent since it connected (nil: nothing sent yet).
    var sentScopes: [String]?
    var sentTextInput: Bool?
    /// The desktop's keymap and sticky keys as the service has them from this agent (nil:
    /// nothing sent on this connection), and the layouts last resolved to names.
    var sentKeymap: ControlRequest.Keymap??
    var sentStickyKeys: Bool??
    var resolvedLayouts: (layouts: DesktopLayouts, keymap: ControlRequest.Keymap?)?
    var desktopStickyKeys: Bool?
    /// GNOME's and KDE's layouts (sway and Hyprland report theirs through the focus socket),
    /// read by a child process, and what it said last.
    var keymapWatch: DesktopKeymapWatch?
    var watchedLayouts: DesktopLayouts?
    var saidLayoutProblem: String?
    /// The desktop portal's GlobalShortcuts backend (a child): apps' bindings, registered
    /// ahead of the user's table.
    var portal: PortalWatch?
    let environment: [String: String]
    /// A text console (XDG_SESSION_TYPE=tty, no WAYLAND_DISPLAY, no DISPLAY): the agent
    /// registers the user's table and runs its commands, nothing graphical: no shortcuts bar,
    /// no text-input watch (the accessibility bus would be started for nothing).
    let textConsole: Bool

    init(configPath: String, socketPath: String, followsDefaultSocket: Bool = false, environment: [String: String], logger: Logger) throws {
        self.configPath = configPath
        self.socketPath = socketPath
        self.followsDefaultSocket = followsDefaultSocket
        client = ControlClient(path: socketPath)
        self.logger = logger
        self.environment = environment
        textConsole = Agent.isTextConsole(environment)
        let loop = try EventLoop<AgentRegistration, AgentTimer>()
        self.loop = loop
        // SIGCHLD is a signal of the loop: children are reaped then, without a pidfd each.
        let runner = CommandRunner(maxChildren: 8, environment: Agent.childEnvironment(environment), logger: logger, exitNotice: .sigchld)
        self.runner = runner
        bar = BarProcess(logger: logger)
        osk = OnScreenKeyboard(settings: OnScreenKeyboardSettings(), environment: environment, logger: logger) { argv, label in
            runner.run(argv, commandID: label)
        }
        runner.watch = { fd, kind in try? loop.watch(fd, as: kind == .output ? .commandOutput(fd) : .commandExit(fd)) }
        runner.unwatch = { fd in loop.unwatch(fd) }
        runner.setPaused = { fd, paused in loop.modify(fd, events: paused ? 0 : Epoll.readable) }
        try loop.handleSignals([SIGTERM, SIGINT, SIGHUP, SIGCHLD])
        watchConfigDirectory()
        loadConfig()
        if textConsole {
            logger.info("a text console (XDG_SESSION_TYPE=tty, no WAYLAND_DISPLAY or DISPLAY): registering your commands and running them; no shortcuts bar, no focus or text-input watch")
        } else {
            openFocusSource(environment: environment)
            startKeymapWatch()
        }
        startTextInputWatch()
        updateBar()
        startPortal()
        // Presence and the layout guide: stood once, sent again on every connection.
        _ = connection.stand("subscribe", .subscribe([.presence, .geometry]))
        perform(connection.start())
    }

    deinit {
        client.disconnect()
    }

    func run() {
        while !stop {
            armTimers()
            loop.runOnce { event in handle(event) }
        }
        osk.restore()
        bar.stop()
        stopTextInputWatch()
        keymapWatch = nil
        portal = nil
        runner.stopAll()
        logger.info("stopped")
    }

    /// The timers whose deadlines belong to the runner, the on-screen keyboard and the bar,
    /// as they are after the last turn (nil cancels).
    private func armTimers() {
        loop.timers.arm(.commands, at: runner.nextDeadline)
        loop.timers.arm(.keyboardHooks, at: osk.hookDue)
        loop.timers.arm(.barRestart, at: bar.restartDue)
    }

    private func handle(_ event: LoopEvent<AgentRegistration, AgentTimer>) {
        switch event {
        case .ready(let registration, _): dispatch(registration)
        case .timer(let name): fired(name)
        case .signal(let number): handleSignal(number)
        case .directoryChanged(let names):
            let name = configPath.split(separator: "/").last.map(String.init) ?? configPath
            if names.contains(name) { reload() }
        }
    }

    private func dispatch(_ registration: AgentRegistration) {
        switch registration {
        case .service: readSocket()
        case .focus: readFocus()
        case .textInput: readTextInput()
        case .keymap: readKeymapWatch()
        case .portal: readPortal()
        case .commandOutput(let fd): runner.drainOutput(fd)
        case .commandExit(let fd): runner.processExited(fd)
        }
    }

    private func fired(_ timer: AgentTimer) {
        switch timer {
        case .reconnect: perform(connection.timerFired())
        case .commands: runner.advance(to: loop.clock())
        case .keyboardHooks: osk.settleHooks()
        case .barRestart: bar.restartIfDue()
        }
    }

    private func handleSignal(_ number: Int32) {
        switch number {
        case SIGTERM, SIGINT: stop = true
        case SIGHUP: reload()
        case SIGCHLD:
            runner.reap()
            bar.reap()
        default: break
        }
    }

    /// inotify on the config's directory: an editor saves by writing or by renaming over it.
    private func watchConfigDirectory() {
        let directory = configPath.lastIndex(of: "/").map { String(configPath[..<$0]) } ?? "."
        do throws(SystemError) { try loop.watchDirectory(directory) } catch {
            logger.info("not watching \(directory) for changes (\(error.message)); SIGHUP reloads")
        }
    }

    /// Starts or stops the shortcuts bar as `[bar] enabled` says; never on a text console.
    func updateBar() {
        guard !textConsole else { return }
        bar.update(enabled: config?.barEnabled, socketPath: socketPath, configPath: configPath)
    }

    func presence(_ present: Bool) {
        osk.update(settings: config?.osk ?? OnScreenKeyboardSettings())
        osk.hardwareKeyboard(present: present)
    }
}
