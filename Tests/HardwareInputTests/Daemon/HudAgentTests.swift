import KbdJSON
import KbdDaemon
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 28: the session agent registers its config's groups, HUD titles and HUD commands,
/// so the bar's toolbar (and the HUD) show the user's commands as the user wrote them, and a
/// bar's run_command of one reaches the agent, which runs it.
@Suite(.serialized)
struct HudAgentTests {
    @Test func theAgentsGroupsReachTheToolbarAndRunCommandRunsItsCommand() throws {
        let dir = "/tmp/kbd-hud-agent-\(getpid())"
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
            id = "terminal"
            title = "Terminal"
            discoverability_title = "Open a Terminal"
            group = "Apps"
            keys = "Ctrl+Alt+T"
            run = ["/bin/sh", "-c", "echo ran > \(proof)"]

            [[command]]
            id = "help"
            title = "Shortcuts"
            keys = "Super+H"
            action = "hud"
            """, to: config)
        let h = try DaemonHarness(socketPath: socket)
        let agent = AgentTests.AgentProcess(config: config, socket: socket, environment: ["PATH": "/usr/bin:/bin", "HOME": dir])
        defer { _ = agent.stop() }
        #expect(h.pump(until: { h.daemon.commandTableOwners.count == 1 }))
        let bar = try SocketClient(path: socket)
        bar.send(#"{"request":"subscribe","events":["toolbar","hud"]}"# + "\n")
        h.pump()
        let lines = bar.receive().lines
        let toolbar = try #require(lines.first { $0.hasPrefix(#"{"event":"toolbar""#) }, "\(lines)")
        #expect(toolbar.contains(#"{"title":"Apps","commands":[{"table":"user","scope":"global","id":"terminal","title":"Terminal","discoverability_title":"Open a Terminal","chord":"Ctrl+Alt+T","shadowed":false,"text_input_filtered":false}]}"#), "\(toolbar)")
        // The bar's button: the agent runs the user's command.
        bar.send(#"{"request":"run_command","id":"terminal","table":"user"}"# + "\n")
        h.pump()
        #expect(bar.receive().lines.contains(#"{"reply":"run_command","ok":true}"#))
        #expect(h.pump(until: { AgentTests.fileText(proof) == "ran\n" }))
        // The user's HUD command toggles the HUD for the bar, and the agent runs nothing for it.
        bar.send(#"{"request":"run_command","id":"help","table":"user"}"# + "\n")
        h.pump()
        let hud = bar.receive().lines
        #expect(hud.contains { $0.hasPrefix(#"{"event":"hud""#) && $0.contains(#""show":true,"trigger":"chord""#) }, "\(hud)")
        #expect(!agent.output.contains("help"))
    }
}
