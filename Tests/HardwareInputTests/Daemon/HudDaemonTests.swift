import KbdPipeline
import KbdJSON
import KbdProcess
import KbdDaemon
import KbdTestSupport
import KbdCore
import KbdCommands
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 28 in the daemon (the real epoll loop and socket, fake devices): `hud` and
/// `toolbar` events reach operators and the user whose session is active, each with its own
/// table; `run_command` runs a system command through the runner and sends a user's command
/// to the agent that registered it; nobody else gets either.
@Suite(.serialized)
struct HudDaemonTests {
    static let config = DaemonHarness.config + """


        [[command]]
        id = "shortcuts"
        title = "Shortcuts"
        keys = "Super+Slash"
        action = "hud"
        group = "Help"
        """

    func exchange(_ h: DaemonHarness, _ c: SocketClient, _ request: String) -> [String] {
        c.send(request + "\n")
        h.pump()
        return c.receive().lines
    }

    /// Super held alone past the delay, then released.
    func holdSuper(_ h: DaemonHarness, _ kbd: FakeDevice) {
        h.type(kbd, [("leftmeta", 1)])
        h.clock.advance(ms: 800)
        h.pump()
        h.type(kbd, [("leftmeta", 0)])
    }

    static func events(_ lines: [String], _ kind: String) -> [String] { lines.filter { $0.hasPrefix(#"{"event":"\#(kind)""#) } }

    @Test func aUserWithoutTheActiveSessionGetsNoHudNoToolbarAndCannotRunCommands() throws {
        let h = try DaemonHarness(config: Self.config, userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        h.login.activate(4242)  // someone else is at the keyboard
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let mallory = try SocketClient(path: h.socketPath)
        let reply = exchange(h, mallory, #"{"request":"subscribe","events":["hud","toolbar"]}"#)
        #expect(reply.first?.hasPrefix(#"{"reply":"subscribe","ok":true"#) == true, "\(reply)")
        #expect(Self.events(reply, "toolbar").isEmpty)
        holdSuper(h, kbd)
        h.type(kbd, [("leftmeta", 1), ("slash", 1), ("slash", 0), ("leftmeta", 0)])
        #expect(h.events.contains { $0.kind == "hud" })  // the HUD did show, for the person at the keyboard
        var seen = mallory.receive().lines
        #expect(Self.events(seen, "hud").isEmpty && Self.events(seen, "toolbar").isEmpty, "\(seen)")
        let refused = exchange(h, mallory, #"{"request":"run_command","id":"copy","table":"system"}"#)
        #expect(refused.first?.hasPrefix(#"{"reply":"run_command","ok":false,"error":"run_command: uid \#(geteuid()) does not own the active session"#) == true, "\(refused)")
        #expect(!h.commandIDs.contains("copy"))

        // Its session becomes active: the toolbar comes at once, the HUD with the next hold.
        h.login.activate(geteuid())
        h.pump()
        seen = mallory.receive().lines
        #expect(Self.events(seen, "toolbar").count == 1, "\(seen)")
        // The chord's HUD shown before is hidden on the next toggle; a hold shows it anew.
        h.type(kbd, [("leftmeta", 1), ("slash", 1), ("slash", 0), ("leftmeta", 0)])
        holdSuper(h, kbd)
        seen = Self.events(mallory.receive().lines, "hud")
        #expect(seen.count == 3, "\(seen)")
        #expect(seen.first?.contains(#""show":false,"trigger":"chord""#) == true)
        #expect(seen.dropFirst().first?.contains(#""show":true,"trigger":"hold""#) == true)
        #expect(seen.last?.contains(#""show":false,"trigger":"hold""#) == true)
        let ok = exchange(h, mallory, #"{"request":"run_command","id":"copy","table":"system"}"#)
        #expect(ok.first == #"{"reply":"run_command","ok":true}"#, "\(ok)")
        #expect(h.commandIDs.contains("copy"))
        #expect(h.pump(until: { h.logs.all.contains { $0.hasSuffix(": copy-marker") } }))
    }

    /// Issue 33 item 5: a user active on seat1 watches only seat1's keyboards: Super held on
    /// seat0's keyboard (another user's seat) shows the HUD to nobody of ours; held on
    /// seat1's, it shows to us. The toolbar lists seat1's chain (its user's scopes).
    @Test func aUserActiveOnSeat1WatchesOnlySeat1sKeyboards() throws {
        let h = try DaemonHarness(config: Self.config, userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        h.login.activate(4242, on: "seat0")
        h.login.activate(geteuid(), on: "seat1")
        let seat0 = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        var onSeat1 = try Descriptions.lenovo
        onSeat1.udevSeat = "seat1"
        let seat1 = h.source.plug("/dev/input/event2", onSeat1)
        h.pump()
        let me = try SocketClient(path: h.socketPath)
        let reply = exchange(h, me, #"{"request":"subscribe","events":["hud","toolbar"]}"#)
        #expect(reply.first?.hasPrefix(#"{"reply":"subscribe","ok":true"#) == true, "\(reply)")
        holdSuper(h, seat0)
        h.pump()
        #expect(h.events.contains { $0.kind == "hud" })  // the HUD showed, for seat0's user
        #expect(Self.events(me.receive().lines, "hud").isEmpty)
        holdSuper(h, seat1)
        h.pump()
        let seen = Self.events(me.receive().lines, "hud")
        #expect(seen.first?.contains(#""show":true,"trigger":"hold""#) == true, "\(seen)")
    }

    @Test func theActiveUsersToolbarHasItsOwnTableAndTheSystemsAndFollowsChanges() throws {
        let h = try DaemonHarness(config: Self.config, userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        _ = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        var agent: SocketClient? = try SocketClient(path: h.socketPath)
        let registered = exchange(h, agent!, #"{"request":"register","commands":[{"id":"term","title":"Terminal","keys":"Ctrl+Alt+T","group":"Apps","discoverability_title":"Open a Terminal"}]}"#)
        #expect(registered.first?.hasPrefix(#"{"reply":"register","ok":true"#) == true, "\(registered)")
        let bar = try SocketClient(path: h.socketPath)
        let subscribed = exchange(h, bar, #"{"request":"subscribe","events":["toolbar"]}"#)
        #expect(subscribed.first?.hasPrefix(#"{"reply":"subscribe","ok":true"#) == true)
        let first = try #require(Self.events(subscribed, "toolbar").first)
        #expect(first.contains(#""scopes":["global"],"text_input":false,"groups":[{"title":"Help","commands":[{"table":"system","scope":"global","id":"shortcuts""#), "\(first)")
        #expect(first.contains(#"{"title":"Apps","commands":[{"table":"user","scope":"global","id":"term","title":"Terminal","discoverability_title":"Open a Terminal","chord":"Ctrl+Alt+T","shadowed":false,"text_input_filtered":false}]}"#), "\(first)")
        #expect(first.contains(#""id":"copy""#))
        // Nothing changed: nothing sent.
        #expect(exchange(h, bar, #"{"request":"ping"}"#) == [#"{"reply":"ping","ok":true}"#])
        // The agent's focus and text input change what the bar shows.
        _ = exchange(h, agent!, #"{"request":"set_scopes","scopes":["editor"]}"#)
        var next = Self.events(bar.receive().lines, "toolbar")
        #expect(next.count == 1 && next[0].contains(#""scopes":["editor","global"]"#), "\(next)")
        #expect(next.first?.contains(#""id":"save","title":"save","discoverability_title":"save","chord":"Ctrl+S","shadowed":true"#) == true, "\(next)")
        _ = exchange(h, agent!, #"{"request":"set_text_input","active":true}"#)
        next = Self.events(bar.receive().lines, "toolbar")
        #expect(next.count == 1 && next[0].contains(#""id":"letter-q","title":"letter-q","discoverability_title":"letter-q","chord":"Q","shadowed":false,"text_input_filtered":true"#), "\(next)")
        // The agent leaves: its table leaves the bar.
        agent = nil
        #expect(h.pumpUntilClients(1))  // the bar stays
        next = Self.events(bar.receive().lines, "toolbar")
        #expect(next.count == 1 && !next[0].contains(#""table":"user""#), "\(next)")
    }

    @Test func runCommandOfAUserCommandGoesToTheAgentThatRegisteredIt() throws {
        let h = try DaemonHarness(config: Self.config, userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        h.pump()
        let agent = try SocketClient(path: h.socketPath)
        _ = exchange(h, agent, #"{"request":"register","commands":[{"id":"term","title":"Terminal","keys":"Ctrl+Alt+T"}]}"#)
        let bar = try SocketClient(path: h.socketPath)
        #expect(exchange(h, bar, #"{"request":"run_command","id":"term","table":"user"}"#) == [#"{"reply":"run_command","ok":true}"#])
        let got = agent.receive().lines
        #expect(got.count == 1 && got[0].hasPrefix(#"{"event":"command","time":"#) && got[0].hasSuffix(#""id":"term","title":"Terminal","scope":"global","chord":"Ctrl+Alt+T"}"#), "\(got)")
        #expect(bar.receive().lines.isEmpty)
        // A misspelt id: refused with the nearest.
        let wrong = exchange(h, bar, #"{"request":"run_command","id":"trem","table":"user"}"#)
        #expect(wrong == [#"{"reply":"run_command","ok":false,"error":"run_command: no command \"trem\" in the table uid \#(geteuid()) registered (did you mean 'term'?)"}"#], "\(wrong)")
        // A user's client runs a system command as the person at the keyboard.
        #expect(exchange(h, bar, #"{"request":"run_command","id":"save","table":"system"}"#) == [#"{"reply":"run_command","ok":true}"#])
        #expect(h.commandIDs == ["term", "save"])
        // The log says what ran and for whom, as for a typed command.
        #expect(h.logs.all.contains { $0.contains("command save \"save\" (Ctrl+S) on \"run_command (uid \(geteuid()))\"") })
    }

    /// The bar's tap on a command with run_on_release (an app's portal binding, push-to-talk)
    /// is a press and a release: the agent gets both phases, the service's runner both programs.
    /// Before: the press only, so the app heard Activated and never Deactivated.
    @Test func runCommandOfARunOnReleaseCommandGivesThePressAndTheRelease() throws {
        let h = try DaemonHarness(config: Self.config + """

            [[command]]
            id = "talk"
            keys = "Ctrl+Alt+K"
            run_on_release = []
            """, userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        h.pump()
        let agent = try SocketClient(path: h.socketPath)
        _ = exchange(h, agent, #"{"request":"register","commands":[{"id":"ptt","title":"Talk","keys":"Ctrl+Alt+M","run_on_release":[]}]}"#)
        let bar = try SocketClient(path: h.socketPath)
        #expect(exchange(h, bar, #"{"request":"run_command","id":"ptt","table":"user"}"#) == [#"{"reply":"run_command","ok":true}"#])
        let got = agent.receive().lines
        #expect(got.count == 2 && got[0].hasSuffix(#""chord":"Ctrl+Alt+M","phase":"press"}"#) && got[1].hasSuffix(#""chord":"Ctrl+Alt+M","phase":"release"}"#), "\(got)")
        #expect(exchange(h, bar, #"{"request":"run_command","id":"talk","table":"system"}"#) == [#"{"reply":"run_command","ok":true}"#])
        let phases = h.events.compactMap { if case .command(_, _, let c, _, let p) = $0, c.id == "talk" { p } else { nil } }
        #expect(phases == [.press, .release])
    }

    @Test func anOperatorGetsTheHudAndRunCommandTogglesIt() throws {
        let h = try DaemonHarness(config: Self.config)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let watch = try SocketClient(path: h.socketPath)
        _ = exchange(h, watch, #"{"request":"subscribe","events":["hud"]}"#)
        holdSuper(h, kbd)
        var hud = Self.events(watch.receive().lines, "hud")
        #expect(hud.count == 2, "\(hud)")
        #expect(hud.first?.contains(#""show":true,"trigger":"hold","pending":null,"scopes":["global"],"text_input":false,"groups":[{"title":"Help""#) == true, "\(hud)")
        // The reply first, then the HUD it toggled.
        let lines = exchange(h, watch, #"{"request":"run_command","id":"shortcuts","table":"system"}"#)
        #expect(lines.first == #"{"reply":"run_command","ok":true}"#)
        hud = Self.events(lines, "hud")
        #expect(hud.count == 1 && hud[0].contains(#""show":true,"trigger":"chord""#), "\(lines)")
        // A HUD command runs nothing and is no command event.
        #expect(!h.commandIDs.contains("shortcuts"))
        // Shown, it follows the focus: new scopes, a new show; the same scopes again, nothing.
        var moved = Self.events(exchange(h, watch, #"{"request":"set_scopes","scopes":["editor"]}"#), "hud")
        #expect(moved.count == 1 && moved[0].contains(#""show":true,"trigger":"chord","pending":null,"scopes":["editor","global"]"#), "\(moved)")
        #expect(moved.first?.contains(#""id":"save","title":"save","discoverability_title":"save","chord":"Ctrl+S","shadowed":true"#) == true)
        moved = Self.events(exchange(h, watch, #"{"request":"set_scopes","scopes":["editor"]}"#), "hud")
        #expect(moved.isEmpty, "\(moved)")
        hud = Self.events(exchange(h, watch, #"{"request":"run_command","id":"shortcuts","table":"system"}"#), "hud")
        #expect(hud.count == 1 && hud[0].hasSuffix(#","show":false,"trigger":"chord"}"#), "\(hud)")
        // The daemon's timer ran only while a hold was pending: idle, no deadline.
        #expect(h.daemon.pipelineDeadline == nil)
    }
}
