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

            Text output: the first line says what the time column is, and each line starts with \
            the seconds since the first event of its timeline. Recordings whose clocks overlap \
            (played together) share a timeline; a recording whose clock does not overlap the \
            ones before it (made on another machine or another day: its first event comes after \
            every earlier recording's last) starts a timeline of its own, announced by a line \
            "# timeline N: FILE …" and counted from 0 again. --merge keeps one timeline for all \
            (seconds since the very first event, whatever the gaps). --format json prints JSON \
            Lines, one object per event, "event" first, whose "time" is the recording's own \
            timestamp (seconds, as evemu-record wrote it: often the Unix time, or the kernel's \
            monotonic clock), with or without --merge:
              {"event":"command","time":1.25,"id":"save","title":"Save","scope":"global","chord":"Ctrl+S"}

            Examples:
              kbd-commandd replay /usr/share/doc/kbd-commandd/examples/recordings/desktop-keys.evemu --config /usr/share/doc/kbd-commandd/examples/desktop.toml
              kbd-commandd replay /usr/share/doc/kbd-commandd/examples/recordings/ctrl-shift-c.evemu /usr/share/doc/kbd-commandd/examples/recordings/super-up.evemu --print all --format json --layout us,ru --options grp:alt_shift_toggle
              kbd-commandd replay /usr/share/doc/kbd-commandd/examples/recordings/super-up.evemu --config /usr/share/doc/kbd-commandd/examples/hud.toml --print hud --format json
              kbd-commandd replay /usr/share/doc/kbd-commandd/examples/recordings/super-up.evemu /usr/share/doc/kbd-commandd/examples/recordings/ctrl-shift-c.evemu --merge
            """
    )

    /// The first line of text output: what the time column is (each timeline's own clock).
    static let textHeader = "# time: seconds since the first event of its timeline (a recording whose clock does not overlap the ones before it starts a new one: \"# timeline\" lines; --merge: one); then the event and its details (--format json: the recordings' own timestamps)"
    /// The same with --merge: one timeline.
    static let mergedHeader = "# time: seconds since the first event, one timeline for every recording (--merge); then the event and its details (--format json: the recordings' own timestamps)"

    /// The line that starts timeline `number` (2, 3…) with `file`, first event at `start` on its own clock.
    static func timelineLine(_ number: Int, file: String, start: EventTime) -> String {
        "# timeline \(number): \(file) starts at \(start) on its own clock, after every recording before it ended; times count from 0 again"
    }

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

    @Flag(help: "One timeline for every recording in text output: seconds since the very first event, even across recordings whose clocks do not overlap (default: each such recording starts its own timeline).")
    var merge = false

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
                                          presencePolicy: config.presence, stickyKeys: config.stickyKeys, hud: config.hud,
                                          deviceKeymaps: config.deviceKeymaps))
            // Recordings that overlap in time are open together: allow as many as the hard limit does.
            raiseOpenFileLimit()
            let source = try RecordingSource(paths: files)
            let stdout = FileOutput.standardOutput()
            var events: [PipelineEvent] = []
            // Text: seconds since the first event of the timeline, said in a header line (the
            // recordings' own timestamps are the JSON's `time`). A recording that attaches while
            // no other is attached does not overlap the ones before it (they are merged in time
            // order): it starts a new timeline, unless --merge.
            var origin: EventTime?
            if format == .text { stdout.write((merge ? Self.mergedHeader : Self.textHeader) + "\n") }
            let timelines = format == .text && !merge
            var attached: Set<DeviceID> = []
            var played = false
            var timelineNumber = 1
            /// Timelines announced by the source, started when the first event at or after their start is printed.
            var nextTimelines: [(file: String, start: EventTime)] = []
            func emit() {
                if events.isEmpty { return }
                if origin == nil { origin = events[0].time }
                for event in events {
                    while let next = nextTimelines.first, event.time >= next.start {
                        nextTimelines.removeFirst()
                        timelineNumber += 1
                        origin = next.start
                        stdout.write(Self.timelineLine(timelineNumber, file: next.file, start: next.start) + "\n")
                    }
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
                if timelines {
                    switch event {
                    case .attached(let id, _, _, let time):
                        if attached.isEmpty && played {
                            let file = files.indices.contains(id.rawValue) ? files[id.rawValue] : "recording \(id.rawValue + 1)"
                            nextTimelines.append((file.escapingControlCharacters, time))
                        }
                        attached.insert(id)
                        played = true
                    case .detached(let id, _): attached.remove(id)
                    default: played = true
                    }
                }
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
