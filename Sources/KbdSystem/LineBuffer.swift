#if canImport(Glibc)
import Glibc
#endif

/// Bytes from a stream (a socket, a pipe), split at `\n` without moving the
/// buffer once per line: consumed lines only advance an index, the unread tail is
/// moved to the front at most once per `read`, and a partial line is never
/// scanned twice. Memory stays bounded by `maxLineBytes` plus one read, and an
/// empty buffer holds no memory at all.
///
/// The loop's reading pattern: one `read(from:budget:)` per wakeup, then
/// `nextLine()` until it returns `.none`, handling each line in place.
public final class LineBuffer {
    public enum ReadOutcome: Sendable, Equatable {
        /// This many bytes arrived.
        case bytes(Int)
        /// Nothing to read now (EAGAIN).
        case again
        /// The other end closed.
        case eof
        /// Reading failed with this errno.
        case error(Int32)
    }

    public enum Line: Equatable {
        /// A complete line (without its `\n`; a `\r` before it is kept), valid until the next call.
        case line(UnsafeBufferPointer<UInt8>)
        /// No complete line yet.
        case none
        /// The line being assembled is longer than `maxLineBytes`.
        case tooLong

        public static func == (a: Line, b: Line) -> Bool {
            switch (a, b) {
            case (.none, .none), (.tooLong, .tooLong): return true
            case (.line(let x), .line(let y)): return x.elementsEqual(y)
            default: return false
            }
        }
    }

    private var storage: UnsafeMutablePointer<UInt8>?
    private var allocated = 0
    /// Bytes held: `storage[0..<end]`.
    private var end = 0
    /// The first byte not yet returned in a line.
    private var start = 0
    /// Bytes after `start` already known to hold no `\n`.
    private var scanned = 0
    public let maxLineBytes: Int

    public init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    deinit { storage?.deallocate() }

    /// Bytes received and not yet returned in a line.
    public var pendingBytes: Int { end - start }

    /// The memory held (for tests of bounded memory).
    public var capacity: Int { allocated }

    /// Reads once from `fd`, at most `budget` bytes. The corresponding C function is `read(2)`.
    public func read(from fd: Int32, budget: Int) -> ReadOutcome {
        reserve(budget)
        let n = Glibc.read(fd, storage! + end, budget)
        if n > 0 {
            end += n
            return .bytes(n)
        }
        if n == 0 { return .eof }
        let e = errno
        return e == EAGAIN || e == EWOULDBLOCK || e == EINTR ? .again : .error(e)
    }

    /// Appends bytes that arrived some other way.
    public func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(storage! + end).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        end += bytes.count
    }

    /// The next complete line. The returned bytes stay valid until the next call that changes the buffer.
    public func nextLine() -> Line {
        let from = start + scanned
        guard from < end, let base = storage else { return pendingBytes > maxLineBytes ? .tooLong : .none }
        guard let hit = memchr(base + from, 0x0A, end - from) else {
            scanned = end - start
            return pendingBytes > maxLineBytes ? .tooLong : .none
        }
        let newline = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        if newline - start > maxLineBytes { return .tooLong }
        let line = UnsafeBufferPointer(start: base + start, count: newline - start)
        start = newline + 1
        scanned = 0
        return .line(line)
    }

    /// Skips a run of empty lines (bare `\n`) at the front; returns how many. One pass over
    /// the bytes, with no line handed out: a flood of newlines costs a byte compare each.
    @discardableResult
    public func skipEmptyLines() -> Int {
        guard let base = storage else { return 0 }
        let first = start
        while start < end && base[start] == 0x0A { start += 1 }
        if start != first { scanned = 0 }
        return start - first
    }

    /// Everything pending as one piece (an endless line, the rest at the end of a stream),
    /// valid until the next call that changes the buffer.
    public func takeAll() -> UnsafeBufferPointer<UInt8> {
        guard let base = storage else { return UnsafeBufferPointer(start: nil, count: 0) }
        let piece = UnsafeBufferPointer(start: base + start, count: end - start)
        start = end
        scanned = 0
        return piece
    }

    /// Gives the memory back when nothing is pending and more than `limit` bytes are held
    /// (an idle client keeps no large buffer after a burst).
    public func trim(above limit: Int) {
        if pendingBytes == 0 && allocated > limit { reset() }
    }

    /// Forgets everything received; gives the memory back.
    public func reset() {
        storage?.deallocate()
        storage = nil
        allocated = 0
        end = 0
        start = 0
        scanned = 0
    }

    /// Makes room for `extra` bytes after `end`: moves the unread tail to the front
    /// (once per read, never per line), grows by doubling, and frees an emptied buffer
    /// that grew past the usual read size.
    private func reserve(_ extra: Int) {
        if start > 0 {
            let pending = end - start
            if pending > 0 { UnsafeMutableRawPointer(storage!).copyMemory(from: storage! + start, byteCount: pending) }
            end = pending
            start = 0
        }
        guard end + extra > allocated else { return }
        var size = max(allocated, 256)
        while size < end + extra { size *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        if let storage {
            grown.update(from: storage, count: end)
            storage.deallocate()
        }
        storage = grown
        allocated = size
    }
}
