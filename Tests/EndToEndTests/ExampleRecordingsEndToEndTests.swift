import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 27: the example recordings press the starter configs' keys (the man pages replay
/// them from /usr/share/doc/kbd-commandd/examples/), and libevemu reads them.
@Suite(.serialized)
struct ExampleRecordingsEndToEndTests {
    static func commandIDs(_ recording: String, config: String) -> [String] {
        let r = runTool(["replay", Paths.examples + "/recordings/" + recording, "--config", config, "--format", "json"])
        return r.lines.filter { $0.hasPrefix(#"{"event":"command""#) }.compactMap { line in
            line.split(separator: ",").first { $0.hasPrefix(#""id":"#) }.map { String($0.dropFirst(6).dropLast()) }
        }
    }

    @Test func theDesktopStarterFires() {
        #expect(Self.commandIDs("desktop-keys.evemu", config: Paths.examples + "/desktop.toml")
                == ["terminal", "volume-up", "volume-up", "volume-up", "volume-up", "screenshot"])
    }

    /// The service's starter binds nothing; its commented examples, uncommented, fire.
    @Test func theServiceStartersExamplesFire() {
        var text = ""
        for line in slurpFile(Paths.examples + "/config.toml").split(separator: "\n") {
            for key in ["# [[command]]", "# id", "# title", "# keys", "# run"] where line.hasPrefix(key) { text += line.dropFirst(2) + "\n" }
        }
        let dir = EndToEndDirectory()
        let config = dir.write("config.toml", text)
        #expect(Self.commandIDs("service-keys.evemu", config: config) == ["mark", "kiosk-home"])
        #expect(Self.commandIDs("service-keys.evemu", config: Paths.examples + "/config.toml") == [])
    }

    @Test(.enabled(if: EvemuCompatibilityTests.checker != nil, "needs cc and libevemu-dev"),
          arguments: ["desktop-keys.evemu", "service-keys.evemu"])
    func libevemuReadsThem(_ name: String) {
        let r = runTool([Paths.examples + "/recordings/" + name], executable: EvemuCompatibilityTests.checker!)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Logitech K400 Plus"), "\(r.stdout)")
    }
}
