import KbdCore
import KbdGeometry
import KbdKeymap
import KbdRecording
import KbdEvdev
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Replay's merge of several recordings (issue 17, D18): files are opened when their first event
/// is due and closed after their last, and the output is exactly the old contract: events by time,
/// ties to the file given first, attach just before a file's first event and detach just after its
/// last, files without events attached and detached at time zero first.
@Suite struct RecordingSourceTests {
    /// One generated file: its events (time in microseconds, and a value to recognise it).
    struct File {
        var times: [Int64]
    }

    /// Writes `files` as events-only evemu files (`E:` lines) into `dir`; returns their paths.
    static func write(_ files: [File], in dir: TemporaryDirectory) -> [String] {
        files.enumerated().map { i, file in
            var text = "# EVEMU 1.3\n"
            for (n, t) in file.times.enumerated() {
                let code = String(i % 200 + 1, radix: 16)
                text += "E: \(t / 1_000_000).\(String(repeating: "0", count: 6 - String(t % 1_000_000).count))\(t % 1_000_000) 0004 \(String(repeating: "0", count: 4 - code.count))\(code) \(n)\n"
            }
            return dir.file("f\(i).evemu", text)
        }
    }

    /// What the contract says the merge must be.
    static func reference(_ files: [File]) -> [String] {
        var out: [String] = []
        for (i, file) in files.enumerated() where file.times.isEmpty { out += ["attach \(i) 0", "detach \(i) 0"] }
        var all: [(time: Int64, file: Int, n: Int)] = []
        for (i, file) in files.enumerated() { for (n, t) in file.times.enumerated() { all.append((t, i, n)) } }
        all.sort { ($0.time, $0.file, $0.n) < ($1.time, $1.file, $1.n) }
        for e in all {
            if e.n == 0 { out.append("attach \(e.file) \(e.time)") }
            out.append("input \(e.file) \(e.time) \(e.n)")
            if e.n == files[e.file].times.count - 1 { out.append("detach \(e.file) \(e.time)") }
        }
        return out
    }

    static func replay(_ paths: [String]) throws -> (lines: [String], mostOpen: Int) {
        let source = try RecordingSource(paths: paths)
        var out: [String] = []
        while let e = try source.next() {
            switch e {
            case .attached(let id, _, _, let t): out.append("attach \(id.rawValue) \(t.microseconds)")
            case .input(let id, let ev): out.append("input \(id.rawValue) \(ev.time.microseconds) \(ev.value)")
            case .detached(let id, let t): out.append("detach \(id.rawValue) \(t.microseconds)")
            case .resynchronized, .switches: out.append("resync")
            }
        }
        return (out, source.mostOpenAtOnce)
    }

    /// Seeded random sets of 1 to 40 files, with overlapping and equal times and empty files.
    @Test(arguments: 0..<200)
    func theMergeKeepsTheContract(seed: Int) throws {
        var random = SeededRandom(seed: UInt64(seed) &* 0x9E37_79B9 &+ 17)
        let files = (0..<random.int(1...40)).map { _ -> File in
            var t = Int64(random.int(0...30)) * 1000
            return File(times: (0..<random.int(0...6)).map { _ in
                t += Int64(random.int(0...3)) * 1000
                return t
            })
        }
        let dir = TemporaryDirectory()
        let (lines, _) = try Self.replay(Self.write(files, in: dir))
        #expect(lines == Self.reference(files))
    }

    /// Consecutive recordings need one file open at a time; overlapping ones are open together.
    @Test(arguments: [(500, false, 1), (30, true, 30)])
    func filesAreOpenOnlyWhileTheyPlay(count: Int, overlapping: Bool, mostOpen: Int) throws {
        let files = (0..<count).map { i in
            overlapping ? File(times: [Int64(i), 1_000_000 + Int64(i)]) : File(times: [Int64(i) * 10_000, Int64(i) * 10_000 + 5_000])
        }
        let dir = TemporaryDirectory()
        let (lines, open) = try Self.replay(Self.write(files, in: dir))
        #expect(lines == Self.reference(files))
        #expect(open == mostOpen)
    }

    @Test func aFileThatChangesBeforeItsTurnIsAnError() throws {
        let dir = TemporaryDirectory()
        let paths = Self.write([File(times: [1_000, 2_000]), File(times: [5_000])], in: dir)
        let source = try RecordingSource(paths: paths)
        #expect(try source.next() != nil)  // attach of the first file
        dir.file("f1.evemu", "E: 0.004000 0004 0002 0\n")
        do {
            while try source.next() != nil {}
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "\(paths[1]):1: the first event is not the one read when replay started (at 0.005000); the file changed during replay")
        }
    }
}
