import CLinux
import KbdSystem
import KbdRecording
import KbdEvdev
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `record -o FILE` (issue 17, D11): the recording, which holds everything typed, is always a
/// new file of mode 0600. Before issue 17 `record` opened with O_CREAT|O_TRUNC: an existing 0644
/// file stayed 0644, and a link's target was overwritten.
@Suite struct FileOutputTests {
    enum Existing: String, CaseIterable, Sendable {
        case nothing, file0644, linkToFile, danglingLink, fifo, directory
    }

    struct Outcome: Equatable, CustomStringConvertible {
        /// The errno, or 0 when the file was written.
        var errno: Int32
        /// What `path` is afterwards: its type, mode and text.
        var path: String
        /// The link target's text afterwards ("" when absent).
        var target: String
        var description: String { "errno \(errno), path \(path), target \(target.debugDescription)" }
    }

    static func describe(_ path: String) -> String {
        var st = stat()
        guard lstat(path, &st) == 0 else { return "absent" }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            let text = (try? readWholeFile(path: path, limit: 1 << 16)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
            return "file \(String(st.st_mode & 0o777, radix: 8)) \(text.debugDescription)"
        case S_IFLNK: return "link"
        case S_IFIFO: return "fifo"
        case S_IFDIR: return "directory"
        default: return "other"
        }
    }

    /// Makes `existing` at dir/out, opens it with `open`, writes "new" and reports what happened.
    static func run(_ existing: Existing, _ open: (String) throws(SystemError) -> FileOutput) -> Outcome {
        let dir = TemporaryDirectory()
        let path = dir.path + "/out.evemu"
        let target = dir.path + "/target"
        switch existing {
        case .nothing: break
        case .file0644: dir.file("out.evemu", "old", mode: 0o644)
        case .linkToFile:
            dir.file("target", "old", mode: 0o644)
            symlink(target, path)
        case .danglingLink: symlink(target, path)
        case .fifo: mkfifo(path, 0o600)
        case .directory: mkdir(path, 0o700)
        }
        var code: Int32 = 0
        do {
            let out = try open(path)
            out.write("new")
            try out.flush()
        } catch {
            code = error.errno
        }
        var targetText = ""
        if access(target, F_OK) == 0 {
            targetText = (try? readWholeFile(path: target, limit: 1 << 16)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
        }
        return Outcome(errno: code, path: describe(path), target: targetText)
    }

    static let created = "file 600 \"new\""

    @Test(.timeLimit(.minutes(1)), arguments: [
        (Existing.nothing, Outcome(errno: 0, path: created, target: "")),
        (.file0644, Outcome(errno: EEXIST, path: "file 644 \"old\"", target: "")),
        (.linkToFile, Outcome(errno: EEXIST, path: "link", target: "old")),
        (.danglingLink, Outcome(errno: EEXIST, path: "link", target: "")),
        (.fifo, Outcome(errno: EEXIST, path: "fifo", target: "")),
        (.directory, Outcome(errno: EEXIST, path: "directory", target: "")),
    ])
    func aRecordingIsAlwaysANewPrivateFile(_ existing: Existing, _ expected: Outcome) {
        #expect(Self.run(existing) { (p: String) throws(SystemError) in try FileOutput.createNew(path: p) } == expected)
    }

    /// `record --force`: a file or a link is replaced by a new 0600 file (a link's target stays as
    /// it was); a FIFO, device or directory is refused and left alone, without blocking.
    @Test(.timeLimit(.minutes(1)), arguments: [
        (Existing.nothing, Outcome(errno: 0, path: created, target: "")),
        (.file0644, Outcome(errno: 0, path: created, target: "")),
        (.linkToFile, Outcome(errno: 0, path: created, target: "old")),
        (.danglingLink, Outcome(errno: 0, path: created, target: "")),
        (.fifo, Outcome(errno: EINVAL, path: "fifo", target: "")),
        (.directory, Outcome(errno: EINVAL, path: "directory", target: "")),
    ])
    func forceReplacesOnlyFilesAndLinks(_ existing: Existing, _ expected: Outcome) {
        #expect(Self.run(existing) { (p: String) throws(SystemError) in try FileOutput.createReplacing(path: p) } == expected)
    }

    @Test func aDeviceIsNotReplaced() {
        #expect(throws: SystemError(operation: "replace", path: "/dev/null", errno: EINVAL)) { _ = try FileOutput.createReplacing(path: "/dev/null") }
        var st = stat()
        #expect(lstat("/dev/null", &st) == 0 && st.st_mode & S_IFMT == S_IFCHR)
    }
}
