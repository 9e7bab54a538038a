public import KbdCore
public import KbdSeats
import Synchronization
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// A logind the test drives in memory: who is active per seat, and an eventfd that wakes the
/// daemon's loop when it changes (as sd_login_monitor's inotify descriptor does).
public final class FakeLogin: LoginSource, @unchecked Sendable {
    // @unchecked: the value is behind a mutex (a bench switches users from another thread).
    private let state: Mutex<ActiveSessions>
    public let changeDescriptor: Int32?
    public var changeDescriptors: [Int32] { changeDescriptor.map { [$0] } ?? [] }

    public init(_ sessions: ActiveSessions = ActiveSessions(available: true)) {
        state = Mutex(sessions)
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        changeDescriptor = fd >= 0 ? fd : nil
    }

    deinit { if let changeDescriptor { close(changeDescriptor) } }

    /// `uid` owns the active session of `seat` (nil: nobody).
    public func activate(_ uid: UInt32?, on seat: String = ActiveSessions.defaultSeat) {
        state.withLock { $0.activeUID[seat] = uid }
        if let changeDescriptor {
            var one: UInt64 = 1
            _ = write(changeDescriptor, &one, 8)
        }
    }

    public func read() -> ActiveSessions { state.withLock { $0 } }

    public func acknowledgeChange() {
        guard let changeDescriptor else { return }
        var value: UInt64 = 0
        _ = Glibc.read(changeDescriptor, &value, 8)
    }
}

/// logind's files as sd-login reads them, under a root the test owns (for a private mount
/// namespace's tmpfs on /run/systemd, reached from outside through /proc/PID/root):
/// `system/` (sd_booted), `seats/SEAT`, `sessions/ID`, `users/UID`, each written to a
/// temporary name and renamed over the old one, as logind does.
public struct LogindFiles: Sendable {
    /// The directory standing for /run/systemd.
    public let root: String

    public init(root: String) { self.root = root }

    public struct Session: Sendable {
        public var id: String
        public var uid: UInt32
        public var user: String
        public var seat: String?
        /// logind's STATE (nil: "active" for the seat's active session, else "online");
        /// "closing" is a logged-out session some process of the user keeps alive.
        public var state: String?
        /// logind's CLASS: "user", "greeter", "lock-screen".
        public var sessionClass: String
        public init(id: String, uid: UInt32, user: String, seat: String? = ActiveSessions.defaultSeat, state: String? = nil,
                    sessionClass: String = "user") {
            self.id = id
            self.uid = uid
            self.user = user
            self.seat = seat
            self.state = state
            self.sessionClass = sessionClass
        }
    }

    /// Creates the directories (and `system/`, so sd_booted() says yes).
    public func boot() throws(FilesError) {
        for dir in ["", "/system", "/seats", "/sessions", "/users"] {
            if mkdir(root + dir, 0o755) != 0 && errno != EEXIST { throw FilesError(path: root + dir, errno: errno) }
        }
    }

    /// Writes the sessions and a seat whose active session is `active` (nil: none), as a
    /// switch of virtual terminals leaves them.
    public func seat(_ seat: String = ActiveSessions.defaultSeat, sessions: [Session], active: String?) throws(FilesError) {
        // The new active session first and the others after the seat's file, so a reader never
        // sees the seat pointing at a session whose file does not say it is active yet (logind
        // itself may show that for an instant; a test counting changes must not).
        for s in sessions where s.id == active { try session(s, active: true) }
        for uid in Set(sessions.map(\.uid)).sorted() {
            let mine = sessions.filter { $0.uid == uid }
            try replace("users/\(uid)", """
                # This is private data. Do not parse.
                NAME=\(mine[0].user)
                STATE=\(mine.contains { $0.id == active } ? "active" : "online")
                SESSIONS=\(mine.map(\.id).joined(separator: " "))
                SEATS=\(mine.compactMap(\.seat).joined(separator: " "))
                \(mine.contains { $0.id == active } ? "ACTIVE_SESSIONS=\(active!)\n" : "")
                """)
        }
        let onSeat = sessions.filter { $0.seat == seat }
        let activeSession = onSeat.first { $0.id == active }
        try replace("seats/\(seat)", """
            # This is private data. Do not parse.
            IS_SEAT0=\(seat == ActiveSessions.defaultSeat ? 1 : 0)
            CAN_MULTI_SESSION=1
            CAN_TTY=1
            CAN_GRAPHICAL=1
            \(activeSession.map { "ACTIVE=\($0.id)\nACTIVE_UID=\($0.uid)\n" } ?? "")SESSIONS=\(onSeat.map(\.id).joined(separator: " "))
            UIDS=\(onSeat.map { String($0.uid) }.joined(separator: " "))

            """)
        for s in sessions where s.id != active { try session(s, active: false) }
    }

    /// Writes one session's file alone, as logind does when only its state changes (a
    /// logout leaves the seat's file as it was: the session stays its active one, `closing`).
    public func session(_ s: Session, active isActive: Bool) throws(FilesError) {
        try replace("sessions/\(s.id)", """
            # This is private data. Do not parse.
            UID=\(s.uid)
            USER=\(s.user)
            ACTIVE=\(isActive ? 1 : 0)
            IS_DISPLAY=1
            STATE=\(s.state ?? (isActive ? "active" : "online"))
            REMOTE=0
            TYPE=tty
            CLASS=\(s.sessionClass)
            \(s.seat.map { "SEAT=\($0)\nVTNR=\(s.id.utf8.count)\n" } ?? "")
            """)
    }

    public struct FilesError: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var errno: Int32
        public var description: String { "\(path): \(String(cString: strerror(errno)))" }
    }

    /// Writes `name` to a temporary file and renames it over the old one.
    func replace(_ name: String, _ text: String) throws(FilesError) {
        let path = root + "/" + name
        // logind's temporary files are hidden (".#NAME…"), so sd_get_seats never lists one.
        let slash = name.lastIndex(of: "/").map { name.index(after: $0) } ?? name.startIndex
        let temporary = root + "/" + name[..<slash] + ".#" + name[slash...] + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FilesError(path: temporary, errno: errno) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { throw FilesError(path: temporary, errno: errno) }
        guard rename(temporary, path) == 0 else { throw FilesError(path: path, errno: errno) }
    }
}
