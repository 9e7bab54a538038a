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
