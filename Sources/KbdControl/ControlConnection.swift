/// A client's connection lifecycle, pure: connect, back off, resubscribe after a reconnect,
/// and say each thing worth saying once. It does no I/O and has no clock: its owner (the
/// agent's loop, the bar's GTK loop, `watch`'s blocking loop) reports what happened —
/// a connect that failed or succeeded, a line received, the connection lost, the timer
/// fired — and performs the `Action`s it gets back, in order.
///
/// Standing requests (a subscription, a registered table, a claim such as the keymap) are
/// kept by name and sent again, in the order first stood, on every new connection.
public struct ControlConnection: Sendable {
    /// What the owner does next.
    public enum Action: Equatable, Sendable {
        /// Call `ControlClient.connect` now and report the outcome.
        case connect
        /// Watch the connected socket's descriptor for reading.
        case watch(Int32)
        /// Stop watching the socket (it is closed).
        case unwatch
        /// Send these requests, in order (a failed send is a lost connection).
        case send([ControlRequest])
        /// Try connecting again after this many milliseconds (`timerFired` then).
        case armTimer(milliseconds: Int)
        /// Say this (a log line); each is said once where that matters.
        case say(Notice)
        /// No more attempts: the owner fails with this error (`watch` without `--reconnect`).
        case giveUp(ControlClientError)
    }

    /// Things worth saying, in the owner's words.
    public enum Notice: Equatable, Sendable {
        /// The service is not there yet (the connect error's message).
        case waiting(String)
        /// Someone else serves the socket (never believed, never sent anything).
        case untrustedServer(String)
        /// The service refuses this user (the owner's advice on what to do).
        case refused(String)
        case connected
        /// The connection ended (the reason).
        case lost(String)
    }

    /// How an owner wants its lifecycle.
    public struct Policy: Sendable, Equatable {
        public enum Waiting: Sendable, Equatable {
            /// Said at a failure while the wait is at its start (the agent's: at start, and
            /// after a connection that lasted).
            case whenTheWaitStartsOver
            /// Said once per outage: again after a connection (the bar's).
            case oncePerOutage
            case never
        }

        public enum Untrusted: Sendable, Equatable {
            /// Said once (until the real service answered), then waited out on the backoff.
            case sayOnce
            /// Given up at once (`watch`).
            case giveUp
        }

        public var backoff: ReconnectBackoff
        public var waiting: Waiting
        public var untrusted: Untrusted
        /// After a lost connection: wait on the backoff (the agent, the bar), or connect at once
        /// with the wait started over (`watch --reconnect`).
        public var reconnectAtOnce: Bool
        /// Failed attempts before giving up (nil: never; `watch --retry`).
        public var attempts: Int?
        /// Whether an answer from the service lets a later refusal be said again (the agent's).
        public var answerResetsRefusal: Bool

        public init(backoff: ReconnectBackoff = ReconnectBackoff(), waiting: Waiting, untrusted: Untrusted = .sayOnce,
                    reconnectAtOnce: Bool = false, attempts: Int? = nil, answerResetsRefusal: Bool = false) {
            self.backoff = backoff
            self.waiting = waiting
            self.untrusted = untrusted
            self.reconnectAtOnce = reconnectAtOnce
            self.attempts = attempts
            self.answerResetsRefusal = answerResetsRefusal
        }

        /// The session agent's: 0.1 s doubling to 5 s (started over after a connection that
        /// lasted 5 s), refusals said once until the service answers.
        public static let agent = Policy(waiting: .whenTheWaitStartsOver, answerResetsRefusal: true)
        /// The bar's: the agent's wait, "waiting" said once per outage.
        public static let bar = Policy(waiting: .oncePerOutage)

        /// `watch`: with `reconnect`, 0.1 s doubling to 2 s, for ever, and at once after the
        /// service closed; without, every 0.1 s for `attempts` more tries. A server of
        /// someone else is an error either way.
        public static func watch(reconnect: Bool, attempts: Int) -> Policy {
            reconnect
                ? Policy(backoff: ReconnectBackoff(initial: 100, maximum: 2000), waiting: .never, untrusted: .giveUp, reconnectAtOnce: true)
                : Policy(backoff: ReconnectBackoff(initial: 100, maximum: 100), waiting: .never, untrusted: .giveUp, attempts: attempts)
        }
    }

    public private(set) var policy: Policy
    public private(set) var isConnected = false
    /// Whether the service sent anything on this connection.
    public private(set) var answered = false
    /// Connections made so far (the second and later are reconnections).
    public private(set) var connections = 0
    private var saidRefusal = false
    private var saidWaiting = false
    private var failures = 0
    private var standing: [(name: String, request: ControlRequest)] = []

    public init(policy: Policy) {
        self.policy = policy
    }

    /// The wait the next failure will use (milliseconds).
    public var nextWaitMilliseconds: Int { policy.backoff.delayMilliseconds }

    /// The standing requests, in the order they are sent after a connect.
    public var standingRequests: [ControlRequest] { standing.map(\.request) }

    // MARK: - What happened

    /// Starting: connect now.
    public mutating func start() -> [Action] { isConnected ? [] : [.connect] }

    /// The reconnect timer fired.
    public mutating func timerFired() -> [Action] { isConnected ? [] : [.connect] }

    /// `connect` failed with `error`; `advice`: the owner's words when the error means the
    /// service refuses this user (said once, like an untrusted server).
    public mutating func connectFailed(_ error: ControlClientError, advice: String? = nil) -> [Action] {
        var actions: [Action] = []
        failures += 1
        if case .untrustedServer = error.kind {
            if policy.untrusted == .giveUp { return [.giveUp(error)] }
            if !saidRefusal { actions.append(.say(.untrustedServer(error.message))) }
            saidRefusal = true
        } else if let advice {
            if !saidRefusal { actions.append(.say(.refused(advice))) }
            saidRefusal = true
        } else {
            switch policy.waiting {
            case .whenTheWaitStartsOver:
                if policy.backoff.delayMilliseconds == policy.backoff.initial { actions.append(.say(.waiting(error.message))) }
            case .oncePerOutage:
                if !saidWaiting { actions.append(.say(.waiting(error.message))) }
                saidWaiting = true
            case .never: break
            }
        }
        if let attempts = policy.attempts, failures > attempts { return actions + [.giveUp(error)] }
        return actions + [.armTimer(milliseconds: policy.backoff.failed())]
    }

    /// Connected on `fd` at `nowMilliseconds` (monotonic): watch it, say so, send the standing requests.
    public mutating func connected(fd: Int32, nowMilliseconds: Int64) -> [Action] {
        policy.backoff.connected(now: nowMilliseconds)
        isConnected = true
        answered = false
        saidWaiting = false
        failures = 0
        connections += 1
        var actions: [Action] = [.watch(fd), .say(.connected)]
        if !standing.isEmpty { actions.append(.send(standingRequests)) }
        return actions
    }

    /// A line came from the service.
    public mutating func received() {
        if !answered, policy.answerResetsRefusal { saidRefusal = false }
        answered = true
    }

    /// The connection ended (`reason`) at `nowMilliseconds`; `advice`: the owner's words when
    /// a close before any answer means the service refuses this user (said once).
    public mutating func lost(_ reason: String, nowMilliseconds: Int64, advice: String? = nil) -> [Action] {
        guard isConnected else { return [] }
        isConnected = false
        var actions: [Action] = [.unwatch]
        if !answered, let advice {
            if !saidRefusal { actions.append(.say(.refused(advice))) }
            saidRefusal = true
        } else {
            actions.append(.say(.lost(reason)))
        }
        let wait = policy.backoff.disconnected(now: nowMilliseconds)
        if policy.reconnectAtOnce {
            policy.backoff = ReconnectBackoff(initial: policy.backoff.initial, maximum: policy.backoff.maximum, stable: policy.backoff.stable)
            return actions + [.connect]
        }
        return actions + [.armTimer(milliseconds: wait)]
    }

    /// The owner connects to another socket now (the agent follows the default one): what was
    /// said of the old one may be said again of the new.
    public mutating func serverMoved() {
        saidRefusal = false
        saidWaiting = false
    }

    // MARK: - Standing requests

    /// Keeps `request` under `name` (replacing what stood there) and sends it now when connected.
    public mutating func stand(_ name: String, _ request: ControlRequest) -> [Action] {
        if let i = standing.firstIndex(where: { $0.name == name }) {
            standing[i].request = request
        } else {
            standing.append((name, request))
        }
        return isConnected ? [.send([request])] : []
    }

    /// No longer sends `name` after a reconnect.
    public mutating func withdraw(_ name: String) {
        standing.removeAll { $0.name == name }
    }
}
