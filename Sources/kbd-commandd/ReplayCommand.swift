import ArgumentParser
import KbdProcess
#if canImport(Glibc)
import Glibc
#endif
import KbdCore
import KbdService
import KbdKeymap
import KbdPipeline
import KbdRecording
import KbdSystem
import KbdControl
import KbdConfig

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay evemu recordings through the keymap and the command table.",
        discussion: """
            Each FILE is one device (evemu-record format; files with only E: lines replay as a \
            generic keyboard named after the file). Several files are merged by timestamp. The \
            output is what the daemon would do: device attach/detach, hardware-keyboard presence, \
            chords (with Ctrl, Alt or Super) and fired commands. Key events carry typed text and \
            are printed only with --print keys or --print all. --print hud prints the \
            discoverability HUD as [hud] configures it: shown (holding Super alone, a command with \
            action = "hud", a sequence prefix left pending) with the commands it lists, and hidden \
            again; never a typed key.

            Text output has one clock: the first line says so, and each line starts with the \
            seconds since the recordings' first event. --format json prints JSON Lines, one \
            object per event, "event" first, whose "time" is the recording's own timestamp \
            (seconds, as evemu-record wrote it: often the Unix time, or the kernel's monotonic clock):
              {"event":"command","time":1.25,"id":"save","title":"Save","scope":"global","chord":"Ctrl+S"}

            Examples:
              kbd-commandd replay /usr/share/doc/kbd-commandd/examples/recordings/desktop-keys.evemu --config /usr/share/doc/kbd-commandd/examples/desktop.toml
              kbd-commandd replay /usr/share/doc/kbd-commandd/examples/recordings/ctrl-shift-c.evemu /usr/share/doc/kbd-commandd/examples/recordings/super-up.evemu --print all --format json --layout us,ru --options grp:alt_shift_toggle
              kbd-commandd replay /usr/share/doc/kbd-commandd/examples/recordings/super-up.evemu --config /usr/share/doc/kbd-commandd/examples/hud.toml --print hud --format json
            """
    )

    /// The first line of text output: what the time column is.
    static let textHeader = "# time: seconds since the first event; then the event and its details (--format json: the recordings' own timestamps)"

    enum PrintWhat: String, ExpressibleByArgument, CaseIterable {
        case keys, chords, commands, hud, all
    }

    @Argument(help: ArgumentHelp("evemu recordings, one device each.", valueName: "file"), completion: .file(extensions: ["evemu"]))
    var files: [String]

    @OptionGroup var configOption: ConfigOption
    @OptionGroup var keymapOptions: KeymapOptions

    @Option(
        name: .customLong("print"), parsing: .singleValue,
        help: ArgumentHelp("What to print besides device events: keys, chords, commands, hud (the discoverability HUD shown and hidden) or all (repeatable; default chords and commands).", valueName: "what"))
    var print: [PrintWhat] = []

    @Option(help: ArgumentHelp("Output format: text or json (JSON Lines).", valueName: "format"))
    var format: OutputFormat = .text

    @Option(help: ArgumentHelp("Active scopes, most specific first, comma-separated; global is always last.", valueName: "scopes"))
    var scope: String?

    @Flag(help: "Replay as if a text field had focus: typing and editing keys do not fire commands.")
    var textInputActive = false

    @Option(help: ArgumentHelp("A Compose file to use instead of the locale's (for dead keys and compose sequences).", valueName: "file"))
    var composeFile: String?

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Give at least one recording to replay.") }
    }

    func run() throws {
        try withErrorReporting {
            let environment = ProcessEnvironment.current()
            let config = try configOption.load()
            let keymap = try keymapOptions.keymap(config: config, environment: environment)
            let what = Set(print.isEmpty ? [.chords, .commands] : print)
            let showKeys = what.contains(.keys) || what.contains(.all)
            let showChords = what.contains(.chords) || what.contains(.all)
            let showCommands = what.contains(.commands) || what.contains(.all)
            let showHud = what.contains(.hud) || what.contains(.all)
            let compose: ComposeSource
            if let composeFile {
                compose = .file(path: composeFile, locale: "en_US.UTF-8")
            } else {
                compose = ComposeSource.fromEnvironment(environment)
            }
            let pipeline = try Pipeline(
                keymap: keymap, table: config.table, scopes: splitList(scope), textInputActive: textInputActive,
                geometry: try config.geometryState(),
                options: Pipeline.Options(emitKeys: showKeys, compose: showKeys ? compose : .none, deviceFilter: config.devices,
                                          presencePolicy: config.presence, stickyKeys: config.stickyKeys, hud: config.hud))
            // Recordings that overlap in time are open together: allow as many as the hard limit does.
            raiseOpenFileLimit()
            let source = try RecordingSource(paths: files)
            let stdout = FileOutput.standardOutput()
            var events: [PipelineEvent] = []
            // Text: one clock, seconds since the recordings' first event, said in a header line
            // (the recordings' own timestamps are the JSON's `time`).
            var origin: EventTime?
            if format == .text { stdout.write(Self.textHeader + "\n") }
            func emit() {
                if events.isEmpty { return }
                if origin == nil { origin = events[0].time }
                for event in events {
                    switch event {
                    case .key: if !showKeys { continue }
                    case .chord: if !showChords { continue }
                    case .command: if !showCommands { continue }
                    case .hud: if !showHud { continue }
                    default: break
                    }
                    stdout.write(format == .json ? EventFormatter.json(event) : EventFormatter.text(event, since: origin ?? .zero))
                    stdout.write("\n")
                }
                events.removeAll(keepingCapacity: true)
            }
            while let event = try source.next() {
                pipeline.process(event, into: &events)
                emit()
            }
            pipeline.finish(into: &events)
            emit()
            try stdout.flush()
        }
    }
}

/// Raises the soft limit on open files to the hard limit (the soft one is often 1,024).
func raiseOpenFileLimit() {
    var limit = rlimit()
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(resource, &limit)
}
