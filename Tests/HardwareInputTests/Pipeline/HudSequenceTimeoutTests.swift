import KbdCore
import KbdKeymap
import KbdCommands
import KbdConfig
import KbdPipeline
import KbdTestSupport
import Testing

/// Issue 33 item 9: a shown prefix waits longer only when the user asked for it
/// (`[hud] extend_sequence_timeout`) and a subscriber draws the HUD (`hudDrawn`, set by the
/// service from its `hud` subscribers); otherwise the sequence ends at `sequence_timeout_ms`.
@Suite struct HudSequenceTimeoutTests {
    static let config = """
        [settings]
        sequence_timeout_ms = 1000

        [[command]]
        id = "save-as"
        keys = "Ctrl+X Ctrl+S"

        [[command]]
        id = "save"
        keys = "Ctrl+S"

        """

    /// Ctrl+X at 0 ms, Ctrl+S at 1,500 ms: which command ran.
    static func fired(extend: Bool, drawn: Bool) throws -> [String] {
        let keymap = try Keymaps.make("us")
        let table = try ConfigLoader.parse(config, path: "t.toml").table
        let hud = HudSettings(sequenceDelayMilliseconds: 1000, extendSequenceTimeout: extend)
        let pipeline = try Pipeline(keymap: keymap, table: table, options: .init(hud: hud))
        pipeline.hudDrawn = drawn
        var out: [PipelineEvent] = []
        let id = DeviceID(1)
        pipeline.process(.attached(id, .genericKeyboard(name: "k"), time: .zero), into: &out)
        func key(_ ms: Int, _ code: UInt16, _ value: Int32) {
            pipeline.process(.input(id, InputEvent(time: EventTime(microseconds: Int64(ms) * 1000), type: EventType.key, code: code, value: value)), into: &out)
        }
        let ctrl: UInt16 = 29, x: UInt16 = 45, s: UInt16 = 31
        key(0, ctrl, 1); key(10, x, 1); key(20, x, 0); key(30, ctrl, 0)
        key(1500, ctrl, 1); key(1510, s, 1); key(1520, s, 0); key(1530, ctrl, 0)
        pipeline.finish(into: &out)
        return out.compactMap { if case .command(_, _, let command, _, _) = $0 { command.id } else { nil } }
    }

    @Test func theTimeoutIsTheUsersUnlessAskedAndDrawn() throws {
        #expect(try Self.fired(extend: false, drawn: false) == ["save"])
        #expect(try Self.fired(extend: false, drawn: true) == ["save"])
        #expect(try Self.fired(extend: true, drawn: false) == ["save"])
        // Asked for, and the bar draws it: the continuations showed at 1,010 ms and the
        // sequence waited another second from then.
        #expect(try Self.fired(extend: true, drawn: true) == ["save-as"])
    }
}
