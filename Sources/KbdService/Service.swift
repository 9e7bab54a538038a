import CLinux
import KbdProcess
import Logging
public import KbdKeymap
public import KbdConfig
public import KbdDaemon
import KbdSystem
import KbdControl
import KbdCore
import KbdEvdev
import KbdRecording
import KbdCommands
#if canImport(Glibc)
import Glibc
#endif

/// What identifies a file's content without reading it: a change of any of these is a
/// new version (an editor's rename changes the inode, a write the times, chmod ctime).
public struct FileStamp: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int64
    var changed: Int64

    public init?(path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        modified = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        changed = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
    }
}

/// The control-client cap, lowered to what the descriptor limit allows: the soft limit
/// is raised to the hard one (at most 4,096) first, and 64 descriptors are kept for
/// devices, children and the loop itself.
func maxClients(_ wanted: Int, logger: Logger) -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return wanted }
    let target = min(limit.rlim_max, 4096)
    if limit.rlim_cur < target {
        limit.rlim_cur = target
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    let allowed = max(4, Int(limit.rlim_cur) - 64)
    if wanted > allowed {
        logger.warning("at most \(allowed) control clients: the descriptor limit is \(limit.rlim_cur) (LimitNOFILE)")
        return allowed
    }
    return wanted
}

/// Compiles the keymap: command line over config over `XKB_DEFAULT_*` over the system's keyboard
/// configuration (`system`, /etc/default/keyboard: when none of those names anything) over us.
/// Names given on the command line and in `XKB_DEFAULT_*` are checked against the rules' list
/// (the config's were checked when it loaded) and judged by libxkbcommon: a keymap it cannot
/// compile is one error with the list's nearest names or xkbcommon's reasons (at the config's
/// `[keymap]` line when the names came from there), and so is an option it ignored; any other
/// name the list omits but libxkbcommon compiles is used, and `warn` gets one line for it.
public func compileKeymap(commandLine: KeymapNames, config: Config, environment: [String: String],
                          system: SystemKeyboard? = nil, warn: (String) -> Void = { _ in }) throws -> XkbKeymap {
    try compileKeymapWithSource(commandLine: commandLine, config: config, environment: environment, system: system, warn: warn).keymap
}

/// Where the keymap's names came from, for `check`: `the command line`, `the config's [keymap]`,
/// `XKB_DEFAULT_*`, the system file's path, or `the built-in default`, joined with "and".
public func keymapSource(commandLine: KeymapNames, config: Config, environment: [String: String], systemUsed: SystemKeyboard?) -> String {
    if let systemUsed { return systemUsed.path }
    var parts: [String] = []
    if !commandLine.isEmpty { parts.append("the command line") }
    if !config.keymap.isEmpty { parts.append("the config's [keymap]") }
    if !KeymapNames.fromEnvironment(environment).isEmpty { parts.append("XKB_DEFAULT_*") }
    return parts.isEmpty ? "the built-in default" : parts.joined(separator: " and ")
}

/// The system file's names as far as they compile: a name libxkbcommon cannot use is dropped with a
/// warning naming the file and line (never an error: the service starts); nil when nothing usable is left.
func usableSystemKeymap(_ system: SystemKeyboard, warn: (String) -> Void) -> XkbKeymap? {
    for w in system.warnings { warn(w) }
    guard system.namesAnything else { return nil }
    var names = system.names
    let context = try? XkbContext()
    func compile(_ n: KeymapNames) -> XkbKeymap? {
        context.flatMap { try? XkbKeymap(context: $0, names: KeymapNames.resolve(commandLine: KeymapNames(), config: KeymapNames(), environment: [:], system: n)) }
    }
    func drop(_ field: String) {
        switch field {
        case "model": names.model = nil
        case "layout": names.layout = nil; names.variant = nil
        case "variant": names.variant = nil
        default: names.options = nil
        }
    }
    var compiled = compile(names)
    // The rules' list is read only to explain a failure or to find an option xkbcommon ignored (it
    // costs the resident service half a megabyte while held); a name it omits that compiles is the
    // system's own choice and is used without a word.
    if compiled == nil || (compiled?.ignoredOptions.isEmpty == false) {
        let problems = XkbRulesList.load(rules: nil)?.problems(names) ?? []
        let judged = XkbRulesList.judge(problems, compiled: compiled)
        for p in judged.errors {
            let variable = SystemKeyboard.variable(field: p.field)
            warn("\(system.location(variable)): \(variable): \(p.message); ignoring it")
            drop(p.field)
        }
        if !judged.errors.isEmpty { compiled = compile(names) }
    }
    guard let compiled else {
        warn("\(system.path): cannot compile a keymap from \(names.description); ignoring the file (using us)")
        return nil
    }
    return names.isEmpty ? nil : compiled
}

/// `compileKeymap`, and where the names came from (`keymapSource`).
public func compileKeymapWithSource(commandLine: KeymapNames, config: Config, environment: [String: String],
                                    system: SystemKeyboard? = nil, warn: (String) -> Void = { _ in }) throws -> (keymap: XkbKeymap, source: String) {
    if let system, KeymapNames.usesSystem(commandLine: commandLine, config: config.keymap, environment: environment),
       let keymap = usableSystemKeymap(system, warn: warn) {
        return (keymap, system.path)
    }
    let source = keymapSource(commandLine: commandLine, config: config, environment: environment, systemUsed: nil)
    return (try compileUserKeymap(commandLine: commandLine, config: config, environment: environment, warn: warn), source)
}

/// The keymap from the command line, the config and the environment (checked strictly).
func compileUserKeymap(commandLine: KeymapNames, config: Config, environment: [String: String],
                       warn: (String) -> Void) throws -> XkbKeymap {
    let resolved = KeymapNames.resolve(commandLine: commandLine, config: config.keymap, environment: environment)
    // Only what the environment decides (nothing above it names that field).
    let e = KeymapNames.fromEnvironment(environment), c = config.keymap
    let layoutAbove = commandLine.layout != nil || c.layout != nil
    let env = KeymapNames(
        rules: nil, model: commandLine.model ?? c.model == nil ? e.model : nil, layout: layoutAbove ? nil : e.layout,
        variant: layoutAbove ? nil : e.variant, options: commandLine.options ?? c.options == nil ? e.options : nil)
    // The rules' list is read only when there is a name to check (reading it costs the
    // resident service about half a megabyte of heap while it is held).
    let named = [commandLine.model, commandLine.layout, commandLine.variant, commandLine.options,
                 env.model, env.layout, env.variant, env.options].contains { $0 != nil }
    var problems: [(label: String, problem: XkbRulesList.Problem)] = []
    if named, let list = XkbRulesList.load(rules: resolved.rules) {
        problems = list.problems(commandLine).map { ("--\($0.field)", $0) }
            + list.problems(env).map { ("XKB_DEFAULT_\($0.field == "options" ? "OPTIONS" : $0.field.uppercased())", $0) }
    }
    func text(_ list: [(label: String, problem: XkbRulesList.Problem)], _ message: (XkbRulesList.Problem) -> String) -> String {
        list.map { "\($0.label): \(message($0.problem))" }.joined(separator: "\n")
    }
    let context = try XkbContext()
    let keymap: XkbKeymap
    do {
        keymap = try XkbKeymap(context: context, names: resolved)
    } catch {
        if !problems.isEmpty { throw KeymapError(message: text(problems, \.message)) }
        if let location = config.keymapLocation, commandLine.layout == nil {
            throw KeymapError(message: "\(location): keymap: \(error.message)")
        }
        throw error
    }
    let judged = XkbRulesList.judge(problems.map(\.problem), compiled: keymap)
    let errors = problems.filter { p in judged.errors.contains(p.problem) }
    if !errors.isEmpty { throw KeymapError(message: text(errors, \.message)) }
    for w in config.keymapWarnings { warn(w.description) }
    for p in problems { warn("\(p.label): \(p.problem.warning)") }  // every one is a warning here
    return keymap
}

/// Standard error with each line at the journal's error priority (`<3>`): the problems of a
/// config that stops the service, so `journalctl -p err` shows them.
final class ErrorPriorityOutput: TextOutput {
    private let output = FileOutput.standardError()
    func write(_ text: String) { output.write("<3>" + text) }
    func flush() throws(SystemError) { try output.flush() }
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

    /// How the service (re)loads its config: strict file trust; the keymap compiled again
    /// only when its names changed; the file parsed again only when it changed.
    public static func loader(configPath: String, keymap keymapNames: KeymapNames, environment: [String: String],
                              warn: @escaping (String) -> Void = { _ in })
        -> () throws -> KeyboardDaemon.Loaded
    {
        loader(files: .single(configPath), keymap: keymapNames, environment: environment, warn: warn)
    }

    /// The same with the system's keyboard configuration (`SystemKeyboard.path(environment:)`)
    /// read at each load, for when nothing else names a keymap.

    /// The same for a main file and its drop-ins: parsed again when any file changed, or a
    /// drop-in came or went.
    public static func loader(files: ConfigFiles, keymap keymapNames: KeymapNames, environment: [String: String],
                              warn: @escaping (String) -> Void = { _ in })
        -> () throws -> KeyboardDaemon.Loaded
    {
        let systemPath = SystemKeyboard.path(environment: environment)
        // A reload compiles the keymap again only when the names changed (a flood of reload
        // requests must not compile one keymap each).
        var lastKeymap: (config: KeymapNames, system: SystemKeyboard?, keymap: XkbKeymap)?
        // Nor parse a file that did not change since it last loaded (same inode, size,
        // modification and change times): a reload request costs a stat then.
        var lastLoad: (stamp: [FileStamp?], paths: [String], system: FileStamp?, loaded: KeyboardDaemon.Loaded)?
        return {
            let paths = files.paths()
            // The system file is stamped too (a missing one as nil, which is a version of its own).
            let stamp = paths.map { FileStamp(path: $0) }
            let systemStamp = systemPath.flatMap { FileStamp(path: $0) }
            if let last = lastLoad, !stamp.contains(nil), last.stamp == stamp, last.paths == paths, last.system == systemStamp { return last.loaded }
            let config = try ConfigLoader.load(files, trust: .strict)
            let system = systemPath.flatMap { SystemKeyboard.load(path: $0) }
            let keymap: XkbKeymap
            if let last = lastKeymap, last.config == config.keymap, last.system == system {
                keymap = last.keymap
            } else {
                keymap = try compileKeymap(commandLine: keymapNames, config: config, environment: environment, system: system, warn: warn)
                lastKeymap = (config.keymap, system, keymap)
            }
            // Two chords that are one press on this keymap: only one could fire (as `check` says).
            let conflicts = ConfigLoader.samePressConflicts(config.table, keymap: keymap)
            if !conflicts.isEmpty { throw ConfigError(problems: conflicts) }
            // Programs that cannot work as the service runs them (issue 27), as `check` says.
            for w in ConfigLoader.sessionProgramWarnings(config.table) + ConfigLoader.shellSyntaxWarnings(config.table) { warn(w.description) }
            let loaded = KeyboardDaemon.Loaded(config: config, keymap: keymap)
            if !stamp.contains(nil) { lastLoad = (stamp, paths, systemStamp, loaded) }
            return loaded
    }
    }

    /// Starts the daemon and runs it until SIGTERM or SIGINT.
    public static func run(_ options: ServiceOptions) -> Int32 {
        // This process holds keystrokes in memory: no core dumps, no ptrace by the same user.
        _ = kbd_disable_core_dumps()
        // A log reader or client that went away is an EPIPE on that write, not the end of the
        // service (children get default dispositions back through POSIX_SPAWN_SETSIGDEF).
        signal(SIGPIPE, SIG_IGN)
        let environment = ProcessEnvironment.current()
        let journal = environment["JOURNAL_STREAM"] != nil
        let level = Logger.Level(rawValue: options.logLevel) ?? .info
        let logger = Logger(label: "kbd-commandd") { _ in StderrLogHandler(level: level, journal: journal) }
        let notifier = SystemdNotifier(environment: environment)
        // No SIGCHLD: commands' processes are reaped after the loop's turns (a wake-up of
        // their own would cost as much as starting them); its default disposition keeps
        // them waitable whatever the service was started with.
        signal(SIGCHLD, SIG_DFL)
        let signals = makeSignalDescriptor([SIGTERM, SIGINT, SIGHUP])
        let files = options.configFiles(environment: environment)
        let configPath = files.description
        let keymapNames = options.keymap
        let load = loader(files: files, keymap: keymapNames, environment: environment, warn: { logger.warning("\($0)") })
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
        // Recordings as the devices: checked to their end before anything starts (65 with file:line).
        let source: any DeviceSource
        if options.replay.isEmpty {
            source = EvdevDeviceSource(directory: options.inputDir)
        } else {
            let replay: ReplayDeviceSource
            do { replay = try ReplayDeviceSource(paths: options.replay) } catch { return reportFailure(error) }
            replay.onFinished = { logger.info("replay: every recording has played; running until SIGTERM") }
            logger.info("replaying \(replay.recordings.count) recordings as the devices, instead of \(options.inputDir)")
            source = replay
        }
        let daemon: KeyboardDaemon
        do {
            daemon = try KeyboardDaemon(
                options: .init(socketPath: options.noSocket ? nil : socketPath, allowKeyEvents: options.allowKeyEvents,
                               maxChildren: options.maxChildren, compose: ComposeSource.fromEnvironment(environment),
                               childEnvironment: options.childEnvironment(from: environment),
                               maxClients: maxClients(options.maxClients, logger: logger), userAgents: options.userAgents,
                               childExits: .polled),
                source: source, logger: logger, load: load)
        } catch {
            // Under the journal each problem is a line at error priority, as the log's are.
            let code = journal ? reportFailure(error, to: ErrorPriorityOutput()) : reportFailure(error)
            if code == ExitStatus.configError || code == ExitStatus.noInput {
                logger.error("stopping: \(configPath) cannot be used (the problems above, with file:line); the service will not restart until the config is fixed: run `kbd-commandd check`, then `systemctl restart kbd-commandd` (the unit's RestartPreventExitStatus=\(ExitStatus.usage) \(ExitStatus.noInput) \(ExitStatus.configError))")
            }
            return code
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
                        returnFreedMemory()
                        notifier.notify("READY=1")
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
        returnFreedMemory()
        notifier.notify("READY=1")
        daemon.run()
        return ExitStatus.success
    }

    /// Gives back to the kernel the heap that start-up (or a reload) used and freed: parsing
    /// the config, compiling the keymap and building the tables leave free blocks inside the
    /// heap that glibc keeps mapped (it trims only the top). The resident service then holds
    /// what it uses, not what it once needed (BENCHMARKS: idle memory).
    static func returnFreedMemory() {
        kbd_malloc_trim()
    }
}
