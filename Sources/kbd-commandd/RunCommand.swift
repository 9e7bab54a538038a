import ArgumentParser
import CLinux
import HardwareInput
import Logging
#if canImport(Glibc)
import Glibc
#endif

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the service: watch every keyboard, run commands, serve the control socket.",
        discussion: """
            Starts with or without keyboards (none is the normal state of a tablet; a missing \
            input directory is waited for). Keyboards plugged in later are picked up through \
            inotify. SIGHUP reloads the config (a bad one is logged and the old one kept); \
            SIGTERM stops. Under systemd it sends READY=1, RELOADING=1 and STOPPING=1.

            The control socket (JSON Lines) defaults to /run/kbd-commandd/socket as root, else \
            $XDG_RUNTIME_DIR/kbd-commandd.socket. Logged: device events, commands, chords with \
            Ctrl, Alt or Super. Never typed text.

            Example:
              kbd-commandd run --config /etc/kbd-commandd/config.toml
            """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("The command table (TOML).", valueName: "file"))
    var config: String

    @OptionGroup var keymapOptions: KeymapOptions

    @Option(help: ArgumentHelp("Control socket path.", valueName: "path"))
    var socket: String?

    @Flag(help: "Do not open a control socket.")
    var noSocket = false

    @Flag(help: "Allow control clients to subscribe to key events (they carry typed text).")
    var allowKeyEvents = false

    @Option(help: ArgumentHelp("Where device nodes are.", valueName: "dir"))
    var inputDir = "/dev/input"

    @Option(help: ArgumentHelp("At most this many commands run at once.", valueName: "n"))
    var maxChildren = 8

    @Option(help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel = "info"

    @Flag(help: "Print the kernel-to-dispatch latency of each command (for measurements).")
    var reportLatency = false

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical") }
        guard maxChildren >= 1 else { throw ValidationError("--max-children must be at least 1") }
    }

    func run() throws {
        // This process holds keystrokes in memory: no core dumps, no ptrace by the same user.
        _ = kbd_disable_core_dumps()
        let environment = ProcessEnvironment.current()
        let journal = environment["JOURNAL_STREAM"] != nil
        let level = Logger.Level(rawValue: logLevel)!
        let logger = Logger(label: "kbd-commandd") { _ in StderrLogHandler(level: level, journal: journal) }
        let notifier = SystemdNotifier(environment: environment)
        let signals = makeSignalDescriptor([SIGTERM, SIGINT, SIGHUP, SIGCHLD])
        let configPath = config
        let keymapOptions = keymapOptions
        let load: () throws -> KeyboardDaemon.Loaded = {
            let config = try ConfigLoader.load(path: configPath)
            return KeyboardDaemon.Loaded(config: config, keymap: try keymapOptions.keymap(config: config, environment: environment))
        }
        var socketPath: String? = socket
        if socketPath == nil && !noSocket {
            if geteuid() == 0 {
                mkdir("/run/kbd-commandd", 0o755)
                socketPath = "/run/kbd-commandd/socket"
            } else if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
                socketPath = runtime + "/kbd-commandd.socket"
            } else {
                logger.warning("no control socket: not root and XDG_RUNTIME_DIR is unset (use --socket)")
            }
        }
        let daemon: KeyboardDaemon
        do {
            daemon = try KeyboardDaemon(
                options: .init(socketPath: noSocket ? nil : socketPath, allowKeyEvents: allowKeyEvents, maxChildren: maxChildren,
                               compose: ComposeSource.fromEnvironment(environment)),
                source: EvdevDeviceSource(directory: inputDir), logger: logger, load: load)
        } catch {
            throw report(error)
        }
        if reportLatency {
            daemon.dispatchObserver = { command, eventTime, dispatchTime in
                let us = dispatchTime.microseconds - eventTime.microseconds
                _ = "latency \(command.id) \(us)us\n".withCString { write(1, $0, strlen($0)) }
            }
        }
        try daemon.addExternal(signals) {
            for signal in readSignals(signals) {
                switch signal {
                case SIGHUP:
                    notifier.notify("RELOADING=1\nMONOTONIC_USEC=\(monotonicNow().microseconds)")
                    logger.info("SIGHUP: reloading \(configPath)")
                    daemon.reload()
                    notifier.notify("READY=1")
                case SIGCHLD:
                    daemon.runner.reap()
                default:
                    logger.info("signal \(signal): stopping")
                    notifier.notify("STOPPING=1")
                    daemon.requestStop()
                }
            }
        }
        notifier.notify("READY=1")
        daemon.run()
    }
}
