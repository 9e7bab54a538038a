import KbdJSON
import KbdTOML
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdCommands
import KbdPipeline
import KbdControl
import KbdProcess
import KbdDaemon
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A password typed on a keyboard must not come out of any default output path:
/// log lines at every level, socket events of every kind a client may get by
/// default, replay's default output in both formats.
@Suite(.serialized)
struct PrivacyTests {
    static let password = "Tr0ub4dor&3xyzzy"

    /// Kernel events that type `text` on a US keyboard (Shift where needed).
    static func typing(_ text: String, from start: EventTime) -> [InputEvent] {
        let shifted: [Character: String] = ["&": "7", "!": "1", "@": "2"]
        var t = start
        var out: [InputEvent] = []
        func key(_ name: String, _ v: Int32) {
            t = t.adding(milliseconds: 30)
            out.append(InputEvent(time: t, type: EventType.key, code: EventCodeNames.keyCode(named: "KEY_" + name)!, value: v))
            out.append(InputEvent(time: t, type: EventType.syn, code: SynCode.report, value: 0))
        }
        for ch in text {
            var name = String(ch).uppercased()
            var shift = ch.isUppercase
            if let base = shifted[ch] { name = base; shift = true }
            if shift { key("LEFTSHIFT", 1) }
            key(name, 1)
            key(name, 0)
            if shift { key("LEFTSHIFT", 0) }
        }
        return out
    }

    static func leaks(_ text: String) -> [String] {
        var found: [String] = []
        for needle in [password, "Tr0ub", "ub4d", "xyzzy", "KEY_T", "KEY_X", "keysym", "\"utf8\"", "ampersand"] where text.contains(needle) {
            found.append(needle)
        }
        return found
    }

    @Test func thePasswordNeverReachesLogsOrSocketEvents() throws {
        let h = try DaemonHarness()
        let client = try SocketClient(path: h.socketPath)
        client.send(#"{"request":"subscribe","events":["attach","detach","presence","chord","command","geometry","dropped"]}"# + "\n")
        h.pump()
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        kbd.raw(Self.typing(Self.password, from: h.clock.now))
        h.pump()
        // A drop in the middle of typing, and the device vanishing right after.
        kbd.raw(Self.typing("ab", from: h.clock.now.adding(milliseconds: 5000)))
        kbd.dropEvents(keysDown: ["leftshift"])
        h.pump()
        kbd.vanish()
        h.pump()
        let socketText = client.receive().lines.joined(separator: "\n")
        let logText = h.logs.all.joined(separator: "\n")  // every level, trace included
        #expect(!socketText.isEmpty)
        #expect(Self.leaks(socketText).isEmpty, "socket: \(Self.leaks(socketText))")
        #expect(Self.leaks(logText).isEmpty, "log: \(Self.leaks(logText))")
    }

    /// Issue 25 item 4 (README "Private by default", docs "Trust"): a local user outside the
    /// service's group registers every letter and digit with and without Shift (command ids
    /// that name the keys); while another user's session is active it gets nothing, and the
    /// log holds neither the password nor the ids; when its own session is active its own
    /// typing reaches only its own agent, and the log still names no id or chord.
    @Test func thePasswordNeverReachesAnotherUsersTableOrTheLog() throws {
        let h = try DaemonHarness(userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        h.login.activate(4242)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let mallory = try SocketClient(path: h.socketPath)
        let keys = "abcdefghijklmnopqrstuvwxyz0123456789".map(String.init)
        let commands = keys.flatMap { k in
            [#"{"id":"key-\#(k)","keys":"\#(k)","priority_over_text_input":true}"#, #"{"id":"key-Shift-\#(k)","keys":"Shift+\#(k)","priority_over_text_input":true}"#]
        }
        mallory.send(#"{"request":"register","commands":["# + commands.joined(separator: ",") + "]}\n")
        mallory.send(#"{"request":"set_text_input","active":false}"# + "\n")
        h.pump()
        #expect(mallory.receive().lines.allSatisfy { $0.contains(#""ok":true"#) })
        kbd.raw(Self.typing(Self.password, from: h.clock.now))
        h.pump()
        #expect(mallory.receive().lines.isEmpty)
        h.login.activate(geteuid())
        h.pump()
        _ = mallory.receive()
        kbd.raw(Self.typing("xyzzy", from: h.clock.now.adding(milliseconds: 5000)))
        h.pump()
        #expect(mallory.receive().lines.filter { $0.contains(#""event":"command""#) }.count == 5)
        let logText = h.logs.all.joined(separator: "\n")
        #expect(Self.leaks(logText).isEmpty, "log: \(Self.leaks(logText))")
        #expect(!logText.contains("key-"))
    }

    @Test func replayDefaultOutputCarriesNoTypedText() throws {
        let keymap = try Keymaps.make("us")
        for format in EventFormatter.Format.allCases {
            let pipeline = try Pipeline(keymap: keymap, table: try CommandTable(commands: []))
            var events: [PipelineEvent] = []
            pipeline.process(.attached(DeviceID(0), .genericKeyboard(name: "kbd"), time: .zero), into: &events)
            for e in Self.typing(Self.password, from: .zero) { pipeline.process(.input(DeviceID(0), e), into: &events) }
            pipeline.process(.detached(DeviceID(0), time: EventTime(seconds: 60, microseconds: 0)), into: &events)
            pipeline.finish(into: &events)
            let text = events.map { EventFormatter.line($0, format: format) }.joined(separator: "\n")
            #expect(Self.leaks(text).isEmpty, "\(format): \(Self.leaks(text))")
            #expect(!events.contains { if case .key = $0 { return true } else { return false } })
        }
    }

    @Test func keyEventsDoCarryTheTextWhenExplicitlyAsked() throws {
        // The other side of the rule: --print keys (emitKeys) is the explicit way, and it works.
        let pipeline = try Pipeline(keymap: try Keymaps.make("us"), table: try CommandTable(commands: []), options: .init(emitKeys: true))
        var events: [PipelineEvent] = []
        pipeline.process(.attached(DeviceID(0), .genericKeyboard(name: "kbd"), time: .zero), into: &events)
        for e in Self.typing(Self.password, from: .zero) { pipeline.process(.input(DeviceID(0), e), into: &events) }
        let typed = events.compactMap { if case .key(let k, _) = $0, k.state == .press { return k.utf8 } else { return nil } }.joined()
        #expect(typed == Self.password)
    }
}
