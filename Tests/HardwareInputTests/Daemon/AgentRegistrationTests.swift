import KbdJSON
import KbdProcess
import KbdDaemon
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Users' own tables on the service's socket (the session agent's side of issue 13):
/// routed after the system table, fired to their owner only, gone with the connection.
@Suite(.serialized)
struct AgentRegistrationTests {
    func exchange(_ h: DaemonHarness, _ c: SocketClient, _ request: String) -> [String] {
        c.send(request + "\n")
        h.pump()
        return c.receive().lines
    }

    static let table = #"{"request":"register","commands":[{"id":"terminal","title":"Terminal","keys":"Ctrl+Alt+T"},{"id":"mine-save","keys":"Ctrl+S"},{"id":"edit","keys":"Ctrl+E","scope":"editor"}]}"#

    static func chord(_ h: DaemonHarness, _ kbd: FakeDevice, _ mods: [String], _ key: String) {
        h.type(kbd, mods.map { ($0, 1) } + [(key, 1), (key, 0)] + mods.reversed().map { ($0, 0) })
    }

    @Test func aRegisteredTableFiresToItsOwnerOnlyAndTheSystemTableWins() throws {
        let h = try DaemonHarness()
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let agent = try SocketClient(path: h.socketPath)
        let other = try SocketClient(path: h.socketPath)
        let watcher = try SocketClient(path: h.socketPath)
        #expect(exchange(h, agent, Self.table) == [#"{"reply":"register","ok":true,"commands":3,"shadowed":["mine-save"]}"#])
        _ = exchange(h, watcher, #"{"request":"subscribe","events":["chord","command"]}"#)
        Self.chord(h, kbd, ["leftctrl", "leftalt"], "t")
        Self.chord(h, kbd, ["leftctrl"], "s")
        let mine = agent.receive().lines
        #expect(mine.count == 1)
        #expect(mine.first?.contains(#""event":"command""#) == true && mine.first?.contains(#""id":"terminal","title":"Terminal","scope":"global","chord":"Ctrl+Alt+T""#) == true)
        #expect(other.receive().lines.isEmpty)
        // The watcher sees both chords and the system command, never the user's.
        let seen = watcher.receive().lines
        #expect(seen.filter { $0.contains(#""event":"command""#) }.map { $0.contains(#""id":"save""#) } == [true])
        #expect(h.commandIDs == ["terminal", "save"])
        #expect(h.logs.all.contains { $0.contains("user command terminal (Ctrl+Alt+T) for uid \(geteuid())") })
    }

    @Test func aTableFollowsTheScopesAndLeavesWithItsClient() throws {
        let h = try DaemonHarness()
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        var agent: SocketClient? = try SocketClient(path: h.socketPath)
        _ = exchange(h, agent!, Self.table)
        Self.chord(h, kbd, ["leftctrl"], "e")
        _ = exchange(h, agent!, #"{"request":"set_scopes","scopes":["editor"]}"#)
        Self.chord(h, kbd, ["leftctrl"], "e")
        #expect(agent!.receive().lines.count == 1)
        agent = nil
        #expect(h.pumpUntilClients(0))
        Self.chord(h, kbd, ["leftctrl", "leftalt"], "t")
        #expect(h.commandIDs == ["edit"])
        #expect(h.daemon.commandTableOwners.isEmpty)
    }

    /// Issue 18: an agent's scopes (its session's focused window) route its own table even
    /// when another client set the system table's scopes after it (before, the last setter
    /// routed every table, so the agent's focus was lost to another user's or a tool's).
    @Test func anAgentsOwnScopesRouteItsTableWhoeverSetTheSystemsLast() throws {
        let h = try DaemonHarness()
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let agent = try SocketClient(path: h.socketPath)
        let tool = try SocketClient(path: h.socketPath)
        // Scopes before the table (the agent connects, sends the focus, then registers).
        _ = exchange(h, agent, #"{"request":"set_scopes","scopes":["editor"]}"#)
        _ = exchange(h, agent, Self.table)
        _ = exchange(h, tool, #"{"request":"set_scopes","scopes":["browser"]}"#)
        Self.chord(h, kbd, ["leftctrl"], "e")
        #expect(agent.receive().lines.filter { $0.contains(#""id":"edit""#) }.count == 1)
        // list_commands: the system table's chain for the service's group, the agent's own
        // chain with its table.
        let listed = exchange(h, agent, #"{"request":"list_commands"}"#).first ?? ""
        #expect(listed.contains(#""scopes":["browser","global"]"#), "\(listed)")
        #expect(listed.contains(#""user_scopes":["editor","global"]"#), "\(listed)")
        #expect(listed.contains(#""user_commands":[{"scope":"editor","id":"edit""#), "\(listed)")
        // The agent's focus moves on: its table follows, the system's stays with the tool's.
        _ = exchange(h, agent, #"{"request":"set_scopes","scopes":[]}"#)
        Self.chord(h, kbd, ["leftctrl"], "e")
        #expect(agent.receive().lines.isEmpty)
        #expect(h.logs.all.contains { $0.contains("set scopes [editor]") })
    }

    /// Issue 27: `commands --active` run by the user (a second connection of the agent's uid,
    /// without a table of its own) lists that user's table and the scopes its agent set;
    /// before, it showed only global.
    @Test func theCallersOwnTableAndScopesAreListed() throws {
        let h = try DaemonHarness()
        h.pump()
        let agent = try SocketClient(path: h.socketPath)
        let cli = try SocketClient(path: h.socketPath)
        _ = exchange(h, agent, Self.table)
        _ = exchange(h, agent, #"{"request":"set_scopes","scopes":["editor"]}"#)
        let listed = exchange(h, cli, #"{"request":"list_commands"}"#).first ?? ""
        #expect(listed.contains(#""user_scopes":["editor","global"]"#), "\(listed)")
        #expect(listed.contains(#""user_commands":[{"scope":"editor","id":"edit""#), "\(listed)")
    }

    /// A user's text input (the focused window takes text) filters its own table: a plain
    /// Shift+letter of its table does not fire while it is on.
    @Test func anAgentsTextInputFiltersItsOwnTable() throws {
        let h = try DaemonHarness()
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let agent = try SocketClient(path: h.socketPath)
        _ = exchange(h, agent, #"{"request":"register","commands":[{"id":"shout","keys":"Shift+T"}]}"#)
        _ = exchange(h, agent, #"{"request":"set_text_input","active":true}"#)
        Self.chord(h, kbd, ["leftshift"], "t")
        #expect(agent.receive().lines.isEmpty)
        _ = exchange(h, agent, #"{"request":"set_text_input","active":false}"#)
        Self.chord(h, kbd, ["leftshift"], "t")
        #expect(agent.receive().lines.count == 1)
    }

    @Test(arguments: [
        (#"{"request":"register","commands":[{"id":"a","keys":"Ctrl+Sprocket"}]}"#, "commands[0] (a): "),
        (#"{"request":"register","commands":[{"id":"a","keys":"Ctrl+A"},{"id":"a","keys":"Ctrl+B"}]}"#, "duplicate command id 'a'"),
        (#"{"request":"register","commands":[{"keys":"Ctrl+A"}]}"#, "commands[0]: expected an object with \"id\" and \"keys\" strings"),
        (#"{"request":"register","commands":{}}"#, "expected \"commands\" as an array of objects"),
    ])
    func badRegistrationsAreRefusedWithTheReason(_ request: String, _ reason: String) throws {
        let h = try DaemonHarness()
        let c = try SocketClient(path: h.socketPath)
        let reply = exchange(h, c, request)
        #expect(reply.count == 1)
        #expect(reply.first?.contains(#""ok":false"#) == true)
        #expect(reply.first?.contains(reason.replacingSlashQuotes) == true, "\(reply)")
        #expect(exchange(h, c, #"{"request":"ping"}"#) == [#"{"reply":"ping","ok":true}"#])
    }

    @Test func anOversizedTableIsRefused() throws {
        let h = try DaemonHarness()
        let c = try SocketClient(path: h.socketPath)
        let items = (0...1000).map { #"{"id":"c\#($0)","keys":"Ctrl+Alt+F1"}"# }.joined(separator: ",")
        let reply = exchange(h, c, #"{"request":"register","commands":["# + items + "]}")
        #expect(reply.first?.contains("at most 1000 may be registered") == true)
    }

    /// A peer that is not root, the service's user or in its group is a user's client:
    /// it may register and follow presence, nothing that tells it what others type.
    @Test func usersClientsGetOnlyTheirOwnCommandsPresenceAndGeometry() throws {
        let h = try DaemonHarness(userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        var st = stat()
        #expect(stat(h.socketPath, &st) == 0 && st.st_mode & 0o777 == 0o666)
        let c = try SocketClient(path: h.socketPath)
        #expect(exchange(h, c, #"{"request":"subscribe","events":["presence","geometry"]}"#).first?.contains(#""ok":true"#) == true)
        for refused in [#"{"request":"subscribe","events":["chord"]}"#, #"{"request":"subscribe","events":["command","presence"]}"#,
                        #"{"request":"reload"}"#, #"{"request":"list_devices"}"#] {
            #expect(exchange(h, c, refused).first?.contains(#""ok":false"#) == true, "\(refused)")
        }
        #expect(exchange(h, c, Self.table).first?.hasPrefix(#"{"reply":"register","ok":true"#) == true)
        // Without --user-agents such a peer is refused, as before.
        let closed = try DaemonHarness()
        closed.daemon.setPeerAuthorization { _, _, _ in false }
        let d = try SocketClient(path: closed.socketPath)
        closed.pump()
        #expect(d.receive().closed)
    }
}

extension String {
    /// The reason texts above quote JSON strings; the reply escapes their quotes.
    var replacingSlashQuotes: String { replacing("\"", with: "\\\"") }
}
