import KbdPipeline
@testable import KbdControl
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 35: one connect/backoff/resubscribe lifecycle for the agent, the bar and `watch`,
/// pure and driven by hand here (the clock is the test's milliseconds).
@Suite struct ControlConnectionTests {
    let refused = ControlClientError(kind: .cannotConnect(ECONNREFUSED), message: "connect: Connection refused")
    let untrusted = ControlClientError(kind: .untrustedServer, message: "/run/x.socket is served by uid 1001")

    func waits(_ actions: [ControlConnection.Action]) -> [Int] {
        actions.compactMap { if case .armTimer(let ms) = $0 { ms } else { nil } }
    }

    func notices(_ actions: [ControlConnection.Action]) -> [ControlConnection.Notice] {
        actions.compactMap { if case .say(let n) = $0 { n } else { nil } }
    }

    @Test func watchReconnectBacksOffFromATenthOfASecondToTwoSeconds() {
        var c = ControlConnection(policy: .watch(reconnect: true, attempts: 0))
        #expect(c.start() == [.connect])
        var all: [Int] = []
        for _ in 0..<8 { all += waits(c.connectFailed(refused)) }
        #expect(all == [100, 200, 400, 800, 1600, 2000, 2000, 2000])
    }

    @Test func theAgentAndTheBarBackOffToFiveSeconds() {
        for policy in [ControlConnection.Policy.agent, .bar] {
            var c = ControlConnection(policy: policy)
            var all: [Int] = []
            for _ in 0..<8 { all += waits(c.connectFailed(refused)) }
            #expect(all == [100, 200, 400, 800, 1600, 3200, 5000, 5000])
        }
    }

    @Test func watchWithoutReconnectTriesEveryTenthOfASecondThenGivesUp() {
        var c = ControlConnection(policy: .watch(reconnect: false, attempts: 2))
        #expect(c.connectFailed(refused) == [.armTimer(milliseconds: 100)])
        #expect(c.connectFailed(refused) == [.armTimer(milliseconds: 100)])
        #expect(c.connectFailed(refused) == [.giveUp(refused)])
        var w = ControlConnection(policy: .watch(reconnect: true, attempts: 0))
        #expect(w.connectFailed(untrusted) == [.giveUp(untrusted)])  // never waited out
    }

    @Test func anUntrustedServerIsSaidOnce() {
        var c = ControlConnection(policy: .bar)
        let first = c.connectFailed(untrusted)
        #expect(notices(first) == [.untrustedServer(untrusted.message)])
        for _ in 0..<5 { #expect(notices(c.connectFailed(untrusted)).isEmpty) }
        #expect(waits(c.connectFailed(untrusted)) == [5000])  // still backing off
    }

    @Test func theAgentSaysARefusalAgainOnlyAfterTheServiceAnswered() {
        var c = ControlConnection(policy: .agent)
        #expect(notices(c.connectFailed(untrusted)) == [.untrustedServer(untrusted.message)])
        #expect(notices(c.connectFailed(untrusted)).isEmpty)
        _ = c.connected(fd: 5, nowMilliseconds: 0)
        c.received()
        _ = c.lost("closed", nowMilliseconds: 10)
        #expect(notices(c.connectFailed(untrusted)) == [.untrustedServer(untrusted.message)])
        // A close before any answer, with the owner's advice: said once.
        c = ControlConnection(policy: .agent)
        _ = c.connected(fd: 5, nowMilliseconds: 20)
        #expect(notices(c.lost("closed", nowMilliseconds: 30, advice: "add yourself to the group")) == [.refused("add yourself to the group")])
        _ = c.connected(fd: 5, nowMilliseconds: 40)
        #expect(notices(c.lost("closed", nowMilliseconds: 50, advice: "add yourself to the group")).isEmpty)
    }

    @Test func waitingIsSaidAsEachOwnerSaysIt() {
        var bar = ControlConnection(policy: .bar)
        #expect(notices(bar.connectFailed(refused)) == [.waiting(refused.message)])
        #expect(notices(bar.connectFailed(refused)).isEmpty)
        _ = bar.connected(fd: 3, nowMilliseconds: 0)
        _ = bar.lost("closed", nowMilliseconds: 100)
        #expect(notices(bar.connectFailed(refused)) == [.waiting(refused.message)])  // once per outage

        var agent = ControlConnection(policy: .agent)
        #expect(notices(agent.connectFailed(refused)) == [.waiting(refused.message)])
        #expect(notices(agent.connectFailed(refused)).isEmpty)
        _ = agent.connected(fd: 3, nowMilliseconds: 0)
        _ = agent.lost("closed", nowMilliseconds: 10_000)  // lasted: the wait starts over (and is used)
        #expect(notices(agent.connectFailed(refused)).isEmpty)
    }

    @Test func subscribeRegisterAndClaimsAreSentAgainAfterAReconnect() {
        var c = ControlConnection(policy: .agent)
        let subscribe = ControlRequest.subscribe([.presence, .geometry])
        let register = ControlRequest.register(commands: [.init(id: "term", keys: "Ctrl+Alt+T")], sequenceTimeoutMilliseconds: nil)
        let keymap = ControlRequest.setKeymap(.init(layout: "us,de", variant: nil, options: nil, group: 0))
        #expect(c.stand("subscribe", subscribe).isEmpty)  // not connected: kept, not sent
        #expect(c.start() == [.connect])
        #expect(c.connected(fd: 7, nowMilliseconds: 0) == [.watch(7), .say(.connected), .send([subscribe])])
        #expect(c.stand("register", register) == [.send([register])])
        #expect(c.stand("keymap", keymap) == [.send([keymap])])
        c.received()
        let lost = c.lost("the service closed the connection", nowMilliseconds: 1000)
        #expect(lost == [.unwatch, .say(.lost("the service closed the connection")), .armTimer(milliseconds: 100)])
        #expect(c.timerFired() == [.connect])
        #expect(c.connectFailed(refused) == [.armTimer(milliseconds: 200)])
        #expect(c.timerFired() == [.connect])
        #expect(c.connected(fd: 8, nowMilliseconds: 2000) == [.watch(8), .say(.connected), .send([subscribe, register, keymap])])
        #expect(c.connections == 2)
        // A newer table replaces the old one in place; a withdrawn claim is not sent again.
        let newer = ControlRequest.register(commands: [], sequenceTimeoutMilliseconds: nil)
        #expect(c.stand("register", newer) == [.send([newer])])
        c.withdraw("keymap")
        _ = c.lost("closed", nowMilliseconds: 3000)
        #expect(c.connected(fd: 9, nowMilliseconds: 4000).last == .send([subscribe, newer]))
    }

    @Test func watchReconnectsAtOnceWithTheWaitStartedOver() {
        var c = ControlConnection(policy: .watch(reconnect: true, attempts: 0))
        for _ in 0..<3 { _ = c.connectFailed(refused) }
        _ = c.connected(fd: 4, nowMilliseconds: 0)
        #expect(c.lost("closed", nowMilliseconds: 1) == [.unwatch, .say(.lost("closed")), .connect])
        #expect(waits(c.connectFailed(refused)) == [100])
        #expect(c.timerFired() == [.connect])
    }

    /// The agent follows the default socket: when it moves, what was said of the old one (a
    /// stranger serving it, the wait) may be said once of the new one.
    @Test func aMovedSocketMaySayWhatItSaidOfTheOldOneOnce() {
        var c = ControlConnection(policy: .agent)
        #expect(notices(c.connectFailed(untrusted)) == [.untrustedServer(untrusted.message)])
        #expect(notices(c.connectFailed(untrusted)).isEmpty)
        c.serverMoved()
        #expect(notices(c.connectFailed(untrusted)) == [.untrustedServer(untrusted.message)])
        #expect(notices(c.connectFailed(untrusted)).isEmpty)
        var bar = ControlConnection(policy: .bar)
        #expect(notices(bar.connectFailed(refused)) == [.waiting(refused.message)])
        bar.serverMoved()
        #expect(notices(bar.connectFailed(refused)) == [.waiting(refused.message)])
        #expect(waits(bar.connectFailed(refused)) == [400])  // the backoff goes on
    }
}
