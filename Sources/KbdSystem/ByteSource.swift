#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Something bytes can be read from in chunks: a file descriptor, or memory in tests.
public protocol ByteSource: ~Copyable {
    /// Reads up to `buffer.count` bytes into `buffer`; returns 0 at the end.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int
}

/// An errno with the operation and path it came from.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var path: String?
    public var errno: Int32

    public init(operation: String, path: String? = nil, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var message: String { String(cString: strerror(errno)) }

    public var description: String {
        if let path { return "\(path): \(operation): \(message)" }
        return "\(operation): \(message)"
    }
}

/// Bytes held in memory; for tests and for small inputs.
public struct MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public init(_ text: String) { self.bytes = Array(text.utf8) }

    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        let n = min(buffer.count, bytes.count - offset)
        if n > 0 {
            bytes.withUnsafeBytes { src in
                buffer.baseAddress!.copyMemory(from: src.baseAddress! + offset, byteCount: n)
            }
            offset += n
        }
        return n
    }
}

/// A file opened read-only; it owns its descriptor and closes it exactly once.
public struct FileByteSource: ByteSource, ~Copyable {
    public let path: String
    private let fd: Int32

    /// Opens `path` for reading. The corresponding C function is `open(2)`.
    public init(path: String) throws(SystemError) {
        var fd: Int32
        repeat { fd = open(path, O_RDONLY | O_CLOEXEC) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw SystemError(operation: "open", path: path, errno: errno) }
        self.fd = fd
        self.path = path
    }

    /// Reads standard input (does not close it).
    public init(standardInputNamed name: String = "<stdin>") {
        self.fd = dup(0)
        self.path = name
    }

    deinit { close(fd) }

    /// The corresponding C function is `read(2)`; EINTR is retried.
    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw SystemError(operation: "read", path: path, errno: errno)
        }
    }
}
