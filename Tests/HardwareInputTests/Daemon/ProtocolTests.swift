import KbdCore
import KbdJSON
import KbdGeometry
import KbdKeymap
import KbdCommands
import KbdPipeline
import KbdRecording
import KbdConfig
@testable import KbdControl
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 24: the wire has one typed home (KbdControl), used by both ends. Each request
/// encodes back to itself, every reply the session gives decodes to itself, and every event
/// the service writes (EventFormatter, the per-event path) decodes with the client's types.
@Suite struct ProtocolTests {
    @Test(arguments: [
        ControlRequest.subscribe([.presence, .geometry]),
        .subscribe(ControlRequest.defaultSubscription),
        .setScopes(["editor", "org.gnome.TextEditor", "scope \"with\" quotes"]),
        .setScopes([]),
        .setTextInput(true),
        .listCommands, .listDevices, .reload, .ping,
        .register(commands: [
            .init(id: "save", title: "Save", keys: "Ctrl+S", scope: "editor", repeat: true, priorityOverTextInput: true),
            .init(id: "term", keys: "Ctrl+Alt+T"),
        ], sequenceTimeoutMilliseconds: 1500),
        .register(commands: [], sequenceTimeoutMilliseconds: nil),
        .setKeymap(.init(layout: "us,de", variant: ",nodeadkeys", options: "ctrl:nocaps,grp:alt_shift_toggle", group: 1)),
        .setKeymap(.init(layout: "us")),
        .setKeymap(nil),
        .setStickyKeys(true), .setStickyKeys(false), .setStickyKeys(nil),
    ])
    func requestsEncodeBackToThemselves(_ request: ControlRequest) throws {
        #expect(try ControlRequest.parse(request.line) == request)
        #expect(!request.line.contains("\n"))
    }

    /// The agent's request as it wrote it by hand before (issue 24) reads the same as the typed one.
    @Test func theAgentsOldHandWrittenLinesStillParse() throws {
        #expect(try ControlRequest.parse(#"{"request":"subscribe","events":["presence","geometry"]}"#) == .subscribe([.presence, .geometry]))
        #expect(try ControlRequest.parse(#"{"request":"set_text_input","active":false}"#) == .setTextInput(false))
    }

    /// The subscribe reply carries the protocol's version (documented: README "Control socket").
    @Test func subscribeCarriesTheProtocolVersion() throws {
        let reply = ControlReply.subscribe(.init(events: [.presence], hardwareKeyboard: true, reason: "external keyboard"))
        #expect(reply.line == #"{"reply":"subscribe","ok":true,"events":["presence"],"hardware_keyboard":true,"protocol":2,"reason":"external keyboard"}"#)
        #expect(try ControlReply.parse(reply.line) == reply)
    }

    /// Every reply a session gives, for a trusted client and a user's, decodes to itself.
    @Test func sessionRepliesDecodeToThemselves() throws {
        let table = try ConfigLoader.load(path: Fixtures.root + "/../../../examples/commands.toml").table
        let session = ControlSession()
        let view = ControlSession.View(hardwareKeyboard: false, presenceReason: "no keyboard", geometry: GeometryReport(layout: .docked, keyboardFrame: nil, windows: []),
                                       systemTable: table, allowKeyEvents: false, devices: { [ControlReply.ListedDevice(path: "/dev/input/event3", name: "")] })
        let lines = [
            #"{"request":"subscribe","events":["presence","geometry"]}"#, #"{"request":"subscribe","events":["key"]}"#,
            #"{"request":"set_scopes","scopes":["editor"]}"#, #"{"request":"set_text_input","active":true}"#,
            #"{"request":"list_commands"}"#, #"{"request":"list_devices"}"#, #"{"request":"ping"}"#,
            #"{"request":"register","commands":[{"id":"t","keys":"Ctrl+Alt+T","scope":"editor"}]}"#,
            #"{"request":"register","commands":[{"id":"bad","keys":"Ctrl+Sprocket"}]}"#,
            "garbage", #"{"request":"reload"}"#,
            #"{"request":"set_keymap","layout":"us,de","variant":",nodeadkeys","group":1}"#, #"{"request":"set_keymap"}"#,
            #"{"request":"set_keymap","layout":"us","group":1}"#, #"{"request":"set_sticky_keys","enabled":true}"#,
            #"{"request":"set_sticky_keys"}"#,
        ]
        for trusted in [true, false] {
            let peer = ControlSession.Peer(id: trusted ? 1 : 2, uid: trusted ? 0 : 1000, trusted: trusted)
            for line in lines {
                guard let reply = session.handle(line, from: peer, view: view).reply else { continue }
                #expect(try ControlReply.parse(reply.line) == reply, "\(reply.line)")
            }
        }
        let reload = ControlSession.reloaded(commands: 3, refusal: "c.toml:2: bad")
        #expect(reload.line == #"{"reply":"reload","ok":false,"commands":3,"error":"c.toml:2: bad"}"#)
        #expect(try ControlReply.parse(reload.line) == reload)
    }

    /// The events of real recordings, written as the service writes them, decode with the
    /// client's types and encode to the same JSON.
    @Test(arguments: ["cros-autotest--keyboard_ctrl+shift+q.events-only.evemu", "evemu-devices--logitech-k400-plus.evemu",
                      "cros-autotest--inbox-input-latency-typing.with-prop.evemu"])
    func eventsOfARealReplayDecode(_ name: String) throws {
        let table = try ConfigLoader.parse("[[command]]\nid = \"quit\"\ntitle = \"Quit \\\"all\\\"\"\nkeys = \"Ctrl+Shift+Q\"\n", path: "c.toml").table
        let pipeline = try Pipeline(keymap: try Keymaps.make("us"), table: table, options: .init(emitKeys: true))
        let source = try RecordingSource(paths: [Fixtures.recording(name)])
        var out: [PipelineEvent] = []
        while let e = try source.next() { pipeline.process(e, into: &out) }
        pipeline.finish(into: &out)
        #expect(out.count > 4)
        for event in out {
            let line = EventFormatter.json(event)
            let decoded = try ControlEvent.parse(line)
            #expect(decoded.kind == event.eventKind)
            #expect(try JSONValue.parse(decoded.line) == JSONValue.parse(line), "\(line)")
            #expect(try ControlLine.parse(line) == .event(decoded))
        }
    }

    /// Issue 26: `set_keymap` lines as the documentation shows them, and the refusals of names
    /// xkb would not take (a path, a fifth layout, a group past the layouts).
    @Test func setKeymapLinesAndRefusals() throws {
        #expect(try ControlRequest.parse(#"{"request":"set_keymap","layout":"us,de","group":1}"#)
                == .setKeymap(.init(layout: "us,de", group: 1)))
        #expect(ControlRequest.setKeymap(.init(layout: "us,de", variant: ",nodeadkeys", options: "ctrl:nocaps", group: 1)).line
                == #"{"request":"set_keymap","layout":"us,de","variant":",nodeadkeys","options":"ctrl:nocaps","group":1}"#)
        #expect(ControlRequest.setKeymap(nil).line == #"{"request":"set_keymap"}"#)
        #expect(ControlRequest.setStickyKeys(true).line == #"{"request":"set_sticky_keys","enabled":true}"#)
        let refused = [
            (#"{"request":"set_keymap","layout":"../../etc/passwd"}"#, "xkb names"),
            (#"{"request":"set_keymap","layout":"us,de,fr,ru,gr"}"#, "1 to 4 layouts"),
            (#"{"request":"set_keymap","layout":"us,de","group":2}"#, "from 0 to 1"),
            (#"{"request":"set_keymap","layout":"us","variant":"a,b"}"#, "more variants than layouts"),
            (#"{"request":"set_keymap","group":1}"#, "expected \"layout\""),
            (#"{"request":"set_sticky_keys","enabled":"yes"}"#, "true or false"),
        ]
        for (line, message) in refused {
            #expect(throws: ControlRequestError.self, "\(line)") { try ControlRequest.parse(line) }
            do { _ = try ControlRequest.parse(line) } catch { #expect(error.message.contains(message), "\(error.message)") }
        }
    }

    /// A line that is neither a reply nor an event is an error for the client, not a guess.
    @Test(arguments: [#"{"event":"typing","time":1}"#, #"{"reply":"subscribe","ok":true}"#, "[1]", #"{"event":"presence","time":1}"#])
    func linesOutsideTheProtocolAreErrors(_ line: String) {
        #expect(throws: ControlRequestError.self) { try ControlLine.parse(line) }
    }
}

/// The session's rules without a socket: claims in one place, registration held to the
/// config's rules, listings.
@Suite struct ControlSessionTests {
    static let system = try! ConfigLoader.parse("[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n[[command]]\nid = \"find\"\nkeys = \"Ctrl+F\"\nscope = \"editor\"\n", path: "s.toml").table
    static var view: ControlSession.View {
        ControlSession.View(hardwareKeyboard: true, presenceReason: "external keyboard", geometry: nil, systemTable: system,
                            allowKeyEvents: false, devices: { [] })
    }
    static let root = ControlSession.Peer(id: 1, uid: 0, trusted: true)
    static let alice = ControlSession.Peer(id: 2, uid: 1000, trusted: false)

    /// A session where logind says alice (uid 1000) owns seat0's active session.
    static func aliceAtTheKeyboard() -> ControlSession {
        let session = ControlSession()
        _ = session.sessionsChanged(ActiveSessions(available: true, activeUID: [ActiveSessions.defaultSeat: 1000]), problem: nil)
        return session
    }

    /// A registered table is held to the same rules as a config's [[command]]: before issue 24
    /// `register` accepted an empty id and a scope with a space, which a config refuses.
    @Test(arguments: [
        (#"{"id":"","keys":"Ctrl+T"}"#, "commands[0] (): id: expected a non-empty string, found an empty string"),
        (#"{"id":"t","keys":"Ctrl+T","scope":"a b"}"#, "commands[0] (t): scope: expected one scope name without commas or spaces, found 'a b'"),
        (#"{"id":"t","keys":"Ctrl+T","title":""}"#, "commands[0] (t): title: expected a non-empty string, found an empty string"),
        (#"{"id":"t","keys":""}"#, "commands[0] (t): keys: expected a non-empty string, found an empty string"),
    ])
    func registrationFollowsTheConfigsRules(_ command: String, _ message: String) {
        let session = Self.aliceAtTheKeyboard()
        let reply = session.handle(#"{"request":"register","commands":["# + command + "]}", from: Self.alice, view: Self.view).reply
        #expect(reply == .refused(name: "register", message: message))
        #expect(session.tableOwners.isEmpty)
    }

    /// The same command in a config file gets the same words.
    @Test func theConfigSaysTheSame() {
        #expect(throws: ConfigError.self) { try ConfigLoader.parse("[[command]]\nid = \"t\"\nkeys = \"Ctrl+T\"\nscope = \"a b\"\n", path: "c.toml") }
        do { _ = try ConfigLoader.parse("[[command]]\nid = \"t\"\nkeys = \"Ctrl+T\"\nscope = \"a b\"\n", path: "c.toml") } catch {
            #expect(error.description == "c.toml:4: scope: expected one scope name without commas or spaces, found 'a b'")
        }
    }

    /// Claims live in the session: the newest claim routes the system table, each client's
    /// own claim routes its own table, and a client's claims leave with it.
    @Test func claimsAreHeldByClientAndLeaveWithIt() {
        let session = Self.aliceAtTheKeyboard()
        _ = session.handle(.setScopes(["editor"]), from: Self.root, view: Self.view)
        let second = session.handle(.setScopes(["terminal"]), from: Self.alice, view: Self.view)
        #expect(session.systemScopes == ["terminal"])
        #expect(second.effects.contains { if case .systemScopes(["terminal"], seat: "seat0") = $0 { true } else { false } })
        #expect(session.ownScopes(Self.root.id) == ["editor"])
        let gone = session.disconnected(Self.alice.id)
        #expect(session.systemScopes == ["editor"])
        #expect(gone.contains { if case .systemScopes(["editor"], seat: "seat0") = $0 { true } else { false } })
        #expect(gone.contains { if case .ownScopes(owner: 2, nil) = $0 { true } else { false } })
    }

    /// A user's client sees its own scopes and table, never the scopes another session set.
    @Test func aUsersListingShowsItsOwnClaims() throws {
        let session = Self.aliceAtTheKeyboard()
        _ = session.handle(.setScopes(["secret-app"]), from: Self.root, view: Self.view)
        _ = session.handle(#"{"request":"register","commands":[{"id":"t","keys":"Ctrl+Alt+T"}]}"#, from: Self.alice, view: Self.view)
        guard case .listCommands(let listing)? = session.handle(.listCommands, from: Self.alice, view: Self.view).reply else {
            Issue.record("no listing")
            return
        }
        #expect(listing.scopes == ["global"])
        #expect(listing.user?.commands.map(\.id) == ["t"])
        guard case .listCommands(let rootListing)? = session.handle(.listCommands, from: Self.root, view: Self.view).reply else { return }
        #expect(rootListing.scopes == ["secret-app", "global"])
    }

    /// What a user's client may not ask.
    @Test func usersAreRefusedWhatIsForTheServicesGroup() {
        let session = ControlSession()
        for request in [ControlRequest.reload, .listDevices, .subscribe([.chord])] {
            let reply = session.handle(request, from: Self.alice, view: Self.view).reply
            #expect(reply?.ok == false && reply?.name == "error", "\(request)")
        }
        #expect(session.handle(.reload, from: Self.root, view: Self.view).effects.contains { if case .reload = $0 { true } else { false } })
    }
}

/// The client's rules: who may serve, and how long to wait before connecting again.
@Suite struct ControlClientRuleTests {
    @Test func onlyRootTheServiceAndTheCallerMayServe() {
        #expect(ServerTrust.refusal(serverUID: 0, path: "/s", trusted: [], own: 1000) == nil)
        #expect(ServerTrust.refusal(serverUID: 1000, path: "/s", trusted: [], own: 1000) == nil)
        #expect(ServerTrust.refusal(serverUID: 999, path: "/s", trusted: [999], own: 1000) == nil)
        #expect(ServerTrust.refusal(serverUID: 1006, path: "/s", trusted: [999], own: 1000)
                == "/s is served by uid 1006, not by root, kbd-commandd or you (uid 1000); not trusting it")
    }

    /// The service's uid from a passwd file, without NSS (which would load libnss_systemd into
    /// the resident agent).
    @Test func theServicesUIDComesFromThePasswdFile() throws {
        let text = "root:x:0:0:root:/root:/bin/bash\nkbd-commandd-old:x:5:5::/:/bin/false\nkbd-commandd:x:998:997:kbd-commandd:/nonexistent:/usr/sbin/nologin\n"
        #expect(ServerTrust.uids(of: "kbd-commandd", inPasswd: text) == [998])
        #expect(ServerTrust.uids(of: "nobody", inPasswd: text) == [])
        #expect(ServerTrust.serviceUIDs(passwd: "/etc/passwd") == (getpwnam("kbd-commandd").map { [$0.pointee.pw_uid] } ?? []))
    }

    /// Issue 25 item 7: a server that accepts and closes at once used to get a reconnect every
    /// 100 ms forever (the wait started over at every connect). It grows until a connection lasts.
    @Test func backoffGrowsUntilAConnectionLasts() {
        var backoff = ReconnectBackoff(initial: 100, maximum: 5000, stable: 5000)
        var waits: [Int] = []
        var now: Int64 = 0
        for _ in 0..<7 {
            backoff.connected(now: now)
            now += 10
            let wait = backoff.disconnected(now: now)
            waits.append(wait)
            now += Int64(wait)
        }
        #expect(waits == [100, 200, 400, 800, 1600, 3200, 5000])
        backoff.connected(now: now)
        #expect(backoff.disconnected(now: now + 6000) == 100)
        #expect(backoff.failed() == 200)
    }
}

/// Issue 26: the desktop's keymap and sticky keys are claims like scopes: the newest wins,
/// a withdrawal or a client leaving brings back the one before, and a keymap that does not
/// compile is refused without becoming a claim. Issue 33: they are claims of the person at
/// the keyboard (alice on seat0, bob on seat1 here), held to a rate and a work budget.
@Suite struct DesktopKeymapClaimTests {
    /// Alice and Bob each own the active session of a seat.
    static func session() -> ControlSession {
        let session = ControlSession()
        _ = session.sessionsChanged(ActiveSessions(available: true, activeUID: ["seat0": 1000, "seat1": 1001]), problem: nil)
        return session
    }
    static var view: ControlSession.View { ControlSession.View(hardwareKeyboard: true, presenceReason: "external keyboard", geometry: nil,
                                          systemTable: try! CommandTable(commands: []), allowKeyEvents: false, devices: { [] },
                                          keymapProblem: { $0.layout == "nope" ? "cannot compile a keymap for layout=nope" : nil }) }
    static let alice = ControlSession.Peer(id: 2, uid: 1000, trusted: false)
    static let bob = ControlSession.Peer(id: 3, uid: 1001, trusted: false)

    /// Alice's second connection (her bar, say): the same uid, another client.
    static let alicesBar = ControlSession.Peer(id: 5, uid: 1000, trusted: false)

    static func keymaps(_ effects: [ControlSession.Effect], seat: String = "seat0") -> [ControlRequest.Keymap?] {
        effects.compactMap { if case .keymap(let k, seat) = $0 { return .some(k) } else { return nil } }
    }
    static func sticky(_ effects: [ControlSession.Effect], seat: String = "seat0") -> [Bool?] {
        effects.compactMap { if case .stickyKeys(let b, seat) = $0 { return .some(b) } else { return nil } }
    }

    @Test func theNewestClaimWinsAndLeavesWithItsClient() {
        let session = Self.session()
        let de = ControlRequest.Keymap(layout: "us,de", group: 1)
        let ru = ControlRequest.Keymap(layout: "us,ru", group: 0)
        let a = session.handle(.setKeymap(de), from: Self.alice, view: Self.view)
        #expect(a.reply == .setKeymap(de))
        #expect(Self.keymaps(a.effects) == [de])
        // The same claim again changes nothing the daemon must apply.
        #expect(Self.keymaps(session.handle(.setKeymap(de), from: Self.alice, view: Self.view).effects).isEmpty)
        #expect(Self.keymaps(session.handle(.setKeymap(ru), from: Self.alicesBar, view: Self.view).effects) == [ru])
        // That client leaves: the first one's keymap again; Alice withdraws: the service's own.
        #expect(Self.keymaps(session.disconnected(Self.alicesBar.id)) == [de])
        #expect(Self.keymaps(session.handle(.setKeymap(nil), from: Self.alice, view: Self.view).effects) == [nil])
        #expect(session.keymap == nil)
    }

    @Test func aKeymapThatDoesNotCompileIsRefusedAndClaimsNothing() {
        let session = Self.session()
        let outcome = session.handle(#"{"request":"set_keymap","layout":"nope"}"#, from: Self.alice, view: Self.view)
        #expect(outcome.reply == .refused(name: "set_keymap", message: "cannot compile a keymap for layout=nope"))
        #expect(outcome.effects.isEmpty)
        #expect(session.keymap == nil)
    }

    @Test func stickyKeysClaimsFallBackToTheConfig() {
        let session = Self.session()
        #expect(Self.sticky(session.handle(.setStickyKeys(true), from: Self.alice, view: Self.view).effects) == [true])
        #expect(Self.sticky(session.handle(.setStickyKeys(false), from: Self.alicesBar, view: Self.view).effects) == [false])
        #expect(Self.sticky(session.disconnected(Self.alicesBar.id)) == [true])
        #expect(Self.sticky(session.disconnected(Self.alice.id)) == [nil])
    }

    /// Issue 33 item 5: several seats. Alice is at seat0 and Bob at seat1: each one's keymap,
    /// sticky keys, scopes and text input steer only their own seat's keyboards; an
    /// operator's claim steers every seat; when Bob leaves seat1 his claims stop steering it.
    @Test func eachSeatIsSteeredByItsOwnUser() {
        let session = Self.session()
        let de = ControlRequest.Keymap(layout: "de"), ru = ControlRequest.Keymap(layout: "ru")
        let a = session.handle(.setKeymap(de), from: Self.alice, view: Self.view).effects
        #expect(Self.keymaps(a) == [de] && Self.keymaps(a, seat: "seat1").isEmpty)
        let b = session.handle(.setKeymap(ru), from: Self.bob, view: Self.view).effects
        #expect(Self.keymaps(b).isEmpty && Self.keymaps(b, seat: "seat1") == [ru])
        let s = session.handle(.setStickyKeys(true), from: Self.bob, view: Self.view).effects
        #expect(Self.sticky(s).isEmpty && Self.sticky(s, seat: "seat1") == [true])
        let scopes = session.handle(.setScopes(["terminal"]), from: Self.bob, view: Self.view).effects
        #expect(scopes.contains { if case .systemScopes(["terminal"], seat: "seat1") = $0 { true } else { false } })
        #expect(!scopes.contains { if case .systemScopes(_, seat: "seat0") = $0 { true } else { false } })
        #expect(session.claims(seat: "seat0").keymap == de && session.claims(seat: "seat1").keymap == ru)
        #expect(session.claims(seat: "seat0").scopes == [] && session.claims(seat: "seat1").scopes == ["terminal"])
        // run_command follows the caller's seat: Bob's chain has terminal, Alice's does not.
        #expect(session.seat(of: Self.bob) == "seat1" && session.seat(of: Self.alice) == "seat0")
        // An operator's claim is the newest on both seats.
        let root = ControlSession.Peer(id: 11, uid: 0, trusted: true)
        let op = session.handle(.setScopes(["kiosk"]), from: root, view: Self.view).effects
        #expect(op.contains { if case .systemScopes(["kiosk"], seat: "seat0") = $0 { true } else { false } })
        #expect(op.contains { if case .systemScopes(["kiosk"], seat: "seat1") = $0 { true } else { false } })
        // Bob leaves seat1 (nobody there): his keymap and sticky keys stop steering it.
        let left = session.sessionsChanged(ActiveSessions(available: true, activeUID: ["seat0": 1000]), problem: nil)
        #expect(Self.keymaps(left, seat: "seat1") == [nil] && Self.sticky(left, seat: "seat1") == [nil] && Self.keymaps(left).isEmpty)
    }

    /// The red team: a uid with no session at any seat set `fr` and forced sticky keys on,
    /// and the console user's Ctrl+W ran the system's Ctrl+Z command. Refused, with the reason.
    @Test func aUserWithoutTheActiveSessionCannotChangeHowKeysAreRead() {
        let session = ControlSession()
        _ = session.sessionsChanged(ActiveSessions(available: true, activeUID: ["seat0": 1000]), problem: nil)
        let mallory = ControlSession.Peer(id: 9, uid: 1006, trusted: false)
        let fr = session.handle(.setKeymap(.init(layout: "fr")), from: mallory, view: Self.view)
        #expect(fr.reply == .refused(name: "set_keymap", message: "set_keymap: uid 1006 does not own the active session of a seat; the keymap and sticky keys are set by the person at the keyboard (operators, or the user whose session is active)"))
        #expect(fr.effects.isEmpty && session.keymap == nil)
        let sticky = session.handle(.setStickyKeys(true), from: mallory, view: Self.view)
        #expect(sticky.reply?.error?.contains("does not own the active session of a seat") == true)
        #expect(sticky.effects.isEmpty && session.stickyKeys == nil)
        // Withdrawing what one never claimed is harmless and allowed.
        #expect(session.handle(.setKeymap(nil), from: mallory, view: Self.view).reply == .setKeymap(nil))
        // An operator may always.
        let root = ControlSession.Peer(id: 10, uid: 0, trusted: true)
        #expect(Self.keymaps(session.handle(.setKeymap(.init(layout: "fr")), from: root, view: Self.view).effects) == [.init(layout: "fr")])
    }

    /// A user's claim steers only while their session is active: when alice switches to the
    /// greeter her keymap and sticky keys stop steering (the service's own again), and when
    /// she comes back they steer again.
    @Test func aClaimStopsSteeringWhenItsUserLeavesTheSeat() {
        let session = ControlSession()
        _ = session.sessionsChanged(ActiveSessions(available: true, activeUID: ["seat0": 1000]), problem: nil)
        let de = ControlRequest.Keymap(layout: "de")
        #expect(Self.keymaps(session.handle(.setKeymap(de), from: Self.alice, view: Self.view).effects) == [de])
        #expect(Self.sticky(session.handle(.setStickyKeys(true), from: Self.alice, view: Self.view).effects) == [true])
        let left = session.sessionsChanged(ActiveSessions(available: true, activeUID: [:]), problem: nil)
        #expect(Self.keymaps(left) == [nil] && Self.sticky(left) == [nil])
        #expect(session.keymap == nil && session.stickyKeys == nil)
        let back = session.sessionsChanged(ActiveSessions(available: true, activeUID: ["seat0": 1000]), problem: nil)
        #expect(Self.keymaps(back) == [de] && Self.sticky(back) == [true])
    }

    /// Budgets: a few changes a second per uid; a keymap never seen costs its compile out of
    /// the uid's work budget before it is compiled; a known one (compiled or refused) costs none.
    @Test func keymapRequestsAreHeldToARateAndTheWorkBudget() {
        let session = Self.session()
        var compiles = 0
        func view(at ms: Int64, known: Bool = false) -> ControlSession.View {
            var v = Self.view
            v.now = EventTime(microseconds: ms * 1000)
            v.keymapKnown = { _ in known }
            v.keymapProblem = { _ in compiles += 1; return nil }
            return v
        }
        let rate = ControlSession.desktopClaimsPerSecond
        var replies: [ControlReply?] = []
        for i in 0..<(rate + 2) { replies.append(session.handle(.setKeymap(.init(layout: "l\(i)")), from: Self.alice, view: view(at: 0, known: true)).reply) }
        #expect(replies.prefix(rate).allSatisfy { $0?.error == nil })
        #expect(replies.suffix(2).allSatisfy { $0?.error?.contains("more than \(rate) keymap and sticky-keys changes per second for uid 1000") == true })
        // The bucket refills while requests keep coming: 50 a second for 4 s gets 4 a second through.
        var accepted = 0
        for i in 0..<200 where session.handle(.setStickyKeys(i % 2 == 0), from: Self.bob, view: view(at: 1000 + Int64(i) * 20)).reply?.error == nil { accepted += 1 }
        #expect(accepted >= rate * 4 && accepted <= rate * 5, "\(accepted)")
        // A keymap never seen costs its compile (64 KiB) out of the work budget that
        // registrations spend: once alice's registrations spent it, a new keymap is refused
        // before it compiles, and a known one (compiled or refused before) still passes.
        let specs = (0..<500).map { ControlRequest.CommandSpec(id: "c\($0)", keys: "Ctrl+Alt+F\($0 % 12 + 1)", scope: "s\($0 / 12)") }
        var registered = 0
        while registered < 10, session.handle(.register(commands: specs, sequenceTimeoutMilliseconds: nil), from: Self.alice, view: view(at: 20_000)).reply?.error == nil {
            registered += 1
        }
        #expect(registered < 10)
        compiles = 0
        let new = session.handle(.setKeymap(.init(layout: "never-seen")), from: Self.alice, view: view(at: 20_000))
        #expect(new.reply?.error?.contains("uid 1000 asks for new keymaps faster than 4 compiles per second") == true, "\(String(describing: new.reply))")
        #expect(compiles == 0)
        #expect(session.handle(.setKeymap(.init(layout: "cached")), from: Self.alice, view: view(at: 20_000, known: true)).reply?.error == nil)
        #expect(compiles == 1)
    }
}
