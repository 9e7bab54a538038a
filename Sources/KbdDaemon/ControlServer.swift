import KbdSystem
import Logging
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// The control socket's connections: a listening Unix stream socket and its
/// clients, each with a bounded input line and a bounded output queue. A
/// client that sends a line longer than `maxLineBytes`, or stops reading until
/// `maxQueuedBytes` pile up, is disconnected with a logged reason; the event
/// loop never blocks on a client. Peers are checked with `SO_PEERCRED`.
final class ControlServer {
    final class Client {
        let id: Int
        let fd: Int32
        let uid: UInt32
        var input: [UInt8] = []
        var output: [UInt8] = []
        var subscriptions: Set<String> = []
        init(id: Int, fd: Int32, uid: UInt32) {
            self.id = id
            self.fd = fd
            self.uid = uid
        }
    }

    let path: String
    let listener: Int32
    private let logger: Logger
    let maxLineBytes: Int
    let maxQueuedBytes: Int
    private(set) var clients: [Int32: Client] = [:]
    private var nextID = 1
    /// Which peers may connect: by default root, our own uid, or a member of our
    /// group (primary or supplementary, read from /proc/PID/status of the peer).
    var authorize: (_ uid: UInt32, _ gid: UInt32, _ pid: Int32) -> Bool = { uid, gid, pid in
        uid == 0 || uid == geteuid() || gid == getegid() || peerGroups(pid).contains(getegid())
    }

    /// Binds `path` (replacing a stale socket) with mode `mode`.
    /// The corresponding C functions are `socket`, `bind`, `chmod` and `listen`.
    init(path: String, mode: UInt32 = 0o660, logger: Logger, maxLineBytes: Int = 64 * 1024, maxQueuedBytes: Int = 1 << 20) throws(SystemError) {
        self.path = path
        self.logger = logger
        self.maxLineBytes = maxLineBytes
        self.maxQueuedBytes = maxQueuedBytes
        let address = try UnixSocketAddress(path: path)
        let fd = try UnixSocketAddress.streamSocket(nonBlocking: true)
        unlink(path)
        do { try address.bind(fd) } catch {
            close(fd)
            throw error
        }
        chmod(path, mode_t(mode))
        guard listen(fd, 256) == 0 else {
            let e = errno
            close(fd)
            throw SystemError(operation: "listen", path: path, errno: e)
        }
        listener = fd
    }

    deinit {
        for c in clients.values { close(c.fd) }
        close(listener)
        unlink(path)
    }

    /// Accepts every pending connection; returns the new clients.
    func acceptAll() -> [Client] {
        var out: [Client] = []
        while true {
            let fd = kbd_accept4(listener, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            if fd < 0 { break }
            var cred = kbd_peer()
            guard kbd_peer_credentials(fd, &cred) == 0, authorize(cred.uid, cred.gid, cred.pid) else {
                logger.warning("control: refused a client (uid \(cred.uid), gid \(cred.gid), pid \(cred.pid)): not authorised")
                close(fd)
                continue
            }
            let client = Client(id: nextID, fd: fd, uid: cred.uid)
            nextID += 1
            clients[fd] = client
            out.append(client)
        }
        return out
    }

    enum ReadResult {
        case lines([String])
        case closed(reason: String?)
    }

    /// Reads what the client sent; complete lines come back.
    func read(_ client: Client) -> ReadResult {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var lines: [String] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(client.fd, $0.baseAddress, $0.count) }
            if n > 0 {
                client.input.append(contentsOf: buffer[0..<n])
                while let nl = client.input.firstIndex(of: 0x0A) {
                    lines.append(String(decoding: client.input[..<nl], as: UTF8.self))
                    client.input.removeSubrange(...nl)
                }
                if client.input.count > maxLineBytes {
                    return .closed(reason: "request line longer than \(maxLineBytes) bytes")
                }
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EINTR) { return .lines(lines) }
            return lines.isEmpty ? .closed(reason: nil) : .lines(lines)
        }
    }

    enum SendResult { case sent, overflow, broken }

    /// Queues a line for the client and writes what the socket takes now.
    /// `.overflow`: the client stopped reading; `.broken`: it went away. Either way it must be dropped.
    func send(_ line: String, to client: Client) -> SendResult {
        if client.output.count + line.utf8.count + 1 > maxQueuedBytes { return .overflow }
        client.output.append(contentsOf: line.utf8)
        client.output.append(0x0A)
        return flush(client) ? .sent : .broken
    }

    /// Writes queued output; false on a broken connection.
    func flush(_ client: Client) -> Bool {
        while !client.output.isEmpty {
            let n = client.output.withUnsafeBytes { Glibc.send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                client.output.removeFirst(n)
            } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
                return true
            } else {
                return false
            }
        }
        return true
    }

    func remove(_ client: Client) {
        clients[client.fd] = nil
        close(client.fd)
    }
}

/// The supplementary groups of a process (`Groups:` in /proc/PID/status); empty if unreadable.
func peerGroups(_ pid: Int32) -> [UInt32] {
    guard let bytes = try? readWholeFile(path: "/proc/\(pid)/status", limit: 1 << 16) else { return [] }
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("Groups:") {
        return line.dropFirst(7).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0) }
    }
    return []
}
