import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 28: `kbd-commandd bar` runs the built kbd-commandd-bar; where the desktop cannot show
/// it (GNOME's Mutter has no layer-shell, or there is no Wayland display at all) it says so
/// once on stderr and exits 69, which the agent takes as "do not start it again".
/// (The bar drawn in a real compositor: tests-desktop/bar-e2e.sh.)
@Suite struct BarEndToEndTests {
    @Test func helpTeaches() {
        let r = runTool(["bar", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("USAGE: kbd-commandd bar [--socket <path>] [--config <file>]"))
        #expect(r.stdout.contains("[bar] enabled"))
    }

    @Test func gnomeSaysSoOnceAndExits69() {
        let r = runTool(["bar", "--socket", "/nonexistent/socket"], environment: testEnvironment.merging(["XDG_CURRENT_DESKTOP": "GNOME"]) { $1 })
        #expect(r.status == 69)
        #expect(r.stderr.split(separator: "\n").count == 1)
        #expect(r.stderr.contains("GNOME Shell (Mutter) has no layer-shell"))
    }

    @Test func noDisplayExits69() {
        let r = runTool(["bar", "--socket", "/nonexistent/socket"], environment: testEnvironment.merging(["XDG_RUNTIME_DIR": "/nonexistent"]) { $1 })
        #expect(r.status == 69)
        #expect(r.stderr.contains("no Wayland display"))
    }

    @Test func disabledByTheConfigExits0() throws {
        var template = Array("/tmp/kbd-bar-e2e-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        #expect(made)
        let dir = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { _ = runTool(["-rf", dir], executable: "/bin/rm") }
        let config = dir + "/config.toml"
        _ = runTool(["-c", "printf '[bar]\\nenabled = false\\n' > \(config); chmod 600 \(config)"], executable: "/bin/sh")
        let r = runTool(["bar", "--socket", "/nonexistent/socket", "--config", config])
        #expect(r.status == 0)
        #expect(r.stderr.contains("[bar] enabled = false"))
    }

    @Test func badOptionIsAUsageError() {
        let r = runTool(["bar", "--sockt", "/x"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown option '--sockt'"))
    }
}

/// Issue 28: the agent starts the built kbd-commandd-bar beside it unless `[bar] enabled =
/// false`; a bar that cannot show (here: no Wayland display) exits 69 and is not started again.
@Suite(.serialized)
struct AgentStartsTheBarEndToEndTests {
    static func run(_ config: String, settle: Double) -> String {
        let dir = EndToEndDirectory()
        let path = dir.write("config.toml", config, mode: 0o600)
        let environment = ["LANG": "en_US.UTF-8", "HOME": dir.path, "XDG_RUNTIME_DIR": dir.path, "PATH": "/usr/bin:/bin"]
        let agent = RunningTool(["agent", "--socket", dir.path + "/none.sock", "--config", path], environment: environment)
        _ = agent.waitFor("waiting for the service")
        // The bar (if started) has had time to say why it cannot show, and to be reaped.
        _ = agent.waitFor("not started again", seconds: settle)
        agent.signal(SIGTERM)
        #expect(agent.wait() == 0)
        return agent.stderr
    }

    @Test func startedByDefaultAndNotAgainWhereItCannotShow() {
        let log = Self.run("[osk]\nbackend = \"none\"\n", settle: 10)
        #expect(log.contains("bar: started "), "\(log)")
        #expect(log.contains("kbd-commandd-bar: no Wayland display"), "\(log)")
        #expect(log.contains("bar: this desktop cannot show the shortcuts bar (no layer-shell); not started again"), "\(log)")
        #expect(log.split(separator: "bar: started ", omittingEmptySubsequences: false).count == 2, "started once")
    }

    @Test func notStartedWhenDisabled() {
        let log = Self.run("[osk]\nbackend = \"none\"\n\n[bar]\nenabled = false\n", settle: 1)
        #expect(!log.contains("bar: started"), "\(log)")
        #expect(!log.contains("kbd-commandd-bar"), "\(log)")
    }
}
