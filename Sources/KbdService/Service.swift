import CLinux
public import HardwareInput
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Compiles the keymap: command line over config over `XKB_DEFAULT_*` over us.
public func compileKeymap(commandLine: KeymapNames, config: Config, environment: [String: String]) throws -> XkbKeymap {
    let resolved = KeymapNames.resolve(commandLine: commandLine, config: config.keymap, environment: environment)
    let context = try XkbContext()
    return try XkbKeymap(context: context, names: resolved)
}

/// The service process: logging, sd_notify, signals, and the daemon's event loop.
public enum Service {
    /// Runs `kbd-commandd-daemon` with the arguments after the program name and
    /// returns the exit status.
    public static func main(arguments: [String]) -> Int32 {
        let parsed: ServiceOptions.Parsed
        do {
            parsed = try ServiceOptions.parse(arguments)
        } catch {
            let stderr = FileOutput.standardError()
            let code = reportFailure(error, to: stderr)
            stderr.write("Usage: \(ServiceOptions.synopsis)\n  See 'kbd-commandd run --help'.\n")
            return code
        }
        switch parsed {
        case .help:
            FileOutput.standardOutput().write(ServiceOptions.help)
            return ExitStatus.success
        case .version:
            FileOutput.standardOutput().write(ServiceOptions.version + "\n")
            return ExitStatus.success
        case .run(let options):
            return run(options)
        }
    }

    /// Starts the daemon and runs it until SIGTERM or SIGINT.
    public static func run(_ options: ServiceOptions) -> Int32 {
        // This process holds keystrokes in memory: no core dumps, no ptrace by the same user.
        _ = kbd_disable_core_dumps()
        let environment = ProcessEnvironment.current()
        let journal = environment["JOURNAL_STREAM"] != nil
        let level = Logger.Level(rawValue: options.logLevel) ?? .info
        let logger = Logger(label: "kbd-commandd") { _ in StderrLogHandler(level: level, journal: journal) }
        let notifier = SystemdNotifier(environment: environment)
        let signals = makeSignalDescriptor([SIGTERM, SIGINT, SIGHUP, SIGCHLD])
        let configPath = options.config
        let keymapNames = options.keymap
        let load: () throws -> KeyboardDaemon.Loaded = {
            let config = try ConfigLoader.load(path: configPath, trust: .strict)
            return KeyboardDaemon.Loaded(config: config, keymap: try compileKeymap(commandLine: keymapNames, config: config, environment: environment))
        }
        var socketPath: String? = options.socket
        if socketPath == nil && !options.noSocket {
            let isRoot = geteuid() == 0
            if isRoot { mkdir("/run/kbd-commandd", 0o755) }
            if let path = ControlSocketPath.forService(isRoot: isRoot, environment: environment) {
                socketPath = path
            } else {
                logger.warning("no control socket: not root and XDG_RUNTIME_DIR is unset (use --socket)")
            }
        }
        let daemon: KeyboardDaemon
        do {
            daemon = try KeyboardDaemon(
                options: .init(socketPath: options.noSocket ? nil : socketPath, allowKeyEvents: options.allowKeyEvents,
                               maxChildren: options.maxChildren, compose: ComposeSource.fromEnvironment(environment)),
                source: EvdevDeviceSource(directory: options.inputDir), logger: logger, load: load)
        } catch {
            return reportFailure(error)
        }
        if options.reportLatency {
            daemon.dispatchObserver = { command, eventTime, dispatchTime in
                let us = dispatchTime.microseconds - eventTime.microseconds
                _ = "latency \(command.id) \(us)us\n".withCString { write(1, $0, strlen($0)) }
            }
        }
        do {
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
        } catch {
            return reportFailure(error)
        }
        notifier.notify("READY=1")
        daemon.run()
        return ExitStatus.success
    }
}
