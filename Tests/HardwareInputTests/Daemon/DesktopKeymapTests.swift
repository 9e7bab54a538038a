import KbdJSON
import KbdProcess
import KbdDaemon
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 26, items 3 and 4 (the service's side of the agent's reports): a session agent's
/// `set_keymap` maps every keyboard's keys with the desktop's keymap and active layout, for
/// the system table and the users' tables alike, until it is withdrawn or its client
/// leaves; `set_sticky_keys` turns sticky keys on or off over the config's default.
@Suite(.serialized)
struct DesktopKeymapTests {
    static let config = "[keymap]\nlayout = \"us\"\n[[command]]\nid = \"undo\"\nkeys = \"Ctrl+Z\"\n[[command]]\nid = \"redo\"\nkeys = \"Ctrl+Y\"\n"

    func exchange(_ h: DaemonHarness, _ c: SocketClient, _ request: String) -> [String] {
        c.send(request + "\n")
        h.pump()
        return c.receive().lines
    }

    /// Ctrl and the key at the US Y position (KEY_Y, the German z).
    func ctrlY(_ h: DaemonHarness, _ kbd: FakeDevice) {
        h.type(kbd, [("leftctrl", 1), ("y", 1), ("y", 0), ("leftctrl", 0)])
    }

    /// Issue 37: a `[[device]]` with its own `[device.keymap]` reads with it, whatever the
    /// desktop's keymap; the other keyboards follow the desktop's. Also across a reload.
    @Test func aKeyboardWithItsOwnKeymapDoesNotFollowTheDesktops() throws {
        func own(_ layout: String) -> String { "[[device]]\nmatch = \"17ef:6047\"\n[device.keymap]\nlayout = \"\(layout)\"\n\n" + Self.config }
        let h = try DaemonHarness(config: own("us"))
        let lenovo = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        let k400 = h.source.plug("/dev/input/event2", try Descriptions.k400)
        h.pump()
        let agent = try SocketClient(path: h.socketPath)
        #expect(exchange(h, agent, #"{"request":"set_keymap","layout":"de"}"#) == [#"{"reply":"set_keymap","ok":true,"group":0,"layout":"de"}"#])
        ctrlY(h, k400)
        ctrlY(h, lenovo)
        #expect(h.commandIDs == ["undo", "redo"])
        // The pad's keymap changes in the config: a reload reads it (the desktop's still holds for the K400).
        try DaemonHarness.write(own("de"), to: h.configPath)
        #expect(h.daemon.reloadOutcome() == .reloaded)
        h.events.removeAll()
        ctrlY(h, lenovo)
        ctrlY(h, k400)
        #expect(h.commandIDs == ["undo", "undo"])
        withExtendedLifetime(agent) {}
    }

    @Test func theDesktopsActiveLayoutMapsTheKeysUntilItsClientLeaves() throws {
        let h = try DaemonHarness(config: Self.config)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        var agent: SocketClient? = try SocketClient(path: h.socketPath)
        ctrlY(h, kbd)
        #expect(exchange(h, agent!, #"{"request":"set_keymap","layout":"us,de","group":1}"#)
                == [#"{"reply":"set_keymap","ok":true,"group":1,"layout":"us,de"}"#])
        ctrlY(h, kbd)
        // The desktop switched back to the first layout: the same names, another group.
        _ = exchange(h, agent!, #"{"request":"set_keymap","layout":"us,de","group":0}"#)
        ctrlY(h, kbd)
        _ = exchange(h, agent!, #"{"request":"set_keymap","layout":"us,de","group":1}"#)
        ctrlY(h, kbd)
        // The agent goes away: the service's own keymap (us) again.
        agent = nil
        #expect(h.pumpUntilClients(0))
        ctrlY(h, kbd)
        #expect(h.commandIDs == ["redo", "undo", "redo", "undo", "redo"])
        #expect(h.logs.all.contains { $0.contains("keymap: the desktop's, layout us,de variant  group 1") })
        #expect(h.logs.all.contains { $0.contains("keymap: the service's own again") })
    }

    @Test func aUsersTableAndAHeldModifierFollowTheDesktopsLayout() throws {
        let h = try DaemonHarness(config: "[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n")
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let agent = try SocketClient(path: h.socketPath)
        _ = exchange(h, agent, #"{"request":"register","commands":[{"id":"mine-undo","keys":"Ctrl+Z"}]}"#)
        // Ctrl is held while the desktop switches to German: it stays held in the new state.
        h.type(kbd, [("leftctrl", 1)])
        _ = exchange(h, agent, #"{"request":"set_keymap","layout":"de"}"#)
        h.type(kbd, [("y", 1), ("y", 0), ("leftctrl", 0)])
        #expect(agent.receive().lines.filter { $0.contains(#""id":"mine-undo""#) }.count == 1)
    }

    @Test func aReloadKeepsTheDesktopsKeymapAndABadOneIsRefused() throws {
        let h = try DaemonHarness(config: Self.config)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let agent = try SocketClient(path: h.socketPath)
        let refused = exchange(h, agent, #"{"request":"set_keymap","layout":"xx-nope"}"#).first ?? ""
        #expect(refused.hasPrefix(#"{"reply":"set_keymap","ok":false,"error":"cannot compile a keymap"#), "\(refused)")
        _ = exchange(h, agent, #"{"request":"set_keymap","layout":"de"}"#)
        // A new keymap in the config rebuilds the pipeline: the desktop's still holds.
        try DaemonHarness.write("[keymap]\nlayout = \"fr\"\n" + Self.config.split(separator: "\n").dropFirst(2).joined(separator: "\n") + "\n", to: h.configPath)
        #expect(h.daemon.reload())
        ctrlY(h, kbd)
        #expect(h.commandIDs == ["undo"])
    }

    @Test func theDesktopsStickyKeysOverrideTheConfigWhileItsClientIsThere() throws {
        let h = try DaemonHarness(config: Self.config)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        var agent: SocketClient? = try SocketClient(path: h.socketPath)
        let tapCtrlThenY: () -> Void = { h.type(kbd, [("leftctrl", 1), ("leftctrl", 0), ("y", 1), ("y", 0)]) }
        tapCtrlThenY()
        #expect(exchange(h, agent!, #"{"request":"set_sticky_keys","enabled":true}"#) == [#"{"reply":"set_sticky_keys","ok":true,"enabled":true}"#])
        tapCtrlThenY()
        agent = nil
        #expect(h.pumpUntilClients(0))
        tapCtrlThenY()
        #expect(h.commandIDs == ["redo"])
        #expect(h.logs.all.contains { $0.contains("sticky keys on (the desktop's setting)") })
        #expect(h.logs.all.contains { $0.contains("sticky keys off (the config's [accessibility] sticky_keys)") })
    }
}
