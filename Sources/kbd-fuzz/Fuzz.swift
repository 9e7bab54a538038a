import KbdKeymap
import KbdCommands
import KbdJSON
import KbdRecording
import KbdSystem
import KbdPipeline
import KbdCore
import KbdGeometry
import KbdControl
import KbdConfig
import KbdTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Fuzz targets for every parser that takes outside input. Built for libFuzzer with
/// `scripts/fuzz` (`--sanitize fuzzer --sanitize address -DFUZZING`); in the normal
/// build it is a corpus runner: `kbd-fuzz TARGET FILE...` feeds each file once, which
/// is how the regression inputs in Tests/fuzz-regressions are replayed.
enum FuzzTarget: String, CaseIterable {
    case evemu, toml, chord, scenario, control
}

/// The keymap compiled once per process (keymap compilation is not what is fuzzed).
let fuzzKeymap: XkbKeymap = try! XkbKeymap(context: try! XkbContext(), names: KeymapNames(layout: "us,ru", options: "grp:alt_shift_toggle"))

/// logind, simulated (the control target): who is active on seat0 and seat1.
let fuzzLogin = FakeLogin(ActiveSessions(available: true))

/// A small table with scopes, for listings.
let fuzzTable: CommandTable = try! CommandTable(commands: [
    Command(id: "s", title: "Save", keys: [try! ChordKey(parsing: "Ctrl+S")]),
    Command(id: "e", title: "Editor \"quoted\"", keys: [try! ChordKey(parsing: "Ctrl+E")], scope: "editor"),
])

/// Output lines are one line each and, for JSON, parse back; anything else is a bug
/// (a trap, which libFuzzer reports as a crash).
func checkOneLine(_ line: String) {
    if line.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) { fatalError("output line with a line break: \(line.debugDescription)") }
}

/// What a terminal could act on: C0, DEL, C1 (U+009B is CSI) and the line and paragraph separators.
func isTerminalControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
}

/// Text output: no control character at all (names are escaped).
func checkTextLine(_ line: String) {
    if line.unicodeScalars.contains(where: isTerminalControl) { fatalError("text line with a control character: \(line.debugDescription)") }
}

/// JSON output: one object per line, terminal-safe as it is (JSON escapes every control character).
func checkJSONLine(_ line: String) {
    checkOneLine(line)
    if line.unicodeScalars.contains(where: isTerminalControl) { fatalError("JSON line with a raw control character: \(line.debugDescription)") }
    guard case .object? = try? JSONValue.parse(line) else { fatalError("output line is not a JSON object: \(line.debugDescription)") }
}

func fuzzOne(_ target: FuzzTarget, _ bytes: UnsafeRawBufferPointer) {
    let data = Array(bytes)
    let text = String(decoding: data, as: UTF8.self)
    switch target {
    case .evemu:
        // Parse, then push every event through the pipeline (mapper, router, presence).
        guard let reader = try? EvemuReader(source: MemoryByteSource(data), path: "fuzz", maxLineLength: 4096) else { return }
        let table = try! CommandTable(commands: [Command(id: "s", title: "s", keys: [try! ChordKey(parsing: "Ctrl+S")]),
                                                 Command(id: "q", title: "q", keys: try! ChordKey.parseSequence("Ctrl+X Ctrl+C")),
                                                 Command(id: "h", title: "h", keys: [try! ChordKey(parsing: "Super+Slash")], action: .hud)])
        // The HUD on, with short delays: holds, toggles and prefixes go through it too.
        let pipeline = try! Pipeline(keymap: fuzzKeymap, table: table,
                                     options: .init(emitKeys: true, hud: HudSettings(delayMilliseconds: 100, sequenceDelayMilliseconds: 50)))
        var out: [PipelineEvent] = []
        pipeline.process(.attached(DeviceID(0), reader.description ?? .genericKeyboard(name: "fuzz"), time: .zero), into: &out)
        var count = 0
        while count < 100_000, let e = try? reader.next() {
            pipeline.process(.input(DeviceID(0), e), into: &out)
            for o in out {
                checkJSONLine(EventFormatter.json(o))
                checkTextLine(EventFormatter.text(o))
            }
            out.removeAll(keepingCapacity: true)
            count += 1
        }
        pipeline.process(.detached(DeviceID(0), time: .zero), into: &out)
        pipeline.finish(into: &out)
        for o in out {
            checkJSONLine(EventFormatter.json(o))
            checkTextLine(EventFormatter.text(o))
        }
    case .toml:
        guard let config = try? ConfigLoader.parse(text, path: "fuzz.toml") else { return }
        _ = try? config.geometryState()
        // Whatever the config's ids, titles and scopes hold, listings stay one safe line per item.
        for line in CommandListing(table: config.table, activeScopes: nil).text().split(separator: "\n") { checkTextLine(String(line)) }
        for line in CommandListing(table: config.table, activeScopes: nil).json().split(separator: "\n") { checkJSONLine(String(line)) }
        // And what the HUD and the bar get: one JSON line that decodes with the bar's types.
        let view = Discoverability.View(pending: nil, sources: [.init(table: config.table, scopes: config.table.scopes, textInput: true)])
        let bar = ControlEvent(time: 1, payload: .toolbar(ControlEvent.Toolbar(view)))
        checkJSONLine(bar.line)
        guard (try? ControlEvent.parse(bar.line)) == bar else { fatalError("toolbar \(bar.line.debugDescription) does not decode to itself") }
        if let summary = ConfigLoader.hudSummary(config) { checkTextLine(summary.escapingControlCharacters) }
    case .chord:
        // A chord prints as text that parses back to the same chord (listings show what a config may say).
        if let sequence = try? ChordKey.parseSequence(text) {
            let printed = sequence.map(\.description).joined(separator: " ")
            guard (try? ChordKey.parseSequence(printed)) == sequence else { fatalError("sequence \(text.debugDescription) prints as \(printed.debugDescription), which does not parse back") }
        }
        for word in text.split(separator: "\n") {
            guard let chord = try? ChordKey(parsing: String(word)) else { continue }
            guard (try? ChordKey(parsing: chord.description)) == chord else { fatalError("chord \(word.debugDescription) prints as \(chord.description.debugDescription), which does not parse back") }
        }
    case .scenario:
        _ = try? GeometryScenarioRunner.run(text: text)
    case .control:
        // Each line goes through the service's own session from one of three connections: an
        // operator (uid 0), the user at the keyboard (uid 1000, whose session is active on
        // seat0 in a simulated logind) and another user (uid 1001, none), as the daemon would
        // answer them, so users' `register`, `run_command`, claims and listings take the paths
        // of a machine with logind. A line `@SEAT UID` (or `@SEAT -`: nobody; `@-`: logind
        // gone) switches a seat as logind would. Every request it accepts must encode back to
        // itself, every reply must be one line that decodes with the client's types to the
        // same reply (the wire's round trip, both ends), a command runs only for an operator
        // or a uid active on a seat, and a session event only says what logind says.
        let login = fuzzLogin
        login.activate(1000, on: ActiveSessions.defaultSeat)
        login.activate(nil, on: "seat1")
        login.acknowledgeChange()
        let session = ControlSession()
        _ = session.sessionsChanged(login.read(), problem: nil)
        let view = ControlSession.View(hardwareKeyboard: true, presenceReason: "external", geometry: nil, systemTable: fuzzTable,
                                       allowKeyEvents: false, devices: { [] })
        let peers = [ControlSession.Peer(id: 0, uid: 0, trusted: true), ControlSession.Peer(id: 1, uid: 1000, trusted: false),
                     ControlSession.Peer(id: 2, uid: 1001, trusted: false)]
        for (n, line) in text.split(separator: "\n").enumerated() {
            if line.first == "@" {
                let words = line.dropFirst().split(separator: " ", maxSplits: 1)
                let next: ActiveSessions
                if words.first == "-" {
                    next = .unavailable
                } else if words.count == 2 {
                    login.activate(words[1] == "-" ? nil : UInt32(words[1]), on: String(words[0]))
                    login.acknowledgeChange()
                    next = login.read()
                } else {
                    continue
                }
                for effect in session.sessionsChanged(next, problem: next.available ? nil : "fuzz: logind gone") {
                    if case .sessionEvent(let uid, let seat, let active) = effect, active != (next.activeUID[seat] == uid) {
                        fatalError("session event uid \(uid) \(seat) active \(active), but logind says \(next.activeUID)")
                    }
                }
                continue
            }
            if let request = try? ControlRequest.parse(String(line)) {
                guard let again = try? ControlRequest.parse(request.line), again == request else {
                    fatalError("request \(line.debugDescription) encodes as \(request.line.debugDescription), which does not read back the same")
                }
            }
            let peer = peers[n % 3]
            let outcome = session.handle(String(line), from: peer, view: view)
            let reply = outcome.reply ?? ControlSession.reloaded(commands: fuzzTable.commands.count, refusal: nil)
            checkJSONLine(reply.line)
            guard let decoded = try? ControlReply.parse(reply.line), decoded == reply else {
                fatalError("reply \(reply.line.debugDescription) does not decode to itself")
            }
            for effect in outcome.effects {
                if case .runCommand(let command, _, let uid) = effect, !peer.trusted, !session.sessions.isActive(uid) || uid != peer.uid {
                    fatalError("run_command \(command.id) for uid \(uid) from uid \(peer.uid), not active on any seat")
                }
            }
            if n % 5 == 4 { _ = session.disconnected(n % 3) }
        }
    }
}

#if FUZZING
let activeTarget: FuzzTarget = {
    guard let name = getenv("KBD_FUZZ_TARGET").map({ String(cString: $0) }), let t = FuzzTarget(rawValue: name) else {
        print("set KBD_FUZZ_TARGET to one of \(FuzzTarget.allCases.map(\.rawValue))")
        exit(64)
    }
    return t
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEntry(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    fuzzOne(activeTarget, UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#else
@main
struct CorpusRunner {
    static func main() {
        let args = CommandLine.arguments
        guard args.count >= 2, let target = FuzzTarget(rawValue: args[1]) else {
            print("usage: kbd-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) FILE...")
            exit(64)
        }
        for path in args.dropFirst(2) {
            guard let bytes = try? readWholeFile(path: path, limit: 64 << 20) else {
                print("cannot read \(path)")
                exit(66)
            }
            bytes.withUnsafeBytes { fuzzOne(target, $0) }
        }
        print("\(args.count - 2) inputs ran")
    }
}
#endif
