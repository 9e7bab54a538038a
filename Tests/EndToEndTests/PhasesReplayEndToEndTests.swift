import KbdSystem
import KbdTestSupport
import KbdJSON
import Testing

/// Issue 36 item 1: key phases through the real replay path (`kbd-commandd replay --print
/// commands --format json`) on recordings of a USB keyboard that `RecordingGenerator.script`
/// writes as the kernel sends them (MSC_SCAN before each key, autorepeat value 2 after 250 ms
/// then every 33 ms): `on = "release"`, `hold_ms` beside a plain command on the same chord,
/// a tap of Super alone beside `[hud] hold`, `repeat` with `cooldown_ms`, `run_on_release`,
/// and the `phase` field of each `command` event.
@Suite struct PhasesReplayEndToEndTests {
    typealias S = RecordingGenerator.Stroke

    static let config = """
        [[command]]
        id = "save-on-release"
        keys = "Ctrl+S"
        on = "release"

        [[command]]
        id = "record"
        keys = "Ctrl+Alt+R"
        hold_ms = 500

        [[command]]
        id = "screenshot"
        keys = "Ctrl+Alt+R"

        [[command]]
        id = "launcher"
        keys = "Super"

        [[command]]
        id = "terminal"
        keys = "Super+Return"

        [[command]]
        id = "volume-up"
        keys = "XF86AudioRaiseVolume"
        repeat = true
        cooldown_ms = 100

        [[command]]
        id = "volume-down"
        keys = "XF86AudioLowerVolume"
        repeat = true

        [[command]]
        id = "push-to-talk"
        keys = "Ctrl+Alt+M"
        run = ["true"]
        run_on_release = ["true"]

        [[command]]
        id = "copy"
        keys = "Ctrl+C"

        [hud]
        hold = "Super"
        delay_ms = 700
        """

    /// Replays `strokes` (ms from second 1000) with `config`: the command events as
    /// "id phase ms" (phase "-" when the line has none), the recording and every line.
    static func replay(_ strokes: [S], config: String = config) throws -> (commands: [String], recording: String, lines: [String]) {
        let dir = EndToEndDirectory()
        let out = StringOutput()
        var generator = RecordingGenerator(seed: 36, output: out)
        generator.script(strokes)
        let recording = dir.write("keys.evemu", out.text)
        let configPath = dir.write("c.toml", config)
        let r = runTool(["replay", "--config", configPath, "--format", "json", "--print", "commands", "--print", "hud", recording])
        #expect(r.status == 0, "\(r.stderr)")
        var commands: [String] = []
        for line in r.lines where line.hasPrefix(#"{"event":"command""#) {
            guard case .object(let o) = try JSONValue.parse(line) else { continue }
            let ms = Int(((o["time"]?.numberValue ?? 0) - 1000) * 1000 + 0.5)
            commands.append("\(o["id"]?.stringValue ?? "?") \(o["phase"]?.stringValue ?? "-") \(ms)")
        }
        return (commands, out.text, r.lines)
    }

    /// The times (ms after second 1000) of the recording's EV_KEY value 2 events of `code` (hex).
    static func repeats(in recording: String, code: String) -> [Int] {
        recording.split(separator: "\n").compactMap { line -> Int? in
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard f.count >= 5, f[0] == "E:", f[2] == "0001", f[3] == Substring(code), Int(f[4]) == 2, let s = Double(f[1]) else { return nil }
            return Int((s - 1000) * 1000 + 0.5)
        }
    }

    @Test func onReleaseFiresAtTheKeysReleaseOnly() throws {
        let (commands, _, lines) = try Self.replay([S(0, "KEY_LEFTCTRL", 1), S(100, "KEY_S", 1), S(180, "KEY_S", 0), S(300, "KEY_LEFTCTRL", 0)])
        #expect(commands == ["save-on-release release 180"])
        let line = try #require(lines.first { $0.hasPrefix(#"{"event":"command""#) })
        #expect(line.hasSuffix(#""id":"save-on-release","title":"save-on-release","scope":"global","chord":"Ctrl+S","phase":"release"}"#), "\(line)")
        // Ctrl released first: the chord was pressed, its key's release still fires it.
        let (early, _, _) = try Self.replay([S(0, "KEY_LEFTCTRL", 1), S(100, "KEY_S", 1), S(150, "KEY_LEFTCTRL", 0), S(200, "KEY_S", 0)])
        #expect(early == ["save-on-release release 200"])
    }

    @Test func holdFiresOnceAfterHoldMsAndThePlainCommandAtAnEarlyRelease() throws {
        // Held 1.2 s (autorepeat from 250 ms): the hold fires once at 100 + 500, the plain one never.
        let (held, recording, _) = try Self.replay([S(0, "KEY_LEFTCTRL", 1), S(50, "KEY_LEFTALT", 1), S(100, "KEY_R", 1),
                                                    S(1300, "KEY_R", 0), S(1350, "KEY_LEFTALT", 0), S(1400, "KEY_LEFTCTRL", 0)])
        #expect(!Self.repeats(in: recording, code: "0013").isEmpty, "the recording holds R with the kernel's repeats")
        #expect(held == ["record hold 600"])
        // Released after 200 ms: the plain command on the same chord, at the release (it uses
        // no phase key itself: no phase field, as before).
        let (tapped, _, _) = try Self.replay([S(0, "KEY_LEFTCTRL", 1), S(50, "KEY_LEFTALT", 1), S(100, "KEY_R", 1),
                                              S(300, "KEY_R", 0), S(350, "KEY_LEFTALT", 0), S(400, "KEY_LEFTCTRL", 0)])
        #expect(tapped == ["screenshot - 300"])
        // The deadline is the event clock's: a release exactly at 500 ms is a hold (due at 600, released at 600).
        let (edge, _, _) = try Self.replay([S(0, "KEY_LEFTCTRL", 1), S(50, "KEY_LEFTALT", 1), S(100, "KEY_R", 1),
                                            S(600, "KEY_R", 0), S(650, "KEY_LEFTALT", 0), S(700, "KEY_LEFTCTRL", 0)])
        #expect(edge == ["record hold 600"])
    }

    @Test func superTappedAloneFiresATapThatCoexistsWithTheHudsHold() throws {
        let (tap, _, lines) = try Self.replay([S(0, "KEY_LEFTMETA", 1), S(150, "KEY_LEFTMETA", 0)])
        #expect(tap == ["launcher tap 150"])
        let line = try #require(lines.first { $0.hasPrefix(#"{"event":"command""#) })
        #expect(line.contains(#""chord":"Super","phase":"tap""#), "\(line)")
        #expect(!lines.contains { $0.hasPrefix(#"{"event":"hud""#) })
        // The right Super is Super too.
        let (right, _, _) = try Self.replay([S(0, "KEY_RIGHTMETA", 1), S(100, "KEY_RIGHTMETA", 0)])
        #expect(right == ["launcher tap 100"])
        // Another key between: Super+Return, no tap.
        let (chord, _, _) = try Self.replay([S(0, "KEY_LEFTMETA", 1), S(100, "KEY_ENTER", 1), S(150, "KEY_ENTER", 0), S(200, "KEY_LEFTMETA", 0)])
        #expect(chord == ["terminal - 100"])
        // Another modifier between: no tap.
        let (shift, _, _) = try Self.replay([S(0, "KEY_LEFTMETA", 1), S(100, "KEY_LEFTSHIFT", 1), S(150, "KEY_LEFTSHIFT", 0), S(200, "KEY_LEFTMETA", 0)])
        #expect(shift.isEmpty)
        // Held past tap_ms (400): no tap; past the HUD's delay the HUD shows and hides, still no tap.
        let (long, recording, _) = try Self.replay([S(0, "KEY_LEFTMETA", 1), S(450, "KEY_LEFTMETA", 0)])
        #expect(!Self.repeats(in: recording, code: "007d").isEmpty, "Super repeats as the kernel repeats it")
        #expect(long.isEmpty)
        let (hud, _, hudLines) = try Self.replay([S(0, "KEY_LEFTMETA", 1), S(900, "KEY_LEFTMETA", 0)])
        #expect(hud.isEmpty)
        #expect(hudLines.filter { $0.hasPrefix(#"{"event":"hud""#) }.count == 2)
        // Pressed while Ctrl is down: not alone.
        let (withCtrl, _, _) = try Self.replay([S(0, "KEY_LEFTCTRL", 1), S(50, "KEY_LEFTMETA", 1), S(100, "KEY_LEFTMETA", 0), S(150, "KEY_LEFTCTRL", 0)])
        #expect(withCtrl.isEmpty)
    }

    @Test func repeatWithCooldownFiresOnTheKernelsRepeatsAtMostOncePerCooldown() throws {
        let (commands, recording, _) = try Self.replay([S(0, "KEY_VOLUMEUP", 1), S(2000, "KEY_VOLUMEUP", 0)])
        // The expected firings from the recording's own EV_KEY value 2 events: the press, then
        // each repeat at least 100 ms after the last firing.
        let repeats = Self.repeats(in: recording, code: "0073")
        #expect(repeats.count > 50, "2 s of the kernel's repeats")
        var expected = ["volume-up press 0"]
        var last = 0
        for t in repeats where t >= last + 100 {
            expected.append("volume-up repeat \(t)")
            last = t
        }
        #expect(commands == expected)
        // Repeats every 33 ms: every fourth fires (132 ms apart), not all 50-odd.
        #expect(commands.count == 1 + (repeats.count + 3) / 4, "\(commands.count) of \(repeats.count) repeats")
        // Without cooldown_ms every repeat fires, as before, with its phase.
        let (all, _, _) = try Self.replay([S(0, "KEY_VOLUMEDOWN", 1), S(2000, "KEY_VOLUMEDOWN", 0)])
        #expect(all.count == repeats.count + 1)
        #expect(all.first == "volume-down - 0" && all.dropFirst().allSatisfy { $0.hasPrefix("volume-down repeat ") })
    }

    @Test func runOnReleaseFiresAgainAtTheReleaseAndPlainCommandsCarryNoPhase() throws {
        let (commands, _, lines) = try Self.replay([S(0, "KEY_LEFTCTRL", 1), S(30, "KEY_LEFTALT", 1), S(60, "KEY_M", 1), S(1000, "KEY_M", 0),
                                                    S(1050, "KEY_LEFTALT", 0), S(1100, "KEY_LEFTCTRL", 0),
                                                    S(1500, "KEY_LEFTCTRL", 1), S(1550, "KEY_C", 1), S(1600, "KEY_C", 0), S(1650, "KEY_LEFTCTRL", 0)])
        #expect(commands == ["push-to-talk press 60", "push-to-talk release 1000", "copy - 1550"])
        // A command without phases: the line as before issue 36.
        #expect(lines.contains { $0.hasSuffix(#""id":"copy","title":"copy","scope":"global","chord":"Ctrl+C"}"#) })
    }

    @Test func aKeyboardUnpluggedWhileHeldReleasesItsPhases() throws {
        // The recording ends with Ctrl+Alt+M held: the detach releases it (push-to-talk is not left on).
        let (commands, _, _) = try Self.replay([S(0, "KEY_LEFTCTRL", 1), S(30, "KEY_LEFTALT", 1), S(60, "KEY_M", 1)])
        #expect(commands.first == "push-to-talk press 60")
        #expect(commands.count == 2 && commands[1].hasPrefix("push-to-talk release "))
    }

    @Test func theTextFormatNamesThePhase() throws {
        let dir = EndToEndDirectory()
        let out = StringOutput()
        var generator = RecordingGenerator(seed: 36, output: out)
        generator.script([S(0, "KEY_LEFTMETA", 1), S(150, "KEY_LEFTMETA", 0)])
        let r = runTool(["replay", "--config", dir.write("c.toml", Self.config), dir.write("k.evemu", out.text)])
        #expect(r.lines.contains { $0.hasSuffix(#"command   launcher "launcher" Super (tap)"#) }, "\(r.stdout)")
    }
}
