import KbdCore
import KbdCommands
import KbdConfig
import KbdPipeline
import KbdControl
import Testing

/// Issue 35: the control session decides who is sent each HUD, toolbar and session event
/// (the daemon only writes the lines): an operator and the user at the seat see the HUD and
/// the toolbar, another local user does not; a toolbar is sent again only when it changed;
/// a user learns that their own session came or went.
@Suite struct SessionDeliveryTests {
    static let root = ControlSession.Peer(id: 1, uid: 0, trusted: true)
    static let alice = ControlSession.Peer(id: 2, uid: 1000, trusted: false)
    static let bob = ControlSession.Peer(id: 3, uid: 1001, trusted: false)

    static func pipeline() throws -> Pipeline {
        let table = try ConfigLoader.parse("[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n", path: "s.toml").table
        return try Pipeline(keymap: try Keymaps.make("us"), table: table)
    }

    /// Alice at seat0; all three connected and subscribed to the HUD and the toolbar.
    static func session(pipeline: Pipeline) -> ControlSession {
        let session = ControlSession()
        _ = session.sessionsChanged(ActiveSessions(available: true, activeUID: [ActiveSessions.defaultSeat: 1000]), problem: nil)
        let view = ControlSession.View(hardwareKeyboard: true, presenceReason: "external keyboard", geometry: nil, systemTable: pipeline.table,
                                       allowKeyEvents: false, devices: { [] })
        for peer in [root, alice, bob] {
            session.connected(peer)
            let outcome = session.handle(.subscribe([.hud, .toolbar]), from: peer, view: view)
            #expect(outcome.reply?.ok == true)
        }
        return session
    }

    @Test func theHudAndTheToolbarGoToOperatorsAndThePersonAtTheKeyboard() throws {
        let pipeline = try Self.pipeline()
        let session = Self.session(pipeline: pipeline)
        #expect(session.subscriptions(of: 3) == [.hud, .toolbar])
        let hud = session.hudDeliveries(time: EventTime(microseconds: 2_000_000), trigger: .hold, view: pipeline.hudView(pending: nil), pipeline: pipeline)
        #expect(hud.map(\.client) == [1, 2])
        #expect(hud.first?.event.time == 2)
        // Refreshed while it stays shown: only to those it changed for (nobody).
        #expect(session.hudDeliveries(time: .zero, trigger: .hold, view: pipeline.hudView(pending: nil), onlyChanged: true, pipeline: pipeline).isEmpty)
        #expect(session.toolbarDeliveries(time: .zero, pipeline: pipeline).map(\.client) == [1, 2])
        #expect(session.toolbarDeliveries(time: .zero, pipeline: pipeline).isEmpty)
        #expect(session.hudDrawn)
        // Alice leaves: her client is no longer sent anything; bob still is not.
        _ = session.disconnected(2)
        #expect(session.hudDeliveries(time: .zero, trigger: .hold, view: nil, pipeline: pipeline).map(\.client) == [1])
    }

    @Test func aUserLearnsOfTheirOwnSessionAndSubscribersOfEveryone() throws {
        let pipeline = try Self.pipeline()
        let session = Self.session(pipeline: pipeline)
        var seen: [Int] = []
        session.forEachSubscriber(of: .toolbar) { seen.append($0) }
        #expect(seen.sorted() == [1, 2, 3])
        let came = session.sessionEventDeliveries(uid: 1001, seat: "seat0", active: true, time: .zero)
        #expect(came.map(\.client) == [3])
        #expect(came.first?.event.payload == .session(seat: "seat0", active: true, uid: nil))
        let left = session.sessionEventDeliveries(uid: 1000, seat: "seat0", active: false, time: .zero)
        #expect(left.map(\.client) == [2])
    }
}
