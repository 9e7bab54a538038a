import KbdJSON
import KbdControl
import KbdCommands
import KbdDaemon
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 36 item 1 on the control socket: a table registered with `run_on_release: []` (what
/// the desktop portal's bindings register) gets its release as a second `command` event with
/// `"phase":"release"`; `register` refuses bad phase keys with a config's messages; the real
/// session agent runs `run` at the press and `run_on_release` at the release.
@Suite(.serialized)
struct PhasesDaemonTests {
    func exchange(_ h: DaemonHarness, _ c: SocketClient, _ request: String) -> [String] {
        c.send(request + "\n")
        h.pump()
        return c.receive().lines
    }

    @Test func aRegisteredRunOnReleaseGetsItsReleaseAsASecondEvent() throws {
        let h = try DaemonHarness()
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let app = try SocketClient(path: h.socketPath)
        #expect(exchange(h, app, #"{"request":"register","commands":[{"id":"ptt","title":"Talk","keys":"Ctrl+Alt+M","run_on_release":[]},{"id":"plain","keys":"Ctrl+Alt+P"}]}"#)
                == [#"{"reply":"register","ok":true,"commands":2,"shadowed":[]}"#])
        h.type(kbd, [("leftctrl", 1), ("leftalt", 1), ("m", 1)])
        let pressed = app.receive().lines
        #expect(pressed.count == 1 && pressed[0].hasSuffix(#""id":"ptt","title":"Talk","scope":"global","chord":"Ctrl+Alt+M","phase":"press"}"#), "\(pressed)")
        // Held: the kernel's repeats fire nothing (no repeat = true).
        h.type(kbd, [("m", 2), ("m", 2)])
        #expect(app.receive().lines.isEmpty)
        h.type(kbd, [("m", 0), ("leftalt", 0), ("leftctrl", 0)])
        let released = app.receive().lines
        #expect(released.count == 1 && released[0].hasSuffix(#""id":"ptt","title":"Talk","scope":"global","chord":"Ctrl+Alt+M","phase":"release"}"#), "\(released)")
        // Each line reads back with its phase.
        if let line = released.first, case .command(_, _, _, _, let phase) = try ControlEvent.parse(line).payload { #expect(phase == .release) }
        // A command registered without phases: one event, no phase field, as before.
        h.type(kbd, [("leftctrl", 1), ("leftalt", 1), ("p", 1), ("p", 0), ("leftalt", 0), ("leftctrl", 0)])
        let plain = app.receive().lines
        #expect(plain.count == 1 && plain[0].hasSuffix(#""id":"plain","title":"plain","scope":"global","chord":"Ctrl+Alt+P"}"#), "\(plain)")
    }

    @Test func registerRefusesBadPhaseKeysWithTheConfigsMessages() throws {
        let h = try DaemonHarness()
        let app = try SocketClient(path: h.socketPath)
        let bad = exchange(h, app, #"{"request":"register","commands":[{"id":"a","keys":"Ctrl+A","hold_ms":0},{"id":"b","keys":"Ctrl+B","on":"relase"},{"id":"c","keys":"Ctrl+C","tap_ms":100}]}"#)
        #expect(bad.count == 1)
        #expect(bad.first?.contains("commands[0] (a): hold_ms = 0: expected a whole number of milliseconds from 1 to 60000") == true, "\(bad)")
        #expect(bad.first?.contains("commands[1] (b): on: expected \\\"press\\\" (the default) or \\\"release\\\"") == true, "\(bad)")
        #expect(bad.first?.contains("(did you mean 'release'?)") == true)
        #expect(bad.first?.contains("commands[2] (c): tap_ms: keys = 'Ctrl+C' is not a modifier alone") == true)
        let typed = exchange(h, app, #"{"request":"register","commands":[{"id":"a","keys":"Ctrl+A","hold_ms":"long"}]}"#)
        #expect(typed == [#"{"reply":"error","ok":false,"error":"register: commands[0].hold_ms: expected a whole number of milliseconds"}"#])
        // The same keys as a request line write themselves and read back the same.
        let spec = ControlRequest.CommandSpec(id: "ptt", keys: "Super", phases: .init(tapMilliseconds: 300))
        let line = ControlRequest.register(commands: [spec], sequenceTimeoutMilliseconds: nil).line
        #expect(line.contains(#""tap_ms":300"#))
        #expect(try ControlRequest.parse(line) == .register(commands: [spec], sequenceTimeoutMilliseconds: nil))
    }

    @Test func theAgentRunsRunAtThePressAndRunOnReleaseAtTheRelease() throws {
        let dir = "/tmp/kbd-phases-agent-\(getpid())"
        mkdir(dir, 0o700)
        let socket = dir + "/socket", config = dir + "/config.toml", proof = dir + "/proof"
        defer {
            for f in [config, proof] { unlink(f) }
            rmdir(dir)
        }
        try AgentTests.write("""
            [osk]
            backend = "none"

            [[command]]
            id = "push-to-talk"
            keys = "Ctrl+Alt+M"
            run = ["/bin/sh", "-c", "echo unmute >> \(proof)"]
            run_on_release = ["/bin/sh", "-c", "echo mute >> \(proof)"]
            """, to: config)
        let h = try DaemonHarness(socketPath: socket)
        let agent = AgentTests.AgentProcess(config: config, socket: socket, environment: ["PATH": "/usr/bin:/bin", "HOME": dir])
        defer { _ = agent.stop() }
        #expect(h.pump(until: { h.daemon.commandTableOwners.count == 1 }))
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        h.type(kbd, [("leftctrl", 1), ("leftalt", 1), ("m", 1)])
        #expect(h.pump(until: { AgentTests.fileText(proof) == "unmute\n" }))
        h.type(kbd, [("m", 0), ("leftalt", 0), ("leftctrl", 0)])
        #expect(h.pump(until: { AgentTests.fileText(proof) == "unmute\nmute\n" }), "\(agent.output)")
        #expect(agent.output.contains("command push-to-talk (release)"))
    }
}
