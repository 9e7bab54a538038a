import KbdCore
import KbdSystem
import KbdKeymap
import KbdCommands
import KbdConfig
import KbdPipeline
import Testing

/// Issue 35: golden text tests of the chord router and the HUD state machine through the
/// pipeline (keyd's `t/*.t`): each `Fixtures/golden/*.t` holds a config, the input, and the
/// events that must come out, in order.
///
///     % [[command]]                a config line (TOML), after "% "
///     +leftctrl 0                  press KEY_LEFTCTRL at 0 ms (-: release, *: repeat)
///     advance 1600                 the loop's timers at 1,600 ms (Pipeline.advance)
///     => command save 10           an expected event: command ID, chord CHORD,
///                                  hud show TRIGGER [PENDING], hud hide TRIGGER; then ms
///
/// Every `chord`, `command` and `hud` event is compared (keys are not: the keymap's tests
/// cover them); the input ends with `Pipeline.finish`.
@Suite struct GoldenTests {
    static var directory: String { Fixtures.root + "/golden" }

    static var files: [String] { Directory.names(directory).filter { $0.hasSuffix(".t") }.sorted() }

    struct Script {
        var config = ""
        var steps: [(line: Int, text: String)] = []
        var expected: [String] = []
    }

    static func parse(_ text: String) -> Script {
        var script = Script()
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            if line.hasPrefix("% ") || line == "%" { script.config += String(line.dropFirst(2)) + "\n" }
            else if line.hasPrefix("=> ") { script.expected.append(String(line.dropFirst(3))) }
            else if line.hasPrefix("#") || line.allSatisfy({ $0 == " " }) { continue }
            else { script.steps.append((number + 1, line)) }
        }
        return script
    }

    /// The events a script's input makes, one line each.
    static func run(_ script: Script, file: String) throws -> [String] {
        let config = try ConfigLoader.parse(script.config, path: file)
        let pipeline = try Pipeline(keymap: try Keymaps.make("us"), table: config.table, options: .init(hud: config.hud))
        pipeline.hudDrawn = true
        var out: [PipelineEvent] = []
        let id = DeviceID(1)
        pipeline.process(.attached(id, .genericKeyboard(name: "k"), time: .zero), into: &out)
        for (number, step) in script.steps {
            let words = step.split(separator: " ")
            guard words.count == 2, let ms = Int64(words[1]) else { throw GoldenError("\(file):\(number): cannot read '\(step)'") }
            let time = EventTime(microseconds: ms * 1000)
            if words[0] == "advance" {
                pipeline.advance(to: time, into: &out)
                continue
            }
            let values: [Character: Int32] = ["+": 1, "-": 0, "*": 2]
            guard let sign = words[0].first, let value = values[sign],
                  let code = EventCodeNames.keyCode(named: "KEY_" + words[0].dropFirst().uppercased()) else {
                throw GoldenError("\(file):\(number): unknown key '\(words[0])'")
            }
            pipeline.process(.input(id, InputEvent(time: time, type: EventType.key, code: code, value: value)), into: &out)
        }
        pipeline.finish(into: &out)
        return out.compactMap(describe)
    }

    static func describe(_ event: PipelineEvent) -> String? {
        func ms(_ t: EventTime) -> String { "\(t.microseconds / 1000)" }
        switch event {
        case .chord(let t, _, let chord): return "chord \(chord) \(ms(t))"
        case .command(let t, _, let command, _, _): return "command \(command.id) \(ms(t))"
        case .hud(let t, let trigger, let view?):
            return "hud show \(trigger.rawValue)\(view.pending.map { " " + $0.text } ?? "") \(ms(t))"
        case .hud(let t, let trigger, nil): return "hud hide \(trigger.rawValue) \(ms(t))"
        default: return nil
        }
    }

    struct GoldenError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test func thereAreGoldenFiles() {
        #expect(Self.files.count >= 5)
    }

    @Test(arguments: files)
    func golden(_ name: String) throws {
        let text = String(decoding: try readWholeFile(path: Self.directory + "/" + name, limit: 1 << 20), as: UTF8.self)
        let script = Self.parse(text)
        let actual = try Self.run(script, file: name)
        #expect(actual == script.expected, "\(name): got\n\(actual.map { "=> " + $0 }.joined(separator: "\n"))")
    }
}
