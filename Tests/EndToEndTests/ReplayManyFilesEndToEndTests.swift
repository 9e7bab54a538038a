import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Replay of thousands of recordings under a low limit on open files (issue 17, D18): a file is
/// open only while it plays. Before issue 17 replay opened every file at once and stopped with
/// "Too many open files" after about 60 of these.
@Suite(.serialized)
struct ReplayManyFilesEndToEndTests {
    @Test func twoThousandConsecutiveRecordingsReplayWithSixtyFourDescriptors() {
        let dir = EndToEndDirectory()
        let count = 2_000
        let paths = (0..<count).map { i in
            // One keyboard per file, Ctrl+S pressed and released, each file after the previous one.
            let base = 10 + i
            let text = "E: \(base).000001 0001 001d 1\nE: \(base).000001 0000 0000 0\nE: \(base).100000 0001 001f 1\n"
                + "E: \(base).100000 0000 0000 0\nE: \(base).200000 0001 001f 0\nE: \(base).200000 0001 001d 0\nE: \(base).200000 0000 0000 0\n"
            return dir.write("k\(i).evemu", text)
        }
        let config = dir.write("c.toml", "[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n")
        // `ulimit -n` sets the hard limit too, so replay cannot raise it.
        let r = runTool(["-c", "ulimit -n 64 && exec \"$0\" \"$@\"", Paths.executable, "replay", "--config", config, "--format", "json"] + paths,
                        executable: "/bin/sh")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr == "")
        let kinds = r.lines.compactMap { line -> String? in
            for kind in ["attach", "detach", "command"] where line.hasPrefix("{\"event\":\"\(kind)\"") { return kind }
            return nil
        }
        #expect(kinds == Array(repeating: ["attach", "command", "detach"], count: count).flatMap { $0 })
        // Each device in the order given, by name.
        let attached = r.lines.filter { $0.hasPrefix("{\"event\":\"attach\"") }
        #expect(attached.first?.contains("\"device\":\"k0.evemu\"") == true)
        #expect(attached.last?.contains("\"device\":\"k\(count - 1).evemu\"") == true)
    }

    /// Replay raises the soft limit to the hard one, so 80 overlapping recordings replay under a
    /// soft limit of 64.
    @Test func theSoftLimitIsRaised() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_max >= 256 else { return }
        let dir = EndToEndDirectory()
        let paths = (0..<80).map { i in dir.write("o\(i).evemu", "E: 1.\(100000 + i) 0000 0000 0\nE: 9.000000 0000 0000 0\n") }
        let r = runTool(["-c", "ulimit -S -n 64 && exec \"$0\" \"$@\"", Paths.executable, "replay", "--format", "json"] + paths, executable: "/bin/sh")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.filter { $0.hasPrefix("{\"event\":\"attach\"") }.count == 80)
    }

    /// Recordings that overlap in time must be open together: more than the limit allows is an
    /// error that says so (the limit here is the soft and hard limit of the shell).
    @Test func tooManyOverlappingRecordingsAreAClearError() {
        let dir = EndToEndDirectory()
        let paths = (0..<80).map { i in dir.write("o\(i).evemu", "E: 1.\(100000 + i) 0000 0000 0\nE: 9.000000 0000 0000 0\n") }
        let r = runTool(["-c", "ulimit -n 64 && exec \"$0\" \"$@\"", Paths.executable, "replay"] + paths, executable: "/bin/sh")
        #expect(r.status == 66)
        #expect(r.stderr.contains(": cannot open: Too many open files: more recordings overlap in time than the limit on open files allows (ulimit -n); replay fewer at once"), "\(r.stderr)")
    }
}
