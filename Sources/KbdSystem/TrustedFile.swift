#if canImport(Glibc)
import Glibc
#endif

/// How far a file must be trusted before its contents are used.
public enum FileTrust: Sendable, Equatable {
    /// Any file the caller can read, pipes included (`check --config <(generate)`): the command-line
    /// tools, which read what their user names and block only themselves.
    case any
    /// sshd's StrictModes, for the service's own config, whose `run` programs it executes: a
    /// regular file (a FIFO would block the loop on reload), owned by root or the service's
    /// effective user, not writable by group or others, in directories that are neither owned by
    /// someone else nor writable by others (sticky directories such as /tmp excepted: there,
    /// others cannot replace a file they do not own). Symbolic links are followed, as sshd
    /// does: configs in /etc are often links (alternatives, configuration management), and every
    /// directory of the resolved path is checked, as is the one holding the link.
    case strict

    /// The owners `strict` trusts: root and the effective user.
    public static var trustedOwners: [UInt32] { geteuid() == 0 ? [0] : [0, geteuid()] }
}

/// A file that could not be read, or that was read and refused by `FileTrust.strict`.
public enum FileReadError: Error, Sendable, Equatable, CustomStringConvertible {
    case system(SystemError)
    /// Readable, but not trusted: why, and the command that fixes it.
    case refused(path: String, reason: String)

    public var path: String {
        switch self {
        case .system(let e): e.path ?? ""
        case .refused(let path, _): path
        }
    }

    /// The message without the path: `No such file or directory`, or the reason for a refusal.
    public var message: String {
        switch self {
        case .system(let e): e.message
        case .refused(_, let reason): reason
        }
    }

    public var description: String { "\(path): \(message)" }
}

/// Reads a whole (small) file, at most `limit` bytes, after the checks `trust` asks for.
/// With `.strict` nothing but a regular file is ever opened, and it is opened without blocking.
public func readFile(path: String, limit: Int, trust: FileTrust) throws(FileReadError) -> [UInt8] {
    guard trust == .strict else {
        do { return try readWholeFile(path: path, limit: limit) } catch { throw .system(error) }
    }
    var st = stat()
    guard stat(path, &st) == 0 else { throw .system(SystemError(operation: "stat", path: path, errno: errno)) }
    if let reason = FileInspection.refusal(path: path, st, trustedOwners: FileTrust.trustedOwners) {
        throw .refused(path: path, reason: reason)
    }
    if let reason = FileInspection.directoryRefusal(path: path, trustedOwners: FileTrust.trustedOwners) {
        throw .refused(path: path, reason: reason)
    }
    var fd: Int32
    repeat { fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) } while fd < 0 && errno == EINTR
    guard fd >= 0 else { throw .system(SystemError(operation: "open", path: path, errno: errno)) }
    defer { close(fd) }
    // What was opened is what counts (the path may have changed since the stat).
    guard fstat(fd, &st) == 0 else { throw .system(SystemError(operation: "fstat", path: path, errno: errno)) }
    if let reason = FileInspection.refusal(path: path, st, trustedOwners: FileTrust.trustedOwners) {
        throw .refused(path: path, reason: reason)
    }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw .system(SystemError(operation: "read", path: path, errno: errno))
        }
        if n == 0 { return out }
        out.append(contentsOf: chunk[0..<n])
        if out.count > limit { throw .system(SystemError(operation: "read", path: path, errno: EFBIG)) }
    }
}

/// What `FileTrust.strict` would refuse about a file, for `check` to warn about ahead of a reload.
/// Empty when the file would be accepted (or cannot be inspected: the read reports that).
public func strictModeProblems(path: String, trustedOwners: [UInt32]) -> [String] {
    var st = stat()
    guard stat(path, &st) == 0 else { return [] }
    return [FileInspection.refusal(path: path, st, trustedOwners: trustedOwners),
            FileInspection.directoryRefusal(path: path, trustedOwners: trustedOwners)].compactMap { $0 }
}

package enum FileInspection {
    static func owners(_ trusted: [uid_t]) -> String {
        trusted.map { $0 == 0 ? "root" : "uid \($0)" }.joined(separator: " or ")
    }

    static func octal(_ mode: mode_t) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// Why the file described by `st` is refused, with the fix; nil when it is trusted.
    static func refusal(path: String, _ st: stat, trustedOwners: [uid_t]) -> String? {
        let type = st.st_mode & S_IFMT
        guard type == S_IFREG else {
            let kind = switch type {
            case S_IFIFO: "a FIFO"
            case S_IFDIR: "a directory"
            case S_IFCHR: "a character device"
            case S_IFBLK: "a block device"
            case S_IFSOCK: "a socket"
            default: "not a regular file"
            }
            return "not a regular file (\(kind)); expected a regular file"
        }
        guard trustedOwners.contains(st.st_uid) else {
            return "owned by uid \(st.st_uid); expected a file owned by \(owners(trustedOwners)), as the service runs its commands: chown root \(path)"
        }
        guard st.st_mode & 0o022 == 0 else {
            return "writable by group or others (mode \(octal(st.st_mode))); expected a file only its owner can change, as the service runs its commands: chmod go-w \(path)"
        }
        return nil
    }

    /// Why a directory on the way to the file is refused; nil when all are trusted. Checked: every
    /// directory of the path as written (a link in one of them could be replaced) and of the
    /// resolved path, up to `/`.
    static func directoryRefusal(path: String, trustedOwners: [uid_t]) -> String? {
        var directories = ancestors(of: path)
        if let resolved = realpath(path, nil) {
            directories += ancestors(of: String(cString: resolved))
            free(resolved)
        }
        var seen: Set<String> = []
        for dir in directories where seen.insert(dir).inserted {
            var st = stat()
            guard stat(dir, &st) == 0 else { continue }
            guard trustedOwners.contains(st.st_uid) else {
                return "in directory \(dir), owned by uid \(st.st_uid); expected directories owned by \(owners(trustedOwners)), as others could replace the file: move it, or chown root \(dir)"
            }
            let sticky = st.st_mode & mode_t(S_ISVTX) != 0
            guard st.st_mode & 0o022 == 0 || sticky else {
                return "in directory \(dir), writable by group or others (mode \(octal(st.st_mode))), who could replace the file: chmod go-w \(dir)"
            }
        }
        return nil
    }

    /// The directories above `path`, nearest first: `/a/b/f` → `/a/b`, `/a`, `/`; `a/f` → `a`, `.`.
    package static func ancestors(of path: String) -> [String] {
        var out: [String] = []
        var dir = parent(of: path)
        while true {
            out.append(dir)
            if dir == "/" || dir == "." { return out }
            dir = parent(of: dir)
        }
    }

    /// `a/b` → `a`, `/a` → `/`, `b` → `.`.
    static func parent(of path: String) -> String {
        var p = Substring(path)
        while p.count > 1, p.last == "/" { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return "." }
        let head = p[..<slash]
        return head.isEmpty ? "/" : String(head)
    }
}
