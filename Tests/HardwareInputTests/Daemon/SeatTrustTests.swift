import KbdJSON
import KbdTOML
import KbdCore
import KbdKeymap
import KbdEvdev
import KbdSeats
import KbdCommands
import KbdPipeline
import KbdConfig
import KbdControl
import KbdProcess
import KbdDaemon
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 25: a user's table fires only for keys typed at a seat where that user owns the
/// active logind session. The red team's attack: a local user without the session (an ssh
/// login, a service account) registers every printable key and reads what the console user types.
@Suite(.serialized)
struct SeatTrustTests {
    func exchange(_ h: DaemonHarness, _ c: SocketClient, _ request: String) -> [String] {
        c.send(request + "\n")
        h.pump()
        return c.receive().lines
    }

    /// Every letter and digit, with and without Shift, each with priority over text input.
    static let everyPrintableKey: String = {
        let keys = "abcdefghijklmnopqrstuvwxyz0123456789".map(String.init)
        let commands = keys.flatMap { k in
            [#"{"id":"key-\#(k)","keys":"\#(k)","priority_over_text_input":true}"#,
             #"{"id":"key-Shift-\#(k)","keys":"Shift+\#(k)","priority_over_text_input":true}"#]
        }
        return #"{"request":"register","commands":["# + commands.joined(separator: ",") + "]}"
    }()

    static let password: [(String, Int32)] = "hunter2secret".flatMap { c in [(String(c), Int32(1)), (String(c), Int32(0))] }

    /// Another uid owns seat0's active session: the eavesdropper's table gets nothing, and
    /// the log holds nothing it chose. When its own session becomes active it learns so
    /// (an event) and its table fires; when it leaves, it learns that too.
    @Test func aUserWithoutTheActiveSessionReceivesNoKeystrokes() throws {
        let h = try DaemonHarness(userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        h.login.activate(4242)  // "alice" is at the keyboard; we are "mallory"
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let mallory = try SocketClient(path: h.socketPath)
        let reply = exchange(h, mallory, Self.everyPrintableKey)
        #expect(reply.first?.hasPrefix(#"{"reply":"register","ok":true"#) == true, "\(reply)")
        h.type(kbd, Self.password)
        h.type(kbd, [("leftshift", 1), ("h", 1), ("h", 0), ("leftshift", 0)])
        #expect(mallory.receive().lines.isEmpty)
        #expect(h.commandIDs.filter { $0.hasPrefix("key-") }.isEmpty)
        #expect(!h.logs.all.contains { $0.contains("key-") })

        // Mallory's own session becomes active: the switch is announced, and then her keys fire.
        h.login.activate(geteuid())
        h.pump()
        #expect(mallory.receive().lines.contains { $0.contains(#""event":"session""#) && $0.contains(#""seat":"seat0","active":true"#) })
        h.type(kbd, [("x", 1), ("x", 0)])
        #expect(mallory.receive().lines.contains { $0.contains(#""id":"key-x""#) })
        // The user command typed text: its id and chord stay out of the log (item 4).
        #expect(!h.logs.all.contains { $0.contains("key-x") })
        #expect(h.logs.all.contains { $0.contains("user command for uid \(geteuid()) (a chord that types text: id and chord not logged)") })

        h.login.activate(4242)
        h.pump()
        #expect(mallory.receive().lines.contains { $0.contains(#""seat":"seat0","active":false"#) })
        h.type(kbd, [("y", 1), ("y", 0)])
        #expect(mallory.receive().lines.isEmpty)
    }

    /// A uid with no session on any seat never gets a command event.
    @Test func aUserWithNoSessionAnywhereGetsNothing() throws {
        let h = try DaemonHarness(userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        h.login.activate(nil)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let remote = try SocketClient(path: h.socketPath)
        #expect(exchange(h, remote, Self.everyPrintableKey).first?.contains(#""ok":true"#) == true)
        h.type(kbd, Self.password)
        #expect(remote.receive().lines.isEmpty)
        #expect(h.logs.all.contains { $0.contains("no active session on any seat") })
    }

    /// Without logind a user's table could only fire for someone else's typing: refused, with the reason.
    @Test func withoutLogindUsersTablesAreRefused() throws {
        let h = try DaemonHarness(userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        h.daemon.loginSource = { () throws(SeatsUnavailable) -> any LoginSource in throw SeatsUnavailable("no /run/systemd/seats here") }
        let c = try SocketClient(path: h.socketPath)
        h.pump()
        let reply = exchange(h, c, Self.everyPrintableKey)
        #expect(reply.first?.contains(#""ok":false"#) == true)
        #expect(reply.first?.contains("logind cannot be followed: no /run/systemd/seats here") == true, "\(reply)")
        // Operators' tables work as before.
        let h2 = try DaemonHarness(userAgents: true)
        h2.daemon.loginSource = { () throws(SeatsUnavailable) -> any LoginSource in throw SeatsUnavailable("none") }
        let op = try SocketClient(path: h2.socketPath)
        #expect(exchange(h2, op, Self.everyPrintableKey).first?.contains(#""ok":true"#) == true)
    }

    /// A switch starts every pending sequence over, and keys held across it fire nothing
    /// (their repeats would otherwise reach the next user's table).
    @Test func aSessionSwitchResetsPendingSequencesAndHeldChords() throws {
        let h = try DaemonHarness(userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let agent = try SocketClient(path: h.socketPath)
        let table = #"{"request":"register","commands":[{"id":"seq","keys":"Ctrl+K Ctrl+D"},{"id":"zoom","keys":"Ctrl+Alt+Z","repeat":true}]}"#
        let registered = exchange(h, agent, table)
        #expect(registered.first?.contains(#""ok":true"#) == true, "\(registered)")
        // A sequence started, then someone else's session and ours again: it starts over.
        h.type(kbd, [("leftctrl", 1), ("k", 1), ("k", 0), ("leftctrl", 0)])
        h.login.activate(4242)
        h.pump()
        h.login.activate(geteuid())
        h.pump()
        _ = agent.receive()
        h.type(kbd, [("leftctrl", 1), ("d", 1), ("d", 0), ("leftctrl", 0)])
        #expect(!agent.receive().lines.contains { $0.contains(#""id":"seq""#) })
        // A chord held while another user was active does not fire for us when its key repeats.
        h.login.activate(4242)
        h.pump()
        h.type(kbd, [("leftctrl", 1), ("leftalt", 1), ("z", 1)])
        h.login.activate(geteuid())
        h.pump()
        _ = agent.receive()
        h.type(kbd, [("z", 2)])
        h.type(kbd, [("z", 2)])
        #expect(!agent.receive().lines.contains { $0.contains(#""id":"zoom""#) })
        // Released and pressed again: ours.
        h.type(kbd, [("z", 0), ("z", 1), ("z", 0), ("leftalt", 0), ("leftctrl", 0)])
        #expect(agent.receive().lines.contains { $0.contains(#""id":"zoom""#) })
    }

    /// Item 3: a user without the active session steers nothing but its own table; the
    /// system table follows operators and the person at the keyboard.
    @Test func onlyTheActiveUserSteersTheSystemTable() throws {
        let h = try DaemonHarness(userAgents: true)
        h.daemon.setPeerAuthorization { _, _, _ in false }
        h.login.activate(4242)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        let mallory = try SocketClient(path: h.socketPath)
        #expect(exchange(h, mallory, #"{"request":"set_text_input","active":true}"#).first?.contains(#""ok":true"#) == true)
        #expect(exchange(h, mallory, #"{"request":"set_scopes","scopes":["editor"]}"#).first?.contains(#""ok":true"#) == true)
        // The system table still fires its global Ctrl+S and its "q" (text input not on for it).
        h.type(kbd, [("leftctrl", 1), ("s", 1), ("s", 0), ("leftctrl", 0)])
        h.type(kbd, [("q", 1), ("q", 0)])
        #expect(h.commandIDs == ["save", "letter-q"])
        // What it lists: its own claims, never the system table.
        let listing = exchange(h, mallory, #"{"request":"list_commands"}"#).first ?? ""
        #expect(listing.contains(#""commands":[]"#), "\(listing)")
        // Once its session is active, its claims steer the system table too.
        h.login.activate(geteuid())
        h.pump()
        h.type(kbd, [("leftctrl", 1), ("s", 1), ("s", 0), ("leftctrl", 0)])
        #expect(h.commandIDs.last == "editor-save")
    }
}

/// The pure rules of item 1-3: the pipeline's routing by seat, the session's claims.
@Suite struct SeatRoutingTests {
    static let table = try! CommandTable(commands: [
        Command(id: "mine", title: "mine", keys: try! ChordKey.parseSequence("x"), location: SourceLocation(path: "t", line: 1)),
    ])

    /// A keyboard on seat1 (udev ID_SEAT) types for seat1's user only.
    @Test func aUsersTableFiresOnlyForKeyboardsOfItsSeat() throws {
        let pipeline = try Pipeline(keymap: try Keymaps.make("us"), table: try CommandTable(commands: []))
        var seat1 = try Descriptions.lenovo
        seat1.udevSeat = "seat1"
        var out: [PipelineEvent] = []
        pipeline.process(.attached(DeviceID(1), try Descriptions.lenovo, verdict: nil, time: EventTime(microseconds: 0)), into: &out)
        pipeline.process(.attached(DeviceID(2), seat1, verdict: nil, time: EventTime(microseconds: 0)), into: &out)
        pipeline.setUserTable(Self.table, owner: 7, uid: 1000)
        pipeline.setActiveSessions(ActiveSessions(available: true, activeUID: ["seat0": 2000, "seat1": 1000]))
        func press(_ id: Int, at ms: Int64) -> Int {
            var out: [PipelineEvent] = []
            for (v, dt) in [(Int32(1), Int64(0)), (Int32(0), Int64(1))] {
                let t = EventTime(microseconds: (ms + dt) * 1000)
                pipeline.process(.input(DeviceID(id), InputEvent(time: t, type: EventType.key, code: 45, value: v)), into: &out)
                pipeline.process(.input(DeviceID(id), InputEvent(time: t, type: EventType.syn, code: 0, value: 0)), into: &out)
            }
            return out.filter { if case .ownedCommand = $0 { true } else { false } }.count
        }
        #expect(press(1, at: 10) == 0)  // seat0's keyboard: another user is there
        #expect(press(2, at: 20) == 1)  // seat1's keyboard: ours
        pipeline.setUserTable(Self.table, owner: 8)  // an operator's table: whoever types
        #expect(press(1, at: 30) == 1)
    }

    /// Issue 33 item 5: the system table's claims are per seat. seat1's user set the scope
    /// `terminal` and the keymap `de`: seat1's keyboard fires the terminal command and reads
    /// `de` (the key at US `y` is `z`), while seat0's keyboard keeps global scope and `us`.
    /// A sequence pending on one seat is not cancelled by typing on the other.
    @Test func theSystemTablesClaimsArePerSeat() throws {
        let table = try CommandTable(commands: [
            Command(id: "term-copy", title: "Copy", keys: try ChordKey.parseSequence("Ctrl+Shift+C"), scope: "terminal", location: SourceLocation(path: "t", line: 1)),
            Command(id: "copy", title: "Copy", keys: try ChordKey.parseSequence("Ctrl+Shift+C"), location: SourceLocation(path: "t", line: 2)),
            Command(id: "zoom", title: "Zoom", keys: try ChordKey.parseSequence("Ctrl+Z"), location: SourceLocation(path: "t", line: 3)),
            Command(id: "undo-y", title: "Y", keys: try ChordKey.parseSequence("Ctrl+Y"), location: SourceLocation(path: "t", line: 4)),
            Command(id: "write", title: "Write", keys: try ChordKey.parseSequence("Ctrl+X Ctrl+W"), location: SourceLocation(path: "t", line: 5)),
        ])
        let pipeline = try Pipeline(keymap: try Keymaps.make("us"), table: table)
        var seat1 = try Descriptions.lenovo
        seat1.udevSeat = "seat1"
        var out: [PipelineEvent] = []
        pipeline.process(.attached(DeviceID(1), try Descriptions.lenovo, verdict: nil, time: EventTime(microseconds: 0)), into: &out)
        pipeline.process(.attached(DeviceID(2), seat1, verdict: nil, time: EventTime(microseconds: 0)), into: &out)
        pipeline.setActiveSessions(ActiveSessions(available: true, activeUID: ["seat0": 2000, "seat1": 1000]))
        pipeline.setScopes(["terminal"], seat: "seat1")
        try pipeline.setKeymap(try Keymaps.make("de"), layout: 0, seat: "seat1")
        var now: Int64 = 10
        func chord(_ id: Int, _ codes: [UInt16]) -> [String] {
            var out: [PipelineEvent] = []
            for (i, code) in codes.enumerated() {
                now += 5
                pipeline.process(.input(DeviceID(id), InputEvent(time: EventTime(microseconds: now * 1000), type: EventType.key, code: code, value: 1)), into: &out)
                if i == codes.count - 1 {
                    for c in codes.reversed() {
                        now += 5
                        pipeline.process(.input(DeviceID(id), InputEvent(time: EventTime(microseconds: now * 1000), type: EventType.key, code: c, value: 0)), into: &out)
                    }
                }
            }
            return out.compactMap { if case .command(_, _, let command, _, _) = $0 { command.id } else { nil } }
        }
        let ctrl: UInt16 = 29, shift: UInt16 = 42, c: UInt16 = 46, y: UInt16 = 21, x: UInt16 = 45, w: UInt16 = 17
        #expect(chord(1, [ctrl, shift, c]) == ["copy"])       // seat0: global
        #expect(chord(2, [ctrl, shift, c]) == ["term-copy"])  // seat1: its user's terminal scope
        #expect(chord(1, [ctrl, y]) == ["undo-y"])           // seat0 reads us: y
        #expect(chord(2, [ctrl, y]) == ["zoom"])             // seat1 reads de: the key at US y types z
        // A prefix on seat1, a chord on seat0 in between, the rest on seat1: it completes.
        #expect(chord(2, [ctrl, x]).isEmpty)
        #expect(chord(1, [ctrl, y]) == ["undo-y"])
        #expect(chord(2, [ctrl, w]) == ["write"])
        #expect(pipeline.systemRouting(seat: "seat1").scopes == ["terminal"] && pipeline.systemRouting(seat: "seat0").scopes == [])
    }

    @Test func udevSaysTheSeat() {
        #expect(UdevDatabase.seat(in: "E:ID_INPUT=1\nE:ID_SEAT=seat-usb1\nE:ID_INPUT_KEY=1\n") == "seat-usb1")
        #expect(UdevDatabase.seat(in: "E:ID_INPUT=1\n") == nil)
        #expect(UdevDatabase.seat(in: "E:ID_SEAT=../etc\n") == nil)
        var d = DeviceDescription(name: "k")
        #expect(d.seat == "seat0")
        d.udevSeat = "seat1"
        #expect(d.seat == "seat1")
    }

    static let system = try! ConfigLoader.parse("[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n", path: "s.toml").table
    static var view: ControlSession.View {
        ControlSession.View(hardwareKeyboard: true, presenceReason: "", geometry: nil, systemTable: system, allowKeyEvents: false, devices: { [] })
    }

    /// mallory's `set_text_input false` made the system's `Shift+Q` fire inside alice's text field.
    @Test func aClaimOfAUserAwayFromTheKeyboardSteersOnlyItsOwnTable() {
        let session = ControlSession()
        let alice = ControlSession.Peer(id: 2, uid: 1000, trusted: false)
        let mallory = ControlSession.Peer(id: 3, uid: 1006, trusted: false)
        _ = session.sessionsChanged(ActiveSessions(available: true, activeUID: ["seat0": 1000]), problem: nil)
        _ = session.handle(.setTextInput(true), from: alice, view: Self.view)
        let effects = session.handle(.setTextInput(false), from: mallory, view: Self.view).effects
        #expect(session.systemTextInput == true)
        #expect(!effects.contains { if case .systemTextInput = $0 { true } else { false } })
        #expect(effects.contains { if case .ownTextInput(owner: 3, false) = $0 { true } else { false } })
        _ = session.handle(.setScopes(["secret-app"]), from: alice, view: Self.view)
        _ = session.handle(#"{"request":"register","commands":[{"id":"t","keys":"Ctrl+Alt+T"}]}"#, from: mallory, view: Self.view)
        guard case .listCommands(let listing)? = session.handle(.listCommands, from: mallory, view: Self.view).reply else {
            Issue.record("no listing")
            return
        }
        #expect(listing.commands.isEmpty && listing.scopes == ["global"] && listing.textInput == false)
        #expect(listing.user?.scopes == ["global"] && listing.user?.commands.map(\.id) == ["t"])
        // The switch: alice leaves, mallory is at the keyboard; both learn it.
        let switched = session.sessionsChanged(ActiveSessions(available: true, activeUID: ["seat0": 1006]), problem: nil)
        #expect(session.systemTextInput == false && session.systemScopes == [])
        #expect(switched.contains { if case .sessionEvent(uid: 1000, seat: "seat0", active: false) = $0 { true } else { false } })
        #expect(switched.contains { if case .sessionEvent(uid: 1006, seat: "seat0", active: true) = $0 { true } else { false } })
    }
}
