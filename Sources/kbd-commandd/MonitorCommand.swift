import ArgumentParser
import KbdProcess
#if canImport(Glibc)
import Glibc
#endif
import KbdService
import KbdPipeline
import KbdSystem
import KbdConfig
import KbdRecording
import KbdCore
import KbdEvdev
import KbdCommands
import KbdKeymap

/// `kbd-commandd monitor`: every key press, live, with what a config needs to bind it (the
/// way `keyd monitor` and `thd --dump` show keys). Reads the devices directly (as root), and
/// follows hot-plug through the service's live source; prints to standard output only, never
/// logs, never writes a file.
struct MonitorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Show each key you press: device, evdev code, keysym, the chord text for the config, and the command it fires.",
        discussion: """
            For every key press (not releases or repeats) prints one line: the device, the evdev \
            code (KEY_T 20), the keysym the key produces, the chord text to paste into a config's \
            keys = "…" (Ctrl+Shift+T, XF86AudioRaiseVolume), and the command the current config \
            would fire, if any. Modifier keys alone print no chord. With sticky keys on \
            ([accessibility] sticky_keys = true) a line shows the modifiers latched and locked \
            each time they change.

            It shows key presses, so what you type appears on screen, printable keys included \
            (binding them needs their names). It prints nothing else: no log, no file. Without \
            DEVICE it watches every keyboard in /dev/input that it may read (run it as root), \
            those plugged in after it started too (an attach line says so); with none yet, it \
            waits for one. With DEVICE it watches those nodes until the last one goes. Ctrl+C \
            stops (it is shown too). --replay FILE… reads evemu recordings instead of devices.

            The config is --config FILE, else the service's files (/etc/kbd-commandd/config.toml \
            and config.d/*.toml) when they exist, else none.

            Examples:
              kbd-commandd monitor
              kbd-commandd monitor /dev/input/event3
              kbd-commandd monitor --replay /usr/share/doc/kbd-commandd/examples/recordings/desktop-keys.evemu --config /usr/share/doc/kbd-commandd/examples/desktop.toml
            """
    )

    @Argument(help: ArgumentHelp("Device nodes to watch (default: every keyboard in /dev/input).", valueName: "device"))
    var devices: [String] = []

    @Option(parsing: .upToNextOption, help: ArgumentHelp("evemu recordings to read instead of devices.", valueName: "file"))
    var replay: [String] = []

    @Option(name: .shortAndLong, help: defaultConfigHelp, completion: .file(extensions: ["toml"]))
    var config: String?

    @OptionGroup var keymapOptions: KeymapOptions

    @Option(help: ArgumentHelp("Active scopes, most specific first, comma-separated; global is always last.", valueName: "scopes"))
    var scope: String?

    func validate() throws {
        if !replay.isEmpty && !devices.isEmpty { throw ValidationError("--replay and DEVICE exclude each other: the recordings are the devices") }
    }

    func run() throws {
        try withErrorReporting {
            let environment = ProcessEnvironment.current()
            let files = ConfigOption.files(config)
            let loaded: Config
            if config == nil && files.paths().allSatisfy({ access($0, F_OK) != 0 }) {
                loaded = .empty()
            } else {
                loaded = try ConfigLoader.load(files)
            }
            let keymap = try keymapOptions.keymap(config: loaded, environment: environment)
            let pipeline = try Pipeline(keymap: keymap, table: loaded.table, scopes: splitList(scope), textInputActive: false,
                                        options: Pipeline.Options(emitKeys: true, deviceFilter: loaded.devices, stickyKeys: loaded.stickyKeys,
                                                                  deviceKeymaps: loaded.deviceKeymaps))
            let stdout = FileOutput.standardOutput()
            let configName = loaded.table.commands.isEmpty && config == nil && loaded.path == Config.empty().path ? "no config" : files.description
            FileOutput.standardError().write("kbd-commandd monitor shows every key you press (what you type appears here); it logs nothing and writes no file. Commands from \(configName.escapingControlCharacters); they are not run. Ctrl+C stops.\n")
            var printer = MonitorPrinter(output: stdout)
            if !replay.isEmpty {
                let source = try RecordingSource(paths: replay)
                var events: [PipelineEvent] = []
                while let event = try source.next() {
                    if case .attached(_, let d, _, _) = event { printer.noteGrab(d, pipeline: pipeline) }
                    pipeline.process(event, into: &events)
                    printer.print(events)
                    events.removeAll(keepingCapacity: true)
                }
                pipeline.finish(into: &events)
                printer.print(events)
                try stdout.flush()
                return
            }
            try live(pipeline: pipeline, printer: &printer, output: stdout)
        }
    }

    /// Opens the devices given (until the last one goes), or follows every keyboard it may read
    /// in /dev/input, those plugged in later too (the service's live source: inotify), until Ctrl+C.
    private func live(pipeline: Pipeline, printer: inout MonitorPrinter, output: FileOutput) throws {
        let explicit = !devices.isEmpty
        let source: any DeviceSource = explicit ? ListedDevices(paths: devices) : EvdevDeviceSource(directory: "/dev/input")
        let follower = DeviceFollower(source: source) { device in
            explicit || pipeline.classify(device.description).isKeyboard
        }
        let stderr = FileOutput.standardError()
        var events: [PipelineEvent] = []
        var refused: Set<String> = []
        var saidRefused = 0
        func handle(_ changes: [DeviceFollower.Change]) throws {
            for change in changes {
                switch change {
                case .attached(let id, let device):
                    printer.noteGrab(device.description, pipeline: pipeline)
                    pipeline.process(.attached(id, device.description, verdict: pipeline.classify(device.description), time: monotonicNow()), into: &events)
                    stderr.write("watching \(device.path) \"\(device.description.name.escapingControlCharacters)\"\n")
                    // The service grabs it (monitor does not): its keys reach no window and run only its own commands.
                    let d = device.description
                    if let why = pipeline.options.deviceFilter.grabReason(name: d.name, id: d.id), pipeline.classify(d).isKeyboard {
                        stderr.write("  the service grabs it (\(why.escapingControlCharacters)): its keys reach no window and run only the commands with its devices\n")
                    }
                case .input(let id, let input):
                    for e in input { pipeline.process(.input(id, e), into: &events) }
                case .resynchronized(let id, let keys):
                    pipeline.process(.resynchronized(id, keysDown: keys, time: monotonicNow()), into: &events)
                case .detached(let id, _):
                    pipeline.process(.detached(id, time: monotonicNow()), into: &events)
                case .notOpened(let path, let error):
                    if explicit { throw CLIFailure(message: "\(path): cannot open: \(error.message)", code: ExitStatus.noInput) }
                    // Only keyboards matter (a mouse or a PC speaker it may not read is no problem).
                    if error.errno == EACCES || error.errno == EPERM, source.isKeyboardOrSwitch(path) != false { refused.insert(path) }
                }
            }
            printer.print(events)
            events.removeAll(keepingCapacity: true)
            try output.flush()
            if refused.count > saidRefused {
                saidRefused = refused.count
                stderr.write("\(refused.count) keyboard nodes could not be opened (permission denied): run as root (sudo kbd-commandd monitor).\n")
            }
        }
        let first = follower.start()
        for change in first {
            if case .notOpened(let path, let error) = change, explicit {
                throw CLIFailure(message: "\(path): cannot open: \(error.message)", code: ExitStatus.noInput)
            }
        }
        // The first keyboards' attach lines are not printed (as before): the stderr line names them.
        let attached = first.compactMap { change -> (DeviceID, any InputDevice)? in
            if case .attached(let id, let device) = change { return (id, device) } else { return nil }
        }
        for change in first {
            if case .notOpened(let path, let error) = change, error.errno == EACCES || error.errno == EPERM,
               source.isKeyboardOrSwitch(path) != false { refused.insert(path) }
        }
        if attached.isEmpty {
            if !refused.isEmpty || !follower.watching {
                throw CLIFailure(message: "no keyboard to watch in /dev/input\(refused.isEmpty ? "" : " (\(refused.count) keyboard nodes not readable: run as root)")", code: ExitStatus.noInput)
            }
            stderr.write("no keyboard in /dev/input yet: waiting for one to be plugged in\n")
        } else {
            for (id, device) in attached {
                if let why = printer.noteGrab(device.description, pipeline: pipeline) {
                    stderr.write("\(device.path) \"\(device.description.name.escapingControlCharacters)\": the service grabs it (\(why.escapingControlCharacters)): its keys reach no window and run only the commands with its devices\n")
                }
                pipeline.process(.attached(id, device.description, verdict: pipeline.classify(device.description), time: monotonicNow()), into: &events)
            }
            events.removeAll()
            if !refused.isEmpty {
                saidRefused = refused.count
                stderr.write("\(refused.count) keyboard nodes could not be opened (permission denied): run as root (sudo kbd-commandd monitor).\n")
            }
            stderr.write("watching \(attached.map { "\($0.1.path) \"\($0.1.description.name.escapingControlCharacters)\"" }.joined(separator: ", "))\n")
        }
        // Devices given by name: until the last one goes; else until Ctrl+C.
        while !explicit || !follower.devices.isEmpty {
            try handle(follower.step())
        }
    }
}

/// The device nodes given on the command line, as a source without hotplug.
final class ListedDevices: DeviceSource {
    let paths: [String]
    init(paths: [String]) { self.paths = paths }
    func scan() -> [String] { paths }
    func open(_ path: String) throws(SystemError) -> any InputDevice { try EvdevDevice(path: path) }
    var hotplugDescriptor: Int32? { nil }
    func readHotplug() -> (added: [String], removed: [String]) { ([], []) }
    func startWatching() -> Bool { false }
}

/// One line per key press: `DEVICE  KEY_T (20)  keysym t  chord Ctrl+Shift+T  → command ID "Title" (scope)`.
struct MonitorPrinter {
    let output: FileOutput
    /// The last press printed, to append the command it fired.
    private var pending: String?
    /// Sticky keys' latched and locked modifiers last shown, per device.
    private var sticky: [String: (latched: ModifierSet, locked: ModifierSet)] = [:]
    /// A sticky-keys line to print after the pending press.
    private var stickyLine: String?

    /// Why the service grabs each keyboard it does (by device name), for its attach line.
    private var grabbed: [String: String] = [:]

    init(output: FileOutput) { self.output = output }

    /// Notes whether the service grabs the keyboard `description` (its config's `[devices]
    /// grab` or a `[[device]]` with `grab = true`), before its attach is printed; returns why.
    @discardableResult
    mutating func noteGrab(_ description: DeviceDescription, pipeline: Pipeline) -> String? {
        let why = pipeline.classify(description).isKeyboard
            ? pipeline.options.deviceFilter.grabReason(name: description.name, id: description.id) : nil
        grabbed[description.name] = why
        return why
    }

    mutating func print(_ events: [PipelineEvent]) {
        for event in events {
            switch event {
            case .key(let key, let device):
                if key.state == .press {
                    flush()
                    var line = "\"\(device)\"  \(key.codeName) (\(key.code))  keysym \(key.keysym.name)"
                    line += key.isModifierKey ? "  (modifier)" : "  chord \(key.chord.description)"
                    pending = line
                }
                let last = sticky[device] ?? ([], [])
                if key.stickyLatched != last.latched || key.stickyLocked != last.locked {
                    sticky[device] = (key.stickyLatched, key.stickyLocked)
                    if pending == nil { flush() }
                    stickyLine = "\"\(device)\"  sticky keys: latched \(Self.names(key.stickyLatched)), locked \(Self.names(key.stickyLocked))"
                    if pending == nil { flush() }
                }
            case .command(_, _, let command, _, _):
                let text = "  → command \(command.id) \"\(command.title)\" (\(command.scope))"
                if let p = pending {
                    pending = p + text
                } else {
                    output.write((text.dropFirst(2) + "\n").escapingControlCharacters(keepingNewline: true))
                }
            case .attach(_, let device, let keyboard, _, _):
                flush()
                let grab = keyboard ? grabbed[device].map { "  grabbed by the service: \($0)" } ?? "" : ""
                output.write("attach \"\(device)\"\(keyboard ? "" : " (not a keyboard)")\(grab)\n".escapingControlCharacters(keepingNewline: true))
            case .detach(_, let device, _):
                flush()
                output.write("detach \"\(device)\"\n".escapingControlCharacters(keepingNewline: true))
            default:
                break
            }
        }
        flush()
    }

    private mutating func flush() {
        if let line = pending {
            output.write(line.escapingControlCharacters + "\n")
            pending = nil
        }
        if let line = stickyLine {
            output.write(line.escapingControlCharacters + "\n")
            stickyLine = nil
        }
    }

    private static func names(_ set: ModifierSet) -> String { set.isEmpty ? "none" : set.names.joined(separator: "+") }
}

private extension StringProtocol {
    func escapingControlCharacters(keepingNewline: Bool) -> String {
        let body = hasSuffix("\n") ? String(dropLast()) : String(self)
        return body.escapingControlCharacters + (hasSuffix("\n") && keepingNewline ? "\n" : "")
    }
}
