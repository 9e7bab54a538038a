public import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// A client on the daemon's real Unix socket, non-blocking, driven from the test thread.
public final class SocketClient {
    public let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to `path` (throws when nobody listens there).
    public init(path: String) throws(SystemError) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // deinit closes the descriptor when this throws.
        guard rc == 0 else { throw SystemError(operation: "connect", path: path, errno: errno) }
    }

    deinit { close(fd) }

    public func send(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }

    /// Lines received so far; `closed` tells whether the daemon hung up.
    public func receive() -> (lines: [String], closed: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var closed = false
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 { pending.append(contentsOf: buffer[0..<n]); continue }
            if n == 0 || (n < 0 && errno != EAGAIN) { closed = true }
            break
        }
        var lines: [String] = []
        while let nl = pending.firstIndex(of: 0x0A) {
            lines.append(String(decoding: pending[..<nl], as: UTF8.self))
            pending.removeSubrange(...nl)
        }
        return (lines, closed)
    }
}
