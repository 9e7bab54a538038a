import KbdCore
import KbdSystem
import KbdControl
import KbdProcess
import Logging
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// The control socket's connections: a listening Unix stream socket and its
/// clients. It owns their epoll registrations, so it arms writability only while a
/// client has output queued and stops reading a client that does not read its
/// replies. The event loop never blocks on a client:
/// - each wakeup reads at most `readBudget` bytes and handles at most
///   `linesPerWakeup` request lines per client (the rest waits for the next turn);
/// - a request line over `maxLineBytes`, or more than `maxQueuedBytes` of events
///   piling up unread, disconnects the client with a logged reason;
/// - at most `maxClients` are served; one more is told so and closed; when the
///   process runs out of descriptors the listener pauses (logged once) instead of
///   spinning, and resumes when a descriptor is freed or a second later;
/// - clients that are not operators share `maxClients - operatorReserve` slots, at most
///   `maxClientsPerUser` each: an operator (`kbd-commandd reload`, the admin's tools) always
///   finds a slot and one local user cannot take the others' agents' slots;
/// - of those, `activeReserve` are kept for the uid that owns a seat's active session (its
///   agent and its bar), and every other uid gets at most a fair share of what the others
///   left, `max(1, free / (uids holding slots + 1))`: fifteen local users cannot lock out
///   the one at the keyboard, nor leave nothing to a sixteenth;
/// - refusals are logged at most once a second, with the count of those not logged.
/// Peers are checked with `SO_PEERCRED` and `SO_PEERGROUPS` (the groups the peer
/// had at connect, not read back from /proc, which `ProtectProc=invisible` hides).
final class ControlServer {
    final class Client {
        let id: Int
        let fd: Int32
        let uid: UInt32
        /// Root, the service's user or a member of its group: every request. Otherwise a
        /// user's client (a session agent): its own table, presence and geometry only.
        let trusted: Bool
        let input: LineBuffer
        private(set) var output: [UInt8] = []
        private var head = 0
        /// Registered for writability (output is waiting for the socket).
        fileprivate(set) var wantsWritable = false
        /// Not read while its unread replies pile up.
        fileprivate(set) var readingPaused = false

        /// As the control session knows it.
        var peer: ControlSession.Peer { ControlSession.Peer(id: id, uid: uid, trusted: trusted) }

        init(id: Int, fd: Int32, uid: UInt32, trusted: Bool, maxLineBytes: Int) {
            self.id = id
            self.fd = fd
            self.uid = uid
            self.trusted = trusted
            input = LineBuffer(maxLineBytes: maxLineBytes)
        }

        var queuedBytes: Int { output.count - head }

        fileprivate func enqueue(_ line: String) {
            output.append(contentsOf: line.utf8)
            output.append(0x0A)
        }

        /// Writes what the socket takes; false on a broken connection.
        fileprivate func write() -> Bool {
            while head < output.count {
                let n = output.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + head, $0.count - head, Int32(MSG_NOSIGNAL)) }
                if n > 0 {
                    head += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
                    return false
                }
            }
            if head == output.count {
                output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
                head = 0
            } else if head > output.count / 2 {
                output.removeSubrange(0..<head)
                head = 0
            }
            return true
        }
    }

    let path: String
    let listener: Int32
    private let logger: Logger
    /// The daemon's loop: the listener is `.listener`, each client `.client(fd)`.
    private let loop: DaemonLoop
    let maxLineBytes: Int
    let maxQueuedBytes: Int
    let maxClients: Int
    /// Whether peers that are not trusted are served as users' clients (else refused).
    let userAgents: Bool
    let readBudget = 64 * 1024
    let linesPerWakeup = 64
    /// Request bytes handled per turn of the loop over all clients: many clients sending
    /// large registrations at once are served a 64 KiB line or so per turn, keys in between.
    let turnByteBudget = 64 * 1024
    private(set) var turnBytes = 0
    /// Output above which a client's requests are not read until it reads its replies.
    let pauseReadingAbove = 256 * 1024
    private(set) var clients: [Int32: Client] = [:]
    /// The same clients by id (the control session names them so).
    private var byID: [Int: Client] = [:]
    private var nextID = 1
    /// Slots only operators may take.
    let operatorReserve: Int
    /// At most this many clients of one uid that is not an operator.
    let maxClientsPerUser: Int
    /// Users' slots only the uid owning a seat's active session may take (as its first clients).
    let activeReserve: Int
    /// Clients of each uid that is not an operator.
    private var userClients: [UInt32: Int] = [:]
    private var userClientTotal = 0
    /// Refused clients: the last refusal logged, and those not logged since.
    private var refusalLoggedAt: EventTime?
    private var refusalsUnlogged = 0
    /// The inode bound, so that only our own socket is removed on exit.
    private var bound: (dev: UInt64, ino: UInt64)?
    /// Which peers may connect: by default root, our own uid, or a member of our group
    /// (primary or supplementary, as the socket reports them).
    var authorize: (_ uid: UInt32, _ gid: UInt32, _ groups: [UInt32]) -> Bool = { uid, gid, groups in
        uid == 0 || uid == geteuid() || gid == getegid() || groups.contains(getegid())
    }
    /// `SO_PEERCRED` of an accepted client, replaceable (tests give clients other uids): nil
    /// when the socket cannot say.
    var peerCredentials: (Int32) -> kbd_peer? = { fd in
        var cred = kbd_peer()
        return kbd_peer_credentials(fd, &cred) == 0 ? cred : nil
    }
    /// `accept4(2)`, replaceable to simulate running out of descriptors: (descriptor, errno).
    var accept: (Int32) -> (Int32, Int32) = { listener in
        let fd = kbd_accept4(listener, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
        return (fd, fd < 0 ? errno : 0)
    }
    /// Set while accepting is paused (out of descriptors): when to try again.
    private(set) var acceptRetryAt: EventTime?
    /// Request bytes per second of each uid outside the service's group, charged as a line is
    /// taken from the buffer, before it is parsed (a line costs at least `minimumLineCost`);
    /// a spent budget's lines are dropped unparsed, each answered with one fixed refusal.
    static let userRequestBytesPerSecond = 256 * 1024
    static let minimumLineCost = 256
    private var userRequestBudget: [UInt32: RateBudget] = [:]
    /// Lines dropped unparsed because their uid's budget was spent.
    private(set) var droppedUnparsed = 0
    /// Clients with complete request lines still buffered (over their per-wakeup share).
    private(set) var backlog: Set<Int32> = []
    private(set) var largestReadPerWakeup = 0

    /// Binds `path` with mode `mode` and registers the listener. A stale socket (nobody
    /// answers) is replaced; a live one (another instance serves it), or anything that is
    /// not a socket, is an error and left in place.
    /// The corresponding C functions are `socket`, `bind`, `chmod` and `listen`.
    init(path: String, mode: UInt32 = 0o660, logger: Logger, loop: DaemonLoop,
         maxLineBytes: Int = 64 * 1024, maxQueuedBytes: Int = 1 << 20, maxClients: Int = 256, userAgents: Bool = false,
         maxClientsPerUser: Int = 16) throws(SystemError) {
        self.path = path
        self.logger = logger
        self.loop = loop
        self.maxLineBytes = maxLineBytes
        self.maxQueuedBytes = maxQueuedBytes
        self.maxClients = maxClients
        self.userAgents = userAgents
        self.operatorReserve = min(max(maxClients / 16, 4), maxClients / 2)
        self.maxClientsPerUser = maxClientsPerUser
        self.activeReserve = min(2, (maxClients - operatorReserve) / 2)
        let address = try UnixSocketAddress(path: path)
        try Self.clearStale(path, address)
        let fd = try UnixSocketAddress.streamSocket(nonBlocking: true)
        do { try address.bind(fd) } catch {
            close(fd)
            if error.errno == EADDRINUSE {
                throw SystemError(operation: "bind (another kbd-commandd is serving this socket)", path: path, errno: EADDRINUSE)
            }
            throw error
        }
        var st = stat()
        if lstat(path, &st) == 0 { bound = (UInt64(st.st_dev), UInt64(st.st_ino)) }
        chmod(path, mode_t(mode))
        guard listen(fd, 256) == 0 else {
            let e = errno
            close(fd)
            throw SystemError(operation: "listen", path: path, errno: e)
        }
        listener = fd
        do { try loop.watch(fd, as: .listener) } catch {
            close(fd)
            throw error
        }
    }

    /// Removes a socket nobody serves; refuses a live one or a non-socket.
    private static func clearStale(_ path: String, _ address: UnixSocketAddress) throws(SystemError) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        guard st.st_mode & S_IFMT == S_IFSOCK else {
            throw SystemError(operation: "bind (the path exists and is not a socket; not removing it)", path: path, errno: EEXIST)
        }
        let probe: Int32
        do throws(SystemError) {
            probe = try address.connect()
        } catch {
            switch error.errno {
            case ECONNREFUSED:
                unlink(path)  // stale: its server is gone
                return
            case EAGAIN:
                throw SystemError(operation: "bind (another kbd-commandd is serving this socket)", path: path, errno: EADDRINUSE)
            default:
                throw SystemError(operation: "bind (a socket exists and cannot be probed; remove it if no other kbd-commandd runs)", path: path, errno: error.errno)
            }
        }
        close(probe)
        throw SystemError(operation: "bind (another kbd-commandd is serving this socket)", path: path, errno: EADDRINUSE)
    }

    deinit {
        for c in clients.values { close(c.fd) }
        loop.unwatch(listener)
        close(listener)
        // Only our own socket: another instance may have bound the path since.
        var st = stat()
        if let bound, lstat(path, &st) == 0, UInt64(st.st_dev) == bound.dev, UInt64(st.st_ino) == bound.ino { unlink(path) }
    }

    /// The connected client with this id.
    func client(id: Int) -> Client? { byID[id] }

    private func updateInterest(_ client: Client) {
        let wantsWritable = client.queuedBytes > 0
        let readingPaused = client.queuedBytes > pauseReadingAbove
        guard wantsWritable != client.wantsWritable || readingPaused != client.readingPaused else { return }
        client.wantsWritable = wantsWritable
        client.readingPaused = readingPaused
        loop.modify(client.fd, events: (readingPaused ? 0 : Epoll.readable) | (wantsWritable ? Epoll.writable : 0))
    }

    // MARK: - Accepting

    /// Accepts up to 16 pending connections per turn (the rest wait for the next one, after
    /// the keys); returns the new clients. `isActive` says whether a uid owns a seat's active
    /// session (asked only for a user's client that the shared slots would refuse).
    func acceptPending(now: EventTime, isActive: (UInt32) -> Bool = { _ in false }) -> [Client] {
        var out: [Client] = []
        for _ in 0..<16 {
            let (fd, error) = accept(listener)
            if fd < 0 {
                switch error {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    pauseAccepting(now: now, error: error)
                default: break
                }
                break
            }
            guard let cred = peerCredentials(fd) else {
                close(fd)
                continue
            }
            let trusted = authorize(cred.uid, cred.gid, Self.peerGroups(fd))
            guard trusted || userAgents else {
                refused(now: now, "control: refused a client (uid \(cred.uid), gid \(cred.gid), pid \(cred.pid)): not authorised")
                close(fd)
                continue
            }
            if let why = refusal(uid: cred.uid, trusted: trusted, isActive: isActive) {
                let line = ControlReply.refused(name: "error", message: why).line + "\n"
                _ = line.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                close(fd)
                refused(now: now, "control: refused a client (uid \(cred.uid)): \(why)")
                continue
            }
            let client = Client(id: nextID, fd: fd, uid: cred.uid, trusted: trusted, maxLineBytes: maxLineBytes)
            do { try loop.watch(fd, as: .client(fd)) } catch {
                close(fd)
                continue
            }
            nextID += 1
            clients[fd] = client
            byID[client.id] = client
            if !trusted {
                userClients[cred.uid, default: 0] += 1
                userClientTotal += 1
            }
            out.append(client)
        }
        return out
    }

    /// Why a new client of `uid` gets no slot, nil when it does.
    func refusal(uid: UInt32, trusted: Bool, isActive: (UInt32) -> Bool) -> String? {
        if clients.count >= maxClients { return "too many clients (\(maxClients))" }
        if trusted { return nil }
        let own = userClients[uid, default: 0]
        if own >= maxClientsPerUser { return "too many clients of uid \(uid) (\(maxClientsPerUser))" }
        let userSlots = maxClients - operatorReserve
        let tooMany = "too many clients (\(userSlots) for users outside the service's group; \(operatorReserve) are kept for it)"
        let shared = userSlots - activeReserve
        if userClientTotal < shared {
            // A fair share of what the others left: free slots over the uids holding some, plus this one.
            let others = userClientTotal - own
            let holders = userClients.count - (own > 0 ? 1 : 0)
            let share = max(1, (shared - others) / (holders + 1))
            if own < share { return nil }
            if isActive(uid) { return userClientTotal < userSlots ? nil : tooMany }
            return "too many clients of uid \(uid) (its share: \(share) of the \(shared - others) slots \(holders) other users left)"
        }
        guard isActive(uid) else { return tooMany }
        // The active session's uid: its first clients (its agent, its bar) always find a slot,
        // whoever holds the rest; more only while users hold fewer than their slots. (Others
        // never take the last `activeReserve` users' slots; after a seat changed hands the
        // previous user's clients may hold them, and then these come from the operators'
        // reserve, at most `activeReserve` per active uid.)
        if own < activeReserve || userClientTotal < userSlots { return nil }
        return tooMany
    }

    /// Logs a refusal, at most once a second (a connect loop wrote 14 MB of them in 3 s).
    private func refused(now: EventTime, _ message: String) {
        if let last = refusalLoggedAt, now < last.adding(milliseconds: 1000) {
            refusalsUnlogged += 1
            return
        }
        let more = refusalsUnlogged > 0 ? " (and \(refusalsUnlogged) more refused clients not logged in the last seconds)" : ""
        logger.warning("\(message)\(more)")
        refusalLoggedAt = now
        refusalsUnlogged = 0
    }

    private func pauseAccepting(now: EventTime, error: Int32) {
        guard acceptRetryAt == nil else { return }
        acceptRetryAt = now.adding(milliseconds: 1000)
        loop.modify(listener, events: 0)
        logger.warning("control: not accepting clients: \(SystemError(operation: "accept", errno: error).message) (\(clients.count) clients); resuming when a descriptor is freed")
    }

    /// Listens again after running out of descriptors (a client left, or the retry is due).
    func resumeAccepting() {
        guard acceptRetryAt != nil else { return }
        acceptRetryAt = nil
        loop.modify(listener, events: Epoll.readable)
    }

    /// The groups a peer had when it connected. The corresponding socket option is `SO_PEERGROUPS`.
    static func peerGroups(_ fd: Int32) -> [UInt32] {
        var groups = [UInt32](repeating: 0, count: 64)
        var needed: Int32 = 0
        var n = groups.withUnsafeMutableBufferPointer { kbd_peer_groups(fd, $0.baseAddress, Int32($0.count), &needed) }
        if n < 0 && errno == ERANGE && needed > 64 {
            groups = [UInt32](repeating: 0, count: Int(needed))
            n = groups.withUnsafeMutableBufferPointer { kbd_peer_groups(fd, $0.baseAddress, Int32($0.count), &needed) }
        }
        return n > 0 ? Array(groups.prefix(Int(n))) : []
    }

    // MARK: - Reading

    enum ReadOutcome {
        case open
        case closed(reason: String?)
    }

    /// Reads at most `readBudget` bytes and hands at most `linesPerWakeup` non-blank
    /// request lines to `handle`, which returns false when it dropped the client.
    func read(_ client: Client, now: EventTime, handle: (String) -> Bool) -> ReadOutcome {
        // Nothing more is read while a whole line's worth is still waiting: at most
        // maxLineBytes + readBudget are held per client.
        if !client.readingPaused, client.input.pendingBytes <= maxLineBytes {
            switch client.input.read(from: client.fd, budget: readBudget) {
            case .bytes(let n): largestReadPerWakeup = max(largestReadPerWakeup, n)
            case .again: break
            case .eof, .error:
                if client.input.pendingBytes == 0 { return .closed(reason: nil) }
            }
        }
        return handleBuffered(client, now: now, handle: handle)
    }

    /// A new turn of the loop: the request bytes budget starts over.
    func startTurn() { turnBytes = 0 }

    /// Handles up to `linesPerWakeup` lines already received (fewer when this turn's request
    /// bytes are spent: the rest waits for the next turn, after the keys).
    func handleBuffered(_ client: Client, now: EventTime, handle: (String) -> Bool) -> ReadOutcome {
        backlog.remove(client.fd)
        var handled = 0
        while handled < linesPerWakeup {
            if turnBytes >= turnByteBudget, client.input.pendingBytes > 0 {
                backlog.insert(client.fd)
                return .open
            }
            client.input.skipEmptyLines()
            switch client.input.nextLine() {
            case .line(let bytes):
                // Blank lines (only spaces or CR) need no reply and cost no allocation.
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) { continue }
                handled += 1
                turnBytes += bytes.count
                if !client.trusted, !chargeRequest(bytes.count, uid: client.uid, now: now) {
                    droppedUnparsed += 1
                    let refusal = ControlReply.refused(name: "error", message: "uid \(client.uid) sent more than \(Self.userRequestBytesPerSecond / 1024) KiB of requests in a second; this request was dropped unread").line
                    switch send(refusal, to: client) {
                    case .sent: continue
                    case .overflow: return .closed(reason: "not reading its replies")
                    case .broken: return .closed(reason: nil)
                    }
                }
                if !handle(String(decoding: bytes, as: UTF8.self)) { return .open }
            case .tooLong:
                return .closed(reason: "request line longer than \(maxLineBytes) bytes")
            case .none:
                client.input.trim(above: 2 * readBudget)
                return .open
            }
        }
        backlog.insert(client.fd)
        return .open
    }

    /// Takes a request line's bytes from its uid's budget; false when it is spent.
    private func chargeRequest(_ bytes: Int, uid: UInt32, now: EventTime) -> Bool {
        let cost = max(bytes, Self.minimumLineCost)
        return userRequestBudget[uid, default: RateBudget(perSecond: Self.userRequestBytesPerSecond, now: now)].take(cost, now: now)
    }

    // MARK: - Writing

    enum SendResult { case sent, overflow, broken }

    /// Queues a line and writes what the socket takes now; arms writability for the rest.
    /// `.overflow`: more than `maxQueuedBytes` were already waiting (the client stopped
    /// reading); `.broken`: it went away. Either way it must be dropped. One reply larger
    /// than the cap passes: only a backlog is an overflow.
    func send(_ line: String, to client: Client) -> SendResult {
        if client.queuedBytes > maxQueuedBytes { return .overflow }
        client.enqueue(line)
        return flush(client) ? .sent : .broken
    }

    /// Writes queued output (call when writable); false on a broken connection.
    func flush(_ client: Client) -> Bool {
        guard client.write() else { return false }
        updateInterest(client)
        return true
    }

    func remove(_ client: Client) {
        loop.unwatch(client.fd)
        if byID[client.id] === client { byID[client.id] = nil }
        if clients[client.fd] === client, !client.trusted {
            userClients[client.uid, default: 1] -= 1
            if userClients[client.uid] == 0 { userClients[client.uid] = nil }
            userClientTotal -= 1
        }
        clients[client.fd] = nil
        backlog.remove(client.fd)
        close(client.fd)
        resumeAccepting()
    }
}
