#if canImport(Glibc)
import Glibc
#endif

/// Splits a `ByteSource` into lines without loading it whole: memory is bounded
/// by the chunk size plus the longest line allowed.
///
/// Lines end at `\n`; a trailing `\r` is dropped (CRLF files are tolerated).
public struct LineReader<Source: ByteSource & ~Copyable>: ~Copyable {
    public enum Failure: Error, Equatable {
        case io(SystemError)
        /// A line longer than `maxLineLength` bytes; the payload is the limit.
        case lineTooLong(Int)
    }

    private var source: Source
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var atEOF = false
    /// The number of the line last returned (1-based).
    public private(set) var lineNumber = 0
    public let maxLineLength: Int

    public init(source: consuming Source, chunkSize: Int = 64 * 1024, maxLineLength: Int = 1 << 20) {
        self.source = source
        self.maxLineLength = maxLineLength
        self.buffer = [UInt8](repeating: 0, count: max(chunkSize, 16))
    }

    /// The next line as a byte range into the internal buffer, or nil at the end.
    /// The range is valid until the next call.
    public mutating func nextLine() throws(Failure) -> Range<Int>? {
        while true {
            if let newline = indexOfNewline(from: start, to: end) {
                if newline - start > maxLineLength + 1 { throw .lineTooLong(maxLineLength) }
                let lineStart = start
                start = newline + 1
                lineNumber += 1
                var lineEnd = newline
                if lineEnd > lineStart && buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
                return lineStart..<lineEnd
            }
            if atEOF {
                guard start < end else { return nil }
                let lineStart = start
                var lineEnd = end
                start = end
                lineNumber += 1
                if lineEnd > lineStart && buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
                return lineStart..<lineEnd
            }
            try fill()
        }
    }

    /// Runs `body` over the bytes of `range` (a range returned by `nextLine`).
    public func withBytes<R, E: Error>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        let result = buffer.withUnsafeBufferPointer { all in
            Result { () throws(E) -> R in try body(UnsafeBufferPointer(rebasing: all[range])) }
        }
        return try result.get()
    }

    private func indexOfNewline(from: Int, to: Int) -> Int? {
        buffer.withUnsafeBufferPointer { all -> Int? in
            guard from < to, let base = all.baseAddress else { return nil }
            guard let hit = memchr(base + from, 0x0A, to - from) else { return nil }
            return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        }
    }

    private mutating func fill() throws(Failure) {
        // Move the partial line to the front, growing the buffer if a line is long.
        if start > 0 {
            let pending = end - start
            if pending > 0 {
                buffer.withUnsafeMutableBytes { raw in
                    raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: pending)
                }
            }
            start = 0
            end = pending
        }
        if end == buffer.count {
            guard buffer.count < maxLineLength + 2 else { throw .lineTooLong(maxLineLength) }
            buffer.append(contentsOf: repeatElement(0, count: min(buffer.count, maxLineLength + 2 - buffer.count)))
        }
        let capacity = buffer.count
        let filled = end
        let result = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) -> Int in
                try source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled..<capacity]))
            }
        }
        let n: Int
        switch result {
        case .success(let count): n = count
        case .failure(let e): throw .io(e)
        }
        if n == 0 { atEOF = true } else { end += n }
        if end - start > maxLineLength + 1, indexOfNewline(from: start, to: end) == nil {
            throw .lineTooLong(maxLineLength)
        }
    }
}
