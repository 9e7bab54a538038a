import KbdSystem
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// A control-socket client: the one way the agent, the CLI and the bench talk to the service.
/// It connects, checks who serves the socket before sending anything (root, the service's
/// user, or the caller; any other uid is refused with a message naming it, since a server
/// of another user would get the client's table and could tell it what to run), sends typed
/// requests and reads bounded lines. It owns its descriptor.
public final class ControlClient {
    public let path: String
    /// The connected socket, -1 when not connected.
    public private(set) var fd: Int32 = -1
    private let input: LineBuffer

    /// The longest line accepted from the service (a listing of 1,000 commands fits many times).
    public static let defaultMaxLineBytes = 1 << 20

    public init(path: String, maxLineBytes: Int = ControlClient.defaultMaxLineBytes) {
        self.path = path
        input = LineBuffer(maxLineBytes: maxLineBytes)
    }

    deinit { disconnect() }

    public var isConnected: Bool { fd >= 0 }

    /// Connects and checks the server. `trustedUIDs` are those besides root and the caller
    /// (the service's user); `nonBlocking` for an event loop. The socket is close-on-exec.
    public func connect(trustedUIDs: [UInt32] = ServerTrust.serviceUIDs(), nonBlocking: Bool = false) throws(ControlClientError) {
        disconnect()
        let socket: Int32
        do { socket = try UnixSocketAddress(path: path).connect() } catch {
            throw ControlClientError(kind: .cannotConnect(error.errno), message: error.message)
        }
        if let refusal = ServerTrust.refusal(socket, path: path, trusted: trustedUIDs) {
            close(socket)
            throw ControlClientError(kind: .untrustedServer, message: refusal)
        }
        _ = fcntl(socket, F_SETFD, fcntl(socket, F_GETFD) | FD_CLOEXEC)
        if nonBlocking { _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK) }
        fd = socket
    }

    public func disconnect() {
        if fd >= 0 { close(fd) }
        fd = -1
        input.reset()
    }

    /// What a client sends: a typed request, or (`watch --request`, for diagnosis) a line a
    /// person typed, sent as it is so the service's own answer to it can be seen.
    public enum Outgoing: Sendable {
        case request(ControlRequest)
        case raw(String)
    }

    /// Sends one request; false (and disconnected) when the connection broke.
    @discardableResult
    public func send(_ request: ControlRequest) -> Bool { send(.request(request)) }

    /// Sends one line; false (and disconnected) when the connection broke. A full socket
    /// is waited on for up to a second (the service reads every client within a turn).
    @discardableResult
    public func send(_ outgoing: Outgoing) -> Bool {
        if sendKeepingConnection(outgoing) { return true }
        disconnect()
        return false
    }

    /// Sends one line (never raising SIGPIPE); false when the connection broke, which stays
    /// open for reading what the service said before it closed (a refusal).
    private func sendKeepingConnection(_ outgoing: Outgoing) -> Bool {
        guard fd >= 0 else { return false }
        let line: String
        switch outgoing {
        case .request(let request): line = request.line
        case .raw(let text): line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        }
        let bytes = Array((line + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno == EAGAIN {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&p, 1, 1000) > 0 { continue }
            }
            return false
        }
        return true
    }

    /// The reason `read` gives when the service closed the connection.
    public static let closedByService = "the service closed the connection"

    /// What one read brought.
    public enum Incoming: Equatable {
        /// Bytes arrived (or nothing yet): take lines with `nextLine()`.
        case ready
        /// The service closed the connection, or reading failed (then disconnected).
        case closed(String)
    }

    /// Reads once, at most `budget` bytes.
    public func read(budget: Int = 65536) -> Incoming {
        guard fd >= 0 else { return .closed("not connected") }
        switch input.read(from: fd, budget: budget) {
        case .bytes, .again: return .ready
        case .eof: disconnect(); return .closed(Self.closedByService)
        case .error(let e): disconnect(); return .closed(SystemError(operation: "read", errno: e).message)
        }
    }

    /// The next line the service sent, decoded; nil when no complete line is buffered.
    /// A line over the limit, or one that is not a reply or an event, is an error.
    public func nextLine() throws(ControlClientError) -> ControlLine? {
        switch input.nextLine() {
        case .none: return nil
        case .tooLong:
            throw ControlClientError(kind: .badLine, message: "\(path.escapingControlCharacters): the server sent a line longer than \(Self.size(input.maxLineBytes)); not a kbd-commandd server")
        case .line(let bytes):
            let text = String(decoding: bytes, as: UTF8.self)
            do { return try ControlLine.parse(text) } catch {
                throw ControlClientError(kind: .badLine, message: "\(path.escapingControlCharacters): the server sent a line that is not a kbd-commandd reply or event (\(error.message))")
            }
        }
    }

    /// The next raw line (for `watch`, which prints what the service sends); nil when none is buffered.
    public func nextRawLine() throws(ControlClientError) -> String? {
        switch input.nextLine() {
        case .none: return nil
        case .tooLong:
            throw ControlClientError(kind: .badLine, message: "\(path.escapingControlCharacters): the server sent a line longer than \(Self.size(input.maxLineBytes)); not a kbd-commandd server")
        case .line(let bytes): return String(decoding: bytes, as: UTF8.self)
        }
    }

    static func size(_ bytes: Int) -> String { bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB" }

    /// Connects (blocking), sends `request` and returns the reply to it (events before it are
    /// skipped); then disconnects. For the one-request commands (`reload`, `commands --active`).
    public func ask(_ request: ControlRequest, trustedUIDs: [UInt32] = ServerTrust.serviceUIDs()) throws(ControlClientError) -> ControlReply {
        try connect(trustedUIDs: trustedUIDs)
        defer { disconnect() }
        // A service that refused the connection (too many clients) wrote why and closed it:
        // the request cannot be sent, but the reason can still be read.
        let sent = sendKeepingConnection(.request(request))
        while true {
            while let line = try nextLine() {
                if case .reply(let reply) = line { return reply }
            }
            if case .closed(let reason) = read() {
                if !sent { throw ControlClientError(kind: .closed, message: "\(path.escapingControlCharacters): cannot send the request") }
                throw ControlClientError(kind: .closed, message: "\(path.escapingControlCharacters): \(reason) without a reply")
            }
        }
    }
}

public struct ControlClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// connect(2) failed with this errno (the service is not running, or refuses this user).
        case cannotConnect(Int32)
        /// The socket is served by a uid the client does not trust.
        case untrustedServer
        /// The connection closed before the reply.
        case closed
        /// A line that is too long or not of the protocol.
        case badLine
    }
    public var kind: Kind
    public var message: String
    public var description: String { message }
}

/// Who may serve the control socket for a client.
public enum ServerTrust {
    /// The service's user, `kbd-commandd`, when it exists (besides root and the caller). The
    /// package creates it as a system account in /etc/passwd, which is read directly: going
    /// through NSS (getpwnam) would load libnss_systemd into the resident agent (about 300 KiB)
    /// for one lookup per connection. Only when /etc/passwd cannot be read does NSS answer.
    public static func serviceUIDs(passwd: String = "/etc/passwd") -> [UInt32] {
        guard let bytes = try? readWholeFile(path: passwd, limit: 8 << 20) else {
            return getpwnam("kbd-commandd").map { [$0.pointee.pw_uid] } ?? []
        }
        return uids(of: "kbd-commandd", inPasswd: String(decoding: bytes, as: UTF8.self))
    }

    /// The uid of `name` in the text of a passwd file (`name:x:uid:gid:…` lines).
    static func uids(of name: String, inPasswd text: String) -> [UInt32] {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
            if fields.count >= 3, fields[0] == name, let uid = UInt32(fields[2]) { return [uid] }
        }
        return []
    }

    /// Why the server on `fd` is not trusted, or nil: it must run as root, as one of
    /// `trusted`, or as the caller (SO_PEERCRED: its credentials when it called listen()).
    /// There is deliberately no way to trust others.
    public static func refusal(_ fd: Int32, path: String, trusted: [UInt32]) -> String? {
        var peer = kbd_peer()
        guard kbd_peer_credentials(fd, &peer) == 0 else {
            return "\(path.escapingControlCharacters): cannot learn who serves it (SO_PEERCRED: \(SystemError(operation: "getsockopt", errno: errno).message)); not trusting it"
        }
        return refusal(serverUID: peer.uid, path: path, trusted: trusted, own: geteuid())
    }

    /// The rule on its own: root, the caller (`own`) and `trusted` may serve.
    public static func refusal(serverUID: UInt32, path: String, trusted: [UInt32], own: UInt32) -> String? {
        guard serverUID != 0, serverUID != own, !trusted.contains(serverUID) else { return nil }
        return "\(path.escapingControlCharacters) is served by uid \(serverUID), not by root, kbd-commandd or you (uid \(own)); not trusting it"
    }
}

/// How long to wait before connecting again. The wait doubles after every failure, up to
/// `maximum`, and after every connection that did not last `stable` (a server that accepts
/// and closes at once is not retried every 100 ms forever); a connection that lasted goes
/// back to `initial`.
public struct ReconnectBackoff: Sendable, Equatable {
    public let initial: Int
    public let maximum: Int
    /// How long a connection must last (milliseconds) before the wait starts over.
    public let stable: Int64
    public private(set) var delayMilliseconds: Int
    private var connectedAt: Int64?

    public init(initial: Int = 100, maximum: Int = 5000, stable: Int64 = 5000) {
        self.initial = initial
        self.maximum = maximum
        self.stable = stable
        delayMilliseconds = initial
    }

    /// A connection attempt failed: the wait to use now (the next one is longer).
    public mutating func failed() -> Int {
        let wait = delayMilliseconds
        delayMilliseconds = min(delayMilliseconds * 2, maximum)
        return wait
    }

    /// Connected at `now` (milliseconds on a monotonic clock).
    public mutating func connected(now: Int64) { connectedAt = now }

    /// The connection ended at `now`: the wait before connecting again.
    public mutating func disconnected(now: Int64) -> Int {
        defer { connectedAt = nil }
        if let since = connectedAt, now - since >= stable { delayMilliseconds = initial }
        return failed()
    }
}
