import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// A Unix-domain socket address (`struct sockaddr_un`) for a filesystem path.
public struct UnixSocketAddress {
    public let path: String
    private var storage = sockaddr_un()

    /// Fails with ENAMETOOLONG when the path does not fit `sun_path`.
    public init(path: String) throws(SystemError) {
        self.path = path
        storage.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: storage.sun_path) else {
            throw SystemError(operation: "socket address (path too long)", path: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
    }

    private func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A new `SOCK_STREAM` socket (close-on-exec, and non-blocking if asked).
    /// The corresponding C function is `socket(2)`.
    public static func streamSocket(nonBlocking: Bool = false) throws(SystemError) -> Int32 {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw SystemError(operation: "socket", errno: errno) }
        return fd
    }

    /// Binds `fd` to this address; the errno on failure. The corresponding C function is `bind(2)`.
    public func bind(_ fd: Int32) throws(SystemError) {
        guard withSockaddr({ Glibc.bind(fd, $0, $1) }) == 0 else { throw SystemError(operation: "bind", path: path, errno: errno) }
    }

    /// Connects a new blocking stream socket to this address; the caller owns the descriptor.
    /// The corresponding C function is `connect(2)`.
    public func connect() throws(SystemError) -> Int32 {
        let fd = try Self.streamSocket()
        let rc = withSockaddr { Glibc.connect(fd, $0, $1) }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw SystemError(operation: "connect", path: path, errno: e)
        }
        return fd
    }
}
