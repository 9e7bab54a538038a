import KbdSystem
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 28 with the real processes: the service (`run --replay`, a generated USB keyboard
/// played in real time) and `watch --events hud,toolbar`: the toolbar right after
/// subscribing, then the HUD shown by a held Super and hidden on its release, and toggled by
/// a HUD command, on the service's own timer.
@Suite(.serialized)
struct HudServiceEndToEndTests {
    @Test func watchSeesTheToolbarAndTheHudOfAReplayedKeyboard() throws {
        let dir = EndToEndDirectory()
        let out = StringOutput()
        var generator = RecordingGenerator(seed: 28, output: out)
        typealias S = RecordingGenerator.Stroke
        // Shift tapped at once (the recording's start), Super held alone 3 s later, then Super+Slash.
        generator.script([S(0, "KEY_LEFTSHIFT", 1), S(50, "KEY_LEFTSHIFT", 0), S(3000, "KEY_LEFTMETA", 1), S(4000, "KEY_LEFTMETA", 0),
                          S(5000, "KEY_LEFTMETA", 1), S(5100, "KEY_SLASH", 1), S(5150, "KEY_SLASH", 0), S(5200, "KEY_LEFTMETA", 0)])
        let recording = dir.write("keys.evemu", out.text)
        let config = dir.write("c.toml", """
            [[command]]
            id = "find"
            title = "Find"
            group = "Edit"
            keys = "Ctrl+F"

            [[command]]
            id = "shortcuts"
            title = "Shortcuts"
            keys = "Super+Slash"
            action = "hud"
            """)
        let socket = dir.path + "/k.sock"
        let service = RunningTool(["run", "--config", config, "--socket", socket, "--replay", recording])
        defer {
            service.signal(SIGTERM)
            _ = service.wait()
        }
        #expect(service.waitFor("ready: 2 commands"))
        let watch = RunningTool(["watch", "--socket", socket, "--events", "hud,toolbar", "--format", "json"])
        #expect(service.waitFor("replay: every recording has played", seconds: 20))
        usleep(300_000)
        watch.signal(SIGTERM)
        _ = watch.wait()
        let lines = watch.stdout.split(separator: "\n").map(String.init)
        let kinds = lines.compactMap { line -> String? in
            guard line.hasPrefix(#"{"event":"hud""#) || line.hasPrefix(#"{"event":"toolbar""#) else { return nil }
            if line.hasPrefix(#"{"event":"toolbar""#) { return "toolbar" }
            return (line.contains(#""show":true"#) ? "show " : "hide ") + (line.contains(#""trigger":"hold""#) ? "hold" : "chord")
        }
        #expect(kinds == ["toolbar", "show hold", "hide hold", "show chord"], "\(watch.stdout)\n\(watch.stderr)")
        #expect(lines.first { $0.hasPrefix(#"{"event":"toolbar""#) }?.contains(#"{"title":"Edit","commands":[{"table":"system","scope":"global","id":"find","title":"Find""#) == true)
        // Shown 0.7 s after Super went down (the service's timer), hidden when it came up 1 s after.
        let times = lines.filter { $0.contains(#""trigger":"hold""#) }.compactMap { line -> Double? in
            guard let r = line.firstRange(of: #""time":"#) else { return nil }
            return Double(line[r.upperBound...].prefix { $0 != "," })
        }
        #expect(times.count == 2)
        if times.count == 2 { #expect(abs((times[1] - times[0]) - 0.3) < 0.05, "\(times)") }
    }
}
