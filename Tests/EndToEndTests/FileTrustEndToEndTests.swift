import KbdJSON
import KbdSystem
import KbdCore
import KbdKeymap
import KbdEvdev
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A private directory for one end-to-end test (mode 0700 under /tmp), removed afterwards.
final class EndToEndDirectory {
    let path: String

    init() {
        var template = Array("/tmp/kbd-e2e-files-XXXXXX".utf8CString)
        _ = mkdtemp(&template)
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        // Only plain entries are made here: remove them, then the directory.
        for name in Directory.names(path) { unlink(path + "/" + name) }
        rmdir(path)
    }

    /// Writes `text` to `name` with exactly `mode` and returns the path.
    @discardableResult
    func write(_ name: String, _ text: String, mode: mode_t = 0o644) -> String {
        let p = path + "/" + name
        unlink(p)
        let fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        fchmod(fd, mode)
        close(fd)
        return p
    }

    /// Copies the file at `source` to `name` in this directory with `mode` and returns the path:
    /// how a test hands a built program to another uid, which cannot enter a clone kept in a
    /// 0700 directory (a Debian 12 home, /root).
    func copy(_ source: String, to name: String, mode: mode_t = 0o755) -> String {
        let p = path + "/" + name
        unlink(p)
        let input = open(source, O_RDONLY | O_CLOEXEC)
        let output = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(input >= 0 && output >= 0, "cannot copy \(source) to \(p)")
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            precondition(n >= 0, "cannot read \(source)")
            if n == 0 { break }
            let written = buffer.withUnsafeBytes { Glibc.write(output, $0.baseAddress, n) }
            precondition(written == n, "cannot write \(p)")
        }
        fchmod(output, mode)
        close(input)
        close(output)
        return p
    }
}

/// The service's config must be trusted like sshd's StrictModes wants (issue 17, D12): it runs
/// the programs the file names. Before issue 17 the service loaded each of these.
@Suite(.serialized)
struct ConfigTrustEndToEndTests {
    static let config = "[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n"

    @Test(arguments: ["group-writable", "world-writable", "a FIFO with a writer", "owned by nobody"])
    func theServiceRefusesAnUntrustedConfigAtStart(_ kind: String) {
        guard kind != "owned by nobody" || geteuid() == 0 else { return }
        let dir = EndToEndDirectory()
        let path = dir.path + "/config.toml"
        var writer: pid_t = 0
        switch kind {
        case "group-writable": dir.write("config.toml", Self.config, mode: 0o664)
        case "world-writable": dir.write("config.toml", Self.config, mode: 0o606)
        case "owned by nobody":
            dir.write("config.toml", Self.config)
            chown(path, 65534, 65534)
        default:
            mkfifo(path, 0o600)
            let words: [String] = ["/bin/sh", "-c", "printf '\(Self.config.replacingNewlines())' > \(path)"]
            let argv = words.map { strdup($0) } + [nil]
            posix_spawn(&writer, "/bin/sh", nil, nil, argv, nil)
            argv.forEach { free($0) }
        }
        defer {
            if writer > 0 {
                kill(writer, SIGKILL)
                var status: Int32 = 0
                waitpid(writer, &status, 0)
            }
        }
        let daemon = RunningTool(["run", "--config", path, "--no-socket", "--input-dir", "/nonexistent"])
        let status = daemon.wait(seconds: 10)
        #expect(status == 66, "\(kind): \(daemon.stderr)")
        #expect(daemon.stderr.hasPrefix("Error: \(path):0: refusing to load the config: "))
        let fix = kind == "owned by nobody" ? "chown root \(path)" : kind.hasSuffix("writable") ? "chmod go-w \(path)" : "(a FIFO)"
        #expect(daemon.stderr.contains(fix), "\(daemon.stderr)")
    }

    /// A reload refuses a config made writable, and a config replaced by a FIFO does not freeze
    /// the loop (before issue 17 the reload opened the FIFO and blocked: SIGTERM went unanswered).
    @Test func aReloadRefusesAnUntrustedConfigAndKeepsTheOld() {
        let dir = EndToEndDirectory()
        let path = dir.write("config.toml", Self.config)
        let daemon = RunningTool(["run", "--config", path, "--no-socket", "--input-dir", "/nonexistent"])
        #expect(daemon.waitFor("ready: 1 commands, 0 keyboards"))
        chmod(path, 0o666)
        daemon.signal(SIGHUP)
        #expect(daemon.waitFor("reload failed, keeping the previous config: \(path):0: refusing to load the config: writable by group or others (mode 0666)"))
        unlink(path)
        mkfifo(path, 0o600)
        daemon.signal(SIGHUP)
        #expect(daemon.waitFor("refusing to load the config: not a regular file (a FIFO)"))
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        #expect(daemon.stderr.contains("INFO stopped"))
    }

    /// A symbolic link to a trusted file is fine (configs in /etc often are links), and `check`
    /// refuses what the service would refuse (issue 27: it said OK with a warning, then the
    /// service's reload refused the file with exit 78).
    @Test func linksAreFollowedAndCheckWarns() {
        let dir = EndToEndDirectory()
        let real = dir.write("real.toml", Self.config)
        let link = dir.path + "/config.toml"
        symlink(real, link)
        let daemon = RunningTool(["run", "--config", link, "--no-socket", "--input-dir", "/nonexistent"])
        #expect(daemon.waitFor("ready: 1 commands, 0 keyboards"))
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)

        let fine = runTool(["check", "--config", link])
        #expect(fine.status == 0 && fine.stderr == "")
        chmod(real, 0o664)
        let refused = runTool(["check", "--config", link])
        #expect(refused.status == 78)
        #expect(refused.stdout == "")
        #expect(refused.stderr == "Error: \(link):1: the service refuses this config: writable by group or others (mode 0664); expected a file only its owner can change, as the service runs its commands: chmod go-w \(link)\n")
    }

    /// Issue 27: a group-writable drop-in: `check` and the service's reload both refuse it (78).
    @Test func aGroupWritableDropInIsAnErrorForCheckAndReload() {
        let root = ConfigPathsEndToEndTests.root([
            "config.toml": Self.config,
            "config.d/20-more.toml": "[[command]]\nid = \"more\"\nkeys = \"Ctrl+Alt+M\"\n",
        ])
        defer { ConfigPathsEndToEndTests.remove(root) }
        let environment = ConfigPathsEndToEndTests.environment(root).merging(["XDG_RUNTIME_DIR": root]) { $1 }
        #expect(runTool(["check"], environment: environment).status == 0)
        let daemon = RunningTool(["run", "--socket", root + "/s.sock", "--input-dir", "/nonexistent"], environment: environment)
        #expect(daemon.waitFor("ready: 2 commands"))
        chmod(root + "/config.d/20-more.toml", 0o664)
        let check = runTool(["check"], environment: environment)
        #expect(check.status == 78)
        #expect(check.stderr.hasPrefix("Error: \(root)/config.d/20-more.toml:1: the service refuses this config: writable by group or others (mode 0664)"), "\(check.stderr)")
        let reload = runTool(["reload", "--socket", root + "/s.sock"], environment: environment)
        #expect(reload.status == 78)
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        unlink(root + "/s.sock")
    }

    /// Issue 27: `check --agent` checks a user's config as the agent reads it: a [keymap] is
    /// refused with the reason (the agent refuses it too), and session programs are fine there.
    @Test func checkAgentRefusesAKeymap() {
        let dir = EndToEndDirectory()
        let path = dir.write("config.toml", "[[command]]\nid = \"term\"\nkeys = \"Ctrl+Alt+T\"\nrun = [\"foot\"]\n\n[keymap]\nlayout = \"de\"\n")
        let agent = runTool(["check", "--agent", "--config", path])
        #expect(agent.status == 78)
        #expect(agent.stderr.hasPrefix("Error: \(path):6: [keymap] in a user's agent config: the service maps every key with its own keymap"), "\(agent.stderr)")
        // As the service's config the same file is valid, with a warning about foot.
        let service = runTool(["check", "--config", path])
        #expect(service.status == 0)
        #expect(service.stderr.contains("'foot' is a terminal; it needs a desktop session"), "\(service.stderr)")
        let fine = dir.write("desktop.toml", "[[command]]\nid = \"term\"\nkeys = \"Ctrl+Alt+T\"\nrun = [\"/bin/true\", \"foot\"]\n")
        let ok = runTool(["check", "--agent", "--config", fine])
        #expect(ok.status == 0 && ok.stderr == "", "\(ok.stderr)")
    }
}

extension String {
    /// For a printf format in single quotes: newlines as `\n`.
    func replacingNewlines() -> String {
        var out = ""
        for c in self { out += c == "\n" ? "\\n" : String(c) }
        return out
    }
}
