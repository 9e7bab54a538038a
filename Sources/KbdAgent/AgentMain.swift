import KbdProcess
import Logging
import KbdControl
import KbdSystem
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
