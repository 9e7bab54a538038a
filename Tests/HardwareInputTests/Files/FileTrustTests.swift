import KbdCommands
import CLinux
import KbdSystem
import KbdCore
import KbdKeymap
import KbdRecording
import KbdEvdev
import KbdConfig
import KbdControl
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A private directory under /tmp (mode 0700), removed with everything in it.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/kbd-files-XXXXXX".utf8CString)
        _ = mkdtemp(&template)
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { remove(path) }

    private func remove(_ dir: String) {
        for name in Directory.names(dir) {
            let child = dir + "/" + name
            var st = stat()
            if lstat(child, &st) == 0, st.st_mode & S_IFMT == S_IFDIR { remove(child) } else { unlink(child) }
        }
        rmdir(dir)
    }

    /// Writes `text` to `name` with `mode` (exactly: the umask does not apply) and returns its path.
    @discardableResult
    func file(_ name: String, _ text: String = "[[command]]\nid = \"a\"\nkeys = \"Ctrl+A\"\n", mode: mode_t = 0o644) -> String {
        let p = path + "/" + name
        let fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        _ = text.withCString { write(fd, $0, strlen($0)) }
        fchmod(fd, mode)
        close(fd)
        return p
    }

    func directory(_ name: String, mode: mode_t) -> String {
        let p = path + "/" + name
        mkdir(p, 0o700)
        chmod(p, mode)
        return p
    }
}

/// `FileTrust.strict`, the service's StrictModes for its config (issue 17, D12), on real files.
@Suite struct FileTrustTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        /// Builds the situation in a private directory and returns the path to load.
        let make: @Sendable (TemporaryDirectory) -> String
        /// Part of the refusal, or nil when the file is trusted.
        let refusal: String?
        var rootOnly = false
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "a 0644 file", make: { $0.file("c.toml") }, refusal: nil),
        Case(name: "a 0600 file", make: { $0.file("c.toml", mode: 0o600) }, refusal: nil),
        Case(name: "a 0664 file", make: { $0.file("c.toml", mode: 0o664) }, refusal: "writable by group or others (mode 0664)"),
        Case(name: "a 0646 file", make: { $0.file("c.toml", mode: 0o646) }, refusal: "writable by group or others (mode 0646)"),
        Case(name: "a 0666 file", make: { $0.file("c.toml", mode: 0o666) }, refusal: "chmod go-w "),
        Case(name: "a FIFO", make: { d in
            let p = d.path + "/c.toml"
            mkfifo(p, 0o600)
            return p
        }, refusal: "not a regular file (a FIFO)"),
        Case(name: "a directory", make: { $0.directory("c.toml", mode: 0o755) }, refusal: "not a regular file (a directory)"),
        Case(name: "/dev/null", make: { _ in "/dev/null" }, refusal: "not a regular file (a character device)"),
        Case(name: "a link to a 0644 file", make: { d in
            let target = d.file("real.toml")
            symlink(target, d.path + "/c.toml")
            return d.path + "/c.toml"
        }, refusal: nil),
        Case(name: "a link to a 0666 file", make: { d in
            let target = d.file("real.toml", mode: 0o666)
            symlink(target, d.path + "/c.toml")
            return d.path + "/c.toml"
        }, refusal: "(mode 0666)"),
        Case(name: "a file in a 0777 directory", make: { d in
            let dir = d.directory("open", mode: 0o777)
            return d.file("open/c.toml")
        }, refusal: "writable by group or others (mode 0777), who could replace the file: chmod go-w "),
        Case(name: "a file in a sticky 1777 directory", make: { d in
            _ = d.directory("sticky", mode: 0o1777)
            return d.file("sticky/c.toml")
        }, refusal: nil),
        Case(name: "a link in a 0777 directory to a good file", make: { d in
            let target = d.file("real.toml")
            let dir = d.directory("open", mode: 0o777)
            symlink(target, dir + "/c.toml")
            return dir + "/c.toml"
        }, refusal: "/open, writable by group or others (mode 0777)"),
        Case(name: "a file owned by uid 65534", make: { d in
            let p = d.file("c.toml")
            chown(p, 65534, 65534)
            return p
        }, refusal: "owned by uid 65534; expected a file owned by root", rootOnly: true),
        Case(name: "a file in a directory owned by uid 65534", make: { d in
            let dir = d.directory("theirs", mode: 0o755)
            let p = d.file("theirs/c.toml")
            chown(dir, 65534, 65534)
            return p
        }, refusal: "/theirs, owned by uid 65534", rootOnly: true),
    ]

    /// The service's load (`.strict`) refuses what it must, naming the file and the fix, and never
    /// blocks (a FIFO without a writer would block an open forever); the tools' load (`.any`)
    /// still reads every regular file.
    @Test(.timeLimit(.minutes(1)), arguments: cases)
    func theServiceLoadsOnlyTrustedConfigs(_ example: Case) throws {
        guard !example.rootOnly || geteuid() == 0 else { return }
        let dir = TemporaryDirectory()
        let path = example.make(dir)
        do {
            let config = try ConfigLoader.load(path: path, trust: .strict)
            #expect(example.refusal == nil, "loaded \(example.name)")
            #expect(config.table.commands.count == 1)
        } catch {
            let refusal = try #require(example.refusal, "refused \(example.name): \(error)")
            #expect(error.problems.count == 1)
            #expect(error.description.hasPrefix("\(path):0: refusing to load the config: "))
            #expect(error.description.contains(refusal))
        }
        // `check` warns about the same things.
        let owners = FileTrust.trustedOwners
        #expect(strictModeProblems(path: path, trustedOwners: owners).isEmpty == (example.refusal == nil))
        if example.refusal == nil || example.name.contains("mode") || example.name.contains("owned") || example.name.hasPrefix("a 06") {
            // Regular files still load for the command-line tools.
            #expect(throws: Never.self) { _ = try ConfigLoader.load(path: path) }
        }
    }

    /// The service's reload of a config replaced by a FIFO with a writer ready: refused at once.
    /// Before issue 17 the service opened it, read what the writer sent, and loaded that.
    @Test func aFIFOWithAWriterIsStillRefused() throws {
        let dir = TemporaryDirectory()
        let fifo = dir.path + "/c.toml"
        #expect(mkfifo(fifo, 0o600) == 0)
        var pid = pid_t()
        let script = "printf '[[command]]\\nid = \"a\"\\nkeys = \"Ctrl+A\"\\n' > \(fifo)"
        let words: [String] = ["/bin/sh", "-c", script]
        let argv = words.map { strdup($0) } + [nil]
        #expect(posix_spawn(&pid, "/bin/sh", nil, nil, argv, nil) == 0)
        argv.forEach { free($0) }
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        #expect(throws: ConfigError(problems: [.init(location: SourceLocation(path: fifo, line: 0),
                                                     message: "refusing to load the config: not a regular file (a FIFO); expected a regular file")])) {
            _ = try ConfigLoader.load(path: fifo, trust: .strict)
        }
    }

    @Test(arguments: [("/a/b/f", ["/a/b", "/a", "/"]), ("a/f", ["a", "."]), ("f", ["."]), ("/f", ["/"]), ("/a//b/", ["/a/", "/"])])
    func directoriesAboveAPath(_ path: String, _ expected: [String]) {
        #expect(FileInspection.ancestors(of: path) == expected)
    }
}
