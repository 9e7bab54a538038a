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

/// Issue 36: `kbd-commandd-bar --consent …`, the consent dialog the agent runs for an app's
/// global shortcut, where it cannot ask: without a display it refuses (stdout `refuse`, exit
/// 69), and a usage error exits 2 with nothing on stdout. (The dialog drawn, tapped and typed
/// to in a real compositor: tests-desktop/consent-e2e.sh.)
@Suite struct ConsentEndToEndTests {
    static let bar = Paths.builtProduct("kbd-commandd-bar")

    @Test func withoutADisplayItRefusesWith69() {
        let r = runTool(["--consent", "--app", "org.example.Rec", "--description", "Record", "--chord", "Ctrl+Alt+M"],
                        environment: testEnvironment.merging(["XDG_RUNTIME_DIR": "/nonexistent", "WAYLAND_DISPLAY": "wayland-9"]) { $1 },
                        executable: Self.bar)
        #expect(r.status == 69)
        #expect(r.stdout == "refuse\n")
        #expect(r.stderr.contains("cannot open a display"))
    }

    @Test func usageErrorsExit2AndNameTheArgument() {
        for (arguments, needle) in [(["--consent", "--app", "a", "--description", "d", "--chord", "Ctrl+Sprocket"], "--chord 'Ctrl+Sprocket'"),
                                    (["--consent", "--description", "d"], "--app"),
                                    (["--consent", "--app", "a", "--description", "d", "--timeout", "-1"], "--timeout")] {
            let r = runTool(arguments, executable: Self.bar)
            #expect(r.status == 2, "\(arguments)")
            #expect(r.stdout.isEmpty, "\(arguments)")
            #expect(r.stderr.contains(needle), "\(arguments): \(r.stderr)")
        }
    }

    @Test func helpDocumentsTheDialog() {
        let r = runTool(["--consent", "--help"], executable: Self.bar)
        #expect(r.status == 0)
        #expect(r.stdout.contains("accept CHORD"))
    }
}
