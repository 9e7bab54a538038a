import KbdSystem
import KbdKeymap
import KbdControl
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct LineBufferTests {
    static func lines(_ buffer: LineBuffer) -> [String] {
        var out: [String] = []
        while case .line(let bytes) = buffer.nextLine() { out.append(String(decoding: bytes, as: UTF8.self)) }
        return out
    }

    @Test("any chunking of a stream gives the lines split(\"\\n\") gives", arguments: 0..<200)
    func chunkingDoesNotMatter(seed: Int) {
        var rng = SeededRandom(seed: UInt64(seed) &* 31 &+ 7)
        var text: [UInt8] = []
        for _ in 0..<rng.int(0...60) {
            for _ in 0..<rng.int(0...40) { text.append(UInt8(rng.int(32...126))) }
            if rng.int(0...9) > 0 { text.append(0x0A) }
        }
        let buffer = LineBuffer(maxLineBytes: 1 << 20)
        var got: [String] = []
        var i = 0
        while i < text.count {
            let n = min(text.count - i, rng.int(1...17))
            text[i..<(i + n)].withUnsafeBytes { buffer.append($0) }
            got += Self.lines(buffer)
            i += n
        }
        var expected = text.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        expected.removeLast()  // the unterminated rest stays pending
        #expect(got == expected)
        #expect(buffer.pendingBytes == (text.last == 0x0A || text.isEmpty ? 0 : text.count - (text.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0)))
    }

    @Test func aLineLongerThanTheLimitIsReportedEvenBeforeItsNewline() {
        let buffer = LineBuffer(maxLineBytes: 8)
        Array("12345".utf8).withUnsafeBytes { buffer.append($0) }
        #expect(buffer.nextLine() == .none)
        Array("6789".utf8).withUnsafeBytes { buffer.append($0) }
        #expect(buffer.nextLine() == .tooLong)
    }

    @Test func readsFromADescriptorWithinItsBudgetAndSeesTheEnd() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let text = Array(String(repeating: "line\n", count: 100).utf8)
        #expect(text.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) } == text.count)
        close(fds[1])
        let buffer = LineBuffer(maxLineBytes: 64)
        #expect(buffer.read(from: fds[0], budget: 64) == .bytes(64))
        #expect(Self.lines(buffer).count == 12)
        var total = 64
        while case .bytes(let n) = buffer.read(from: fds[0], budget: 64) { total += n }
        #expect(total == text.count)
        #expect(buffer.read(from: fds[0], budget: 64) == .eof)
        #expect(Self.lines(buffer).count == 88)
        // Consumed lines are not kept: memory stays near one read plus one line.
        #expect(buffer.capacity <= 512)
        buffer.trim(above: 0)
        #expect(buffer.capacity == 0)
    }
}
