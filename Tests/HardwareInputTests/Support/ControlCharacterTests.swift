import KbdJSON
import KbdTOML
import KbdSystem
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdRecording
import KbdEvdev
import KbdCommands
import KbdPipeline
import KbdConfig
import KbdControl
import Testing

/// Text a device, a file or a client chose never starts a new line or drives a terminal.
struct ControlCharacterTests {
    @Test(arguments: [
        ("plain", "plain"),
        ("Clavier français é ß ü 日本", "Clavier français é ß ü 日本"),
        ("a\nb", "a\\nb"),
        ("a\r\nb", "a\\r\\nb"),
        ("tab\there", "tab\\there"),
        ("\u{1B}[2Jcleared", "\\u{1B}[2Jcleared"),
        ("nul\u{0}byte", "nul\\u{0}byte"),
        ("del\u{7F}", "del\\u{7F}"),
        ("c1\u{85}next-line", "c1\\u{85}next-line"),
        ("ls\u{2028}ps\u{2029}", "ls\\u{2028}ps\\u{2029}"),
    ])
    func escapes(_ input: String, _ expected: String) {
        #expect(input.escapingControlCharacters == expected)
    }

    /// A recording of a real keyboard whose name was made hostile (an evemu `N:`
    /// line keeps everything but the line end): every text line of the replay
    /// stays one line without control characters, and the JSON carries the name exactly.
    @Test func aHostileDeviceNameStaysOnItsLineInTextAndJSON() throws {
        let path = Fixtures.recording("evemu-devices--lenovo-tp-compact-usb-kbd.keyboard.evemu")
        let original = String(decoding: try readWholeFile(path: path, limit: 1 << 22), as: UTF8.self)
        let hostile = "Evil\u{1B}[2J\rINFO command save ran\u{85}"
        let text = original.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("N: ") ? "N: " + hostile : String($0) }.joined(separator: "\n")
        let reader = try EvemuReader(source: MemoryByteSource(Array(text.utf8)), path: "hostile.evemu")
        #expect(reader.description?.name == hostile)
        let table = try ConfigLoader.parse("[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n", path: "c.toml").table
        let pipeline = try Pipeline(keymap: try Keymaps.make("us"), table: table, options: .init(emitKeys: true))
        var out: [PipelineEvent] = []
        pipeline.process(.attached(DeviceID(0), reader.description!, time: .zero), into: &out)
        while let e = try reader.next() { pipeline.process(.input(DeviceID(0), e), into: &out) }
        pipeline.process(.detached(DeviceID(0), time: .zero), into: &out)
        pipeline.finish(into: &out)
        #expect(out.contains { if case .key = $0 { return true } else { return false } })
        var sawName = 0
        for event in out {
            let line = EventFormatter.text(event)
            #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(line.debugDescription)")
            if line.contains("Evil\\u{1B}[2J\\rINFO command save ran\\u{85}") { sawName += 1 }
            let json = EventFormatter.json(event)
            #expect(!json.utf8.contains(10))
            guard case .object(let o) = try JSONValue.parse(json) else { Issue.record("not an object: \(json)"); continue }
            if case .string(let device)? = o["device"] { #expect(device == hostile) }
        }
        #expect(sawName >= 2)  // attach and detach at least
    }

    /// A config whose ids, titles and scopes hold line breaks and terminal escapes (issue 17,
    /// D17): listings and replay text keep one line per item and never carry the escape.
    static let hostileConfig = """
        [[command]]
        id = "evil\\u001B[2J"
        title = "Evil\\n\\u001B[2Jcleared\\u009B31m"
        keys = "Ctrl+S"
        scope = "s\\u0085x"

        [[command]]
        id = "plain"
        title = "Plain \\u2028 title"
        keys = "Ctrl+P"
        """

    static func isTerminalSafe(_ line: some StringProtocol) -> Bool {
        !line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 }
    }

    @Test(arguments: [nil, ["s\u{85}x"]])
    func listingsKeepOneLinePerCommand(_ scopes: [String]?) throws {
        let table = try ConfigLoader.parse(Self.hostileConfig, path: "evil.toml").table
        #expect(table.commands[0].title == "Evil\n\u{1B}[2Jcleared\u{9B}31m")
        let text = CommandListing(table: table, activeScopes: scopes).text()
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 4)  // two scopes, one command each
        for line in lines { #expect(Self.isTerminalSafe(line), "\(line.debugDescription)") }
        #expect(text.contains("  Evil\\n\\u{1B}[2Jcleared\\u{9B}31m  Ctrl+S\n"))
        #expect(text.hasPrefix("s\\u{85}x\n"))
    }

    @Test func replayTextOfACommandIsOneSafeLine() throws {
        let table = try ConfigLoader.parse(Self.hostileConfig, path: "evil.toml").table
        let event = PipelineEvent.command(time: .zero, device: "kbd", command: table.commands[0], chord: "Ctrl+S")
        let line = EventFormatter.text(event)
        #expect(Self.isTerminalSafe(line), "\(line.debugDescription)")
        #expect(line.hasSuffix("evil\\u{1B}[2J \"Evil\\n\\u{1B}[2Jcleared\\u{9B}31m\" Ctrl+S [s\\u{85}x]"))
    }

    /// JSON output escapes DEL, the C1 controls and the line and paragraph separators too,
    /// and stays JSON that parses back to the same text.
    @Test(arguments: [
        ("\u{9B}2J\u{2028}\u{7F}", #""\u009b2J\u2028\u007f""#),
        ("\u{85}", #""\u0085""#), ("\u{80}\u{9F}", #""\u0080\u009f""#), ("\u{2029}", #""\u2029""#),
        ("é\u{7F}", #""é\u007f""#), ("\u{1B}[0m", #""\u001b[0m""#),
        // Neighbours that are text: copied as they are.
        ("\u{A0}\u{2027}\u{202A}€\u{20A8}\u{2080}", "\"\u{A0}\u{2027}\u{202A}€\u{20A8}\u{2080}\""),
    ])
    func jsonEscapesEveryControlCharacter(_ text: String, _ expected: String) throws {
        let json = JSONValue.string(text).serialized()
        #expect(json == expected)
        #expect(Self.isTerminalSafe(json))
        #expect(try JSONValue.parse(json) == .string(text))
    }
}

