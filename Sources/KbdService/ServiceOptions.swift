public import KbdKeymap
public import KbdConfig
import KbdDaemon
public import KbdProcess

/// The options of the service (`kbd-commandd run …`, which executes
/// `kbd-commandd-daemon …`). Parsed by hand: the service binary links neither
/// swift-argument-parser nor Foundation, which keeps its idle memory small
/// (see BENCHMARKS.md).
public struct ServiceOptions: Equatable, Sendable {
    /// `--config FILE`; nil: the standard files (`/etc/kbd-commandd/config.toml` and
    /// `config.d/*.toml`, or under `$KBD_COMMANDD_CONFIG_DIR`).
    public var config: String?
    public var keymap = KeymapNames()
    public var socket: String?
    public var noSocket = false
    public var allowKeyEvents = false
    public var inputDir = "/dev/input"
    public var maxChildren = 8
    public var logLevel = "info"
    public var reportLatency = false
    /// Names of variables `run` programs get from the service's environment beyond the allow-list.
    public var passEnvironment: [String] = []
    public var maxClients = 256
    /// Serve every local user's session agent (socket mode 0666, limited requests).
    public var userAgents = false
    /// evemu recordings to replay as the devices, instead of `inputDir`.
    public var replay: [String] = []

    public init() {}

    /// Variables `run` programs always get from the service's environment (when set).
    public static let childEnvironmentAllowList = ["PATH", "LANG", "LANGUAGE", "TZ", "HOME", "USER", "LOGNAME"]

    /// The environment of `run` programs: the allow-list, `LC_*`, and what `--pass-env` names,
    /// taken from `environment`; a default PATH when it has none. Never the service's own
    /// plumbing (NOTIFY_SOCKET, LISTEN_*, JOURNAL_STREAM, INVOCATION_ID, LD_*).
    public func childEnvironment(from environment: [String: String]) -> [String] {
        var out: [String] = []
        for (name, value) in environment.sorted(by: { $0.key < $1.key })
        where Self.childEnvironmentAllowList.contains(name) || name.hasPrefix("LC_") || passEnvironment.contains(name) {
            out.append("\(name)=\(value)")
        }
        if environment["PATH"] == nil { out += CommandRunner.defaultEnvironment }
        return out
    }

    /// What the command line asked for.
    public enum Parsed: Equatable, Sendable {
        case run(ServiceOptions)
        case help
        case version
    }

    /// The version of kbd-commandd and of its service.
    public static let version = ProgramInfo.version

    public static let levels = ProgramInfo.logLevels

    /// Parses the arguments after the program name. Accepts `--name value` and
    /// `--name=value`; throws a `CLIFailure` with exit code 64 naming the argument.
    public static func parse(_ arguments: [String]) throws(CLIFailure) -> Parsed {
        var options = ServiceOptions()
        var sawInputDir = false
        /// Right after `--replay FILE`: further bare arguments are more recordings.
        var inReplayList = false
        var scan = ArgumentScanner(arguments, valueName: valueName)
        func usage(_ message: String) -> CLIFailure { ArgumentScanner.usage(message) }
        while scan.next() {
            let argument = scan.argument
            if inReplayList && !argument.hasPrefix("-") {
                options.replay.append(argument)
                continue
            }
            inReplayList = false
            let name = scan.name
            func value() throws(CLIFailure) -> String { try scan.value() }
            func noValue() throws(CLIFailure) { try scan.noValue() }
            switch name {
            case "-h", "--help": return .help
            case "--version": return .version
            case "-c", "--config": options.config = try value()
            case "--layout": options.keymap.layout = try value()
            case "--variant": options.keymap.variant = try value()
            case "--options": options.keymap.options = try value()
            case "--model": options.keymap.model = try value()
            case "--rules": options.keymap.rules = try value()
            case "--socket": options.socket = try value()
            case "--no-socket": try noValue(); options.noSocket = true
            case "--allow-key-events": try noValue(); options.allowKeyEvents = true
            case "--user-agents": try noValue(); options.userAgents = true
            case "--input-dir": options.inputDir = try value(); sawInputDir = true
            case "--replay":
                let file = try value()
                guard !file.isEmpty else { throw usage("--replay takes an evemu recording, not an empty name") }
                options.replay.append(file)
                inReplayList = true
            case "--report-latency": try noValue(); options.reportLatency = true
            case "--pass-env":
                let text = try value()
                let names = text.split(separator: ",").map(String.init)
                guard !names.isEmpty, names.allSatisfy({ n in !n.isEmpty && n.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }) else {
                    throw usage("--pass-env takes variable names separated by commas, such as DISPLAY,WAYLAND_DISPLAY, not '\(text)'")
                }
                options.passEnvironment += names
            case "--max-clients":
                let text = try value()
                guard let n = Int(text), n >= 1 else { throw usage("--max-clients must be a whole number of at least 1, not '\(text)'") }
                options.maxClients = n
            case "--max-children":
                let text = try value()
                guard let n = Int(text), n >= 1 else { throw usage("--max-children must be a whole number of at least 1, not '\(text)'") }
                options.maxChildren = n
            case "--log-level":
                let text = try value()
                guard levels.contains(text) else { throw usage("--log-level must be one of \(levels.joined(separator: ", ")), not '\(text)'") }
                options.logLevel = text
            default:
                throw scan.unknown()
            }
        }
        if sawInputDir && !options.replay.isEmpty {
            throw usage("--replay and --input-dir exclude each other: replayed recordings are the only devices")
        }
        return .run(options)
    }

    private static func valueName(_ option: String) -> String {
        switch option {
        case "-c", "--config": return "file"
        case "--socket": return "path"
        case "--input-dir": return "dir"
        case "--replay": return "file"
        case "--max-children", "--max-clients": return "n"
        case "--pass-env": return "names"
        case "--log-level": return "level"
        default: return String(option.dropFirst(2))
        }
    }

    /// The files the service reads: `--config FILE` alone, else the standard set.
    public func configFiles(environment: [String: String]) -> ConfigFiles {
        config.map(ConfigFiles.single) ?? ConfigFiles.standard(environment: environment)
    }

    public static let synopsis = "kbd-commandd run [--config <file>] [--layout <layout>] [--variant <variant>] [--options <options>] [--model <model>] [--rules <rules>] [--socket <path>] [--no-socket] [--allow-key-events] [--user-agents] [--input-dir <dir> | --replay <file>...] [--max-children <n>] [--max-clients <n>] [--pass-env <names>] [--log-level <level>] [--report-latency]"

    public static let help = """
        OVERVIEW: Run the service: watch every keyboard, run commands, serve the control socket.

        Starts with or without keyboards (none is the normal state of a tablet; a missing
        input directory is waited for). Keyboards plugged in later are picked up through
        inotify. SIGHUP, 'systemctl reload kbd-commandd' and 'kbd-commandd reload' reload
        the config (a bad one is logged and the old one kept); SIGTERM stops.

        Without --config it reads /etc/kbd-commandd/config.toml and then the drop-ins
        /etc/kbd-commandd/config.d/*.toml in name order (KBD_COMMANDD_CONFIG_DIR replaces
        /etc/kbd-commandd). Under systemd it sends READY=1, RELOADING=1 and STOPPING=1.

        The keymap: --layout and the other keymap options, else the config's [keymap], else
        XKB_DEFAULT_*, else the system's keyboard configuration /etc/default/keyboard (read at
        start and on reload; KBD_COMMANDD_SYSTEM_KEYBOARD names another file, empty none; a bad
        value in it is a warning with the file and line), else us.

        The control socket (JSON Lines) defaults to /run/kbd-commandd/socket as root, else
        $XDG_RUNTIME_DIR/kbd-commandd.socket. Logged: device events, commands with their titles,
        chords with Ctrl, Alt or Super (at debug level), input nodes it may not read.
        Never typed text.

        The service is the small binary kbd-commandd-daemon (in /usr/libexec/kbd-commandd,
        which runs it for 'kbd-commandd run'); it takes the same options.

        With --replay, evemu recordings are the devices instead of /dev/input, played in
        real time on one timeline (as 'kbd-commandd replay' merges them; the earliest event
        plays 0.1 s after the start): each attaches at its first event and detaches after
        its last. The socket, clients and commands are live, and the service runs on until
        SIGTERM. For testing desktops and clients without uinput.

        Examples:
          kbd-commandd run
          kbd-commandd run -c /usr/share/doc/kbd-commandd/examples/config.toml --no-socket --replay /usr/share/doc/kbd-commandd/examples/recordings/service-keys.evemu

        USAGE: \(synopsis)

        OPTIONS:
          -c, --config <file>     The command table (TOML). (default: /etc/kbd-commandd/config.toml
                                  and config.d/*.toml)
          --layout <layout>       XKB layout(s), e.g. 'de' or 'us,ru'. Overrides the config's [keymap].
          --variant <variant>     XKB variant(s), e.g. 'nodeadkeys'.
          --options <options>     XKB options, e.g. 'grp:alt_shift_toggle'.
          --model <model>         XKB model, e.g. 'pc105'.
          --rules <rules>         XKB rules (default evdev).
          --socket <path>         Control socket path.
          --no-socket             Do not open a control socket.
          --allow-key-events      Allow control clients to subscribe to key events (they carry typed text).
          --user-agents           Let every local user's session agent connect (socket mode 0666): it may
                                  register its own commands and learn presence and geometry, nothing else.
          --input-dir <dir>       Where device nodes are. (default: /dev/input)
          --replay <file>...      Replay evemu recordings as the devices, in real time (repeatable).
          --max-children <n>      At most this many commands run at once. (default: 8)
          --max-clients <n>       At most this many control-socket clients at once. (default: 256)
          --pass-env <names>      Also give run programs these variables, e.g. DISPLAY,WAYLAND_DISPLAY
                                  (they always get PATH, HOME, USER, LOGNAME, LANG, LANGUAGE, LC_*, TZ).
          --log-level <level>     trace, debug, info, notice, warning, error or critical. (default: info)
          --report-latency        Print the kernel-to-dispatch latency of each command (for measurements).
          --version               Show the version.
          -h, --help              Show help information.

        Exit codes: 0 stopped by SIGTERM/SIGINT; 64 usage error; 65 bad recording (file:line);
        66 the config or a recording cannot be opened; 78 bad config or keymap (file:line);
        1 any other failure to start.

        """
}
