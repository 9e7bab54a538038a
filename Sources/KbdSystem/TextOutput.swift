#if canImport(Glibc)
import Glibc
#endif

/// Where text output goes: a buffered file descriptor, or a string in tests.
public protocol TextOutput: AnyObject {
    func write(_ text: String)
    func flush() throws(SystemError)
}

/// Collects output in memory.
public final class StringOutput: TextOutput {
    public private(set) var text = ""
    public init() {}
    public func write(_ text: String) { self.text += text }
    public func flush() throws(SystemError) {}
    /// The output split into lines (without the final empty piece).
    public var lines: [String] { text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
}

/// Buffers writes to a file descriptor it may or may not own.
public final class FileOutput: TextOutput {
    private let fd: Int32
    private let ownsDescriptor: Bool
    public let path: String
    private var buffer: [UInt8] = []
    private let capacity: Int
    /// The first write error, reported by `flush()`.
    private var pendingError: SystemError?

    public init(fd: Int32, path: String, ownsDescriptor: Bool = false, capacity: Int = 64 * 1024) {
        self.fd = fd
        self.path = path
        self.ownsDescriptor = ownsDescriptor
        self.capacity = capacity
        buffer.reserveCapacity(capacity)
    }

    public static func standardOutput() -> FileOutput { FileOutput(fd: 1, path: "<stdout>") }
    public static func standardError() -> FileOutput { FileOutput(fd: 2, path: "<stderr>", capacity: 0) }

    /// Creates (or truncates) `path` with mode 0600: recordings hold what was typed.
    /// The corresponding C function is `open(2)`.
    public static func create(path: String, mode: UInt32 = 0o600) throws(SystemError) -> FileOutput {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(mode))
        guard fd >= 0 else { throw SystemError(operation: "open", path: path, errno: errno) }
        return FileOutput(fd: fd, path: path, ownsDescriptor: true)
    }

    /// Creates `path` as a new file with `mode` (0600: recordings hold what was typed), never
    /// opening anything that exists: not a file (whose mode would stay as it was, 0644 say), not
    /// a symbolic link (whose target would be written), not a FIFO. EEXIST when `path` exists.
    public static func createNew(path: String, mode: UInt32 = 0o600) throws(SystemError) -> FileOutput {
        var fd: Int32
        repeat { fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode)) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw SystemError(operation: "create", path: path, errno: errno) }
        return FileOutput(fd: fd, path: path, ownsDescriptor: true)
    }

    /// `createNew`, after removing what is at `path` when it is a regular file or a symbolic link
    /// (the link goes, its target stays as it was). Anything else (a FIFO, a device, a directory)
    /// is refused with EINVAL and left alone: `--force` replaces files, it does not write into
    /// /dev/null.
    public static func createReplacing(path: String, mode: UInt32 = 0o600) throws(SystemError) -> FileOutput {
        var st = stat()
        if lstat(path, &st) == 0 {
            let type = st.st_mode & S_IFMT
            guard type == S_IFREG || type == S_IFLNK else { throw SystemError(operation: "replace", path: path, errno: EINVAL) }
            guard unlink(path) == 0 else { throw SystemError(operation: "remove", path: path, errno: errno) }
        }
        return try createNew(path: path, mode: mode)
    }

    deinit {
        try? flush()
        if ownsDescriptor { close(fd) }
    }

    public func write(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in buffer.append(contentsOf: utf8) }
        if buffer.count >= capacity { try? flushBuffer() }
    }

    public func flush() throws(SystemError) {
        try flushBuffer()
        if let e = pendingError {
            pendingError = nil
            throw e
        }
    }

    private func flushBuffer() throws(SystemError) {
        var offset = 0
        defer { buffer.removeAll(keepingCapacity: true) }
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                let e = SystemError(operation: "write", path: path, errno: errno)
                if pendingError == nil { pendingError = e }
                throw e
            }
            offset += n
        }
    }
}
