import KbdSystem
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 36 item 1 through the built service (`kbd-commandd run --replay`, in real time, its
/// real command runner and loop): `run` at the press and `run_on_release` at the release
/// (push-to-talk), a `hold_ms` (due 150 ms after the press, before the first autorepeat), a
/// tap of Super alone; and `check` refusing nonsense with file:line and the nearest name.
@Suite(.serialized)
struct PhasesServiceEndToEndTests {
    typealias S = RecordingGenerator.Stroke

    @Test func theServicesRunnerRunsRunAtThePressAndRunOnReleaseAtTheRelease() throws {
        let dir = EndToEndDirectory()
        let proof = dir.path + "/proof"
        let config = dir.write("config.toml", """
            [[command]]
            id = "push-to-talk"
            keys = "Ctrl+Alt+M"
            run = ["/bin/sh", "-c", "echo unmute >> \(proof)"]
            run_on_release = ["/bin/sh", "-c", "echo mute >> \(proof)"]

            [[command]]
            id = "record"
            keys = "Ctrl+Alt+R"
            hold_ms = 150
            run = ["/bin/sh", "-c", "echo record >> \(proof)"]

            [[command]]
            id = "launcher"
            keys = "Super"
            run = ["/bin/sh", "-c", "echo launcher >> \(proof)"]
            """)
        let out = StringOutput()
        var generator = RecordingGenerator(seed: 36, output: out)
        // Push-to-talk held 600 ms; then R held 400 ms (the hold is due 150 ms after its press,
        // before the first autorepeat at 250 ms: no event comes then); then a tap of Super.
        generator.script([S(0, "KEY_LEFTCTRL", 1), S(20, "KEY_LEFTALT", 1), S(40, "KEY_M", 1), S(640, "KEY_M", 0),
                          S(700, "KEY_R", 1), S(1100, "KEY_R", 0), S(1150, "KEY_LEFTALT", 0), S(1200, "KEY_LEFTCTRL", 0),
                          S(1400, "KEY_LEFTMETA", 1), S(1500, "KEY_LEFTMETA", 0)])
        let recording = dir.write("ptt.evemu", out.text)
        let daemon = RunningTool(["run", "--config", config, "--no-socket", "--replay", recording])
        defer {
            daemon.signal(SIGKILL)
            _ = daemon.wait()
        }
        #expect(daemon.waitFor("replay: every recording has played", seconds: 15), "\(daemon.stderr)")
        var text = ""
        for _ in 0..<250 where text.split(separator: "\n").count < 4 {
            text = slurpFile(proof)
            usleep(20_000)
        }
        #expect(text == "unmute\nmute\nrecord\nlauncher\n", "\(daemon.stderr)")
        let log = daemon.stderr
        #expect(log.contains("command push-to-talk \"push-to-talk\" (Ctrl+Alt+M) on \"scripted keyboard\" (press)"), "\(log)")
        #expect(log.contains("command push-to-talk \"push-to-talk\" (Ctrl+Alt+M) on \"scripted keyboard\" (release)"))
        #expect(log.contains("command record \"record\" (Ctrl+Alt+R) on \"scripted keyboard\" (hold)"))
        #expect(log.contains("command launcher \"launcher\" (Super) on \"scripted keyboard\" (tap)"))
        // The hold fired once, though R stayed down with the kernel's repeats for 250 ms more.
        #expect(log.split(separator: "\n").filter { $0.contains("command record ") }.count == 1)
    }

    @Test func checkRefusesNonsenseWithFileLineAndTheNearestName() {
        let dir = EndToEndDirectory()
        let path = dir.write("c.toml", """
            [[command]]
            id = "a"
            keys = "Ctrl+A"
            hold_ms = 0

            [[command]]
            id = "b"
            keys = "Ctrl+B"
            on = "relase"

            [[command]]
            id = "c"
            keys = "Ctrl+S"
            tap_ms = 200

            [[command]]
            id = "d"
            keys = "Ctrl+D"
            cooldown_ms = 100

            [[command]]
            id = "e"
            keys = "Ctrl+E"
            hold_time = 300

            [[command]]
            id = "f"
            keys = "Ctrl+F"
            on = "release"
            run_on_release = ["true"]

            [[command]]
            id = "g"
            keys = "Super"
            repeat = true

            [[command]]
            id = "h"
            keys = "Ctrl+H"
            hold_ms = "long"
            """)
        let r = runTool(["check", "--config", path])
        #expect(r.status == 78)
        let expected = [
            "Error: \(path):4: hold_ms = 0: expected a whole number of milliseconds from 1 to 60000 (how long the chord is held before the command fires)",
            "Error: \(path):9: on: expected \"press\" (the default) or \"release\" (fires when the chord's key is released), found 'relase' (did you mean 'release'?)",
            "Error: \(path):14: tap_ms: keys = 'Ctrl+S' is not a modifier alone; tap_ms is for a modifier tapped alone, such as keys = \"Super\" (Ctrl, Alt, Shift, Super or AltGr)",
            "Error: \(path):19: cooldown_ms: limits how often the key's repeats fire, and this command does not fire on repeats; add repeat = true, or remove cooldown_ms",
            "Error: \(path):24: unknown key 'hold_time' in [[command]] (did you mean 'hold_ms'?)",
            "Error: \(path):30: run_on_release: a command with on = \"release\" already fires at the release; put the program in run, or remove on",
            "Error: \(path):35: repeat: keys = \"Super\" alone fires once, when Super is tapped alone (within tap_ms); repeat does not apply to it",
            "Error: \(path):40: hold_ms: expected a whole number of milliseconds, found a string",
        ]
        let lines = r.stderr.split(separator: "\n").map(String.init)
        for e in expected { #expect(lines.contains { $0.hasPrefix(e) }, "\(e)\n---\n\(r.stderr)") }
    }

    @Test func checkAcceptsThePhasesAndWarnsAboutATapAsLongAsTheHudsHold() {
        let dir = EndToEndDirectory()
        let path = dir.write("c.toml", """
            [[command]]
            id = "screenshot"
            keys = "Ctrl+Alt+R"

            [[command]]
            id = "record"
            keys = "Ctrl+Alt+R"
            hold_ms = 600

            [[command]]
            id = "launcher"
            keys = "Win"
            tap_ms = 800

            [[command]]
            id = "volume"
            keys = "XF86AudioRaiseVolume"
            repeat = true
            cooldown_ms = 100

            [hud]
            hold = "Super"
            """)
        let r = runTool(["check", "--config", path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("OK: 4 commands"), "\(r.stdout)")
        #expect(r.stderr.contains("Warning: \(path):10: tap_ms = 800 (command 'launcher'): not shorter than the HUD's hold (hud.delay_ms = 700 on Super)"), "\(r.stderr)")
        // Two holds on one chord, two taps of one modifier: conflicts naming both.
        let twice = dir.write("t.toml", """
            [[command]]
            id = "a"
            keys = "Ctrl+Alt+R"
            hold_ms = 600

            [[command]]
            id = "b"
            keys = "Ctrl+Alt+R"
            hold_ms = 900

            [[command]]
            id = "c"
            keys = "Super"

            [[command]]
            id = "d"
            keys = "Meta"
            """)
        let t = runTool(["check", "--config", twice])
        #expect(t.status == 78)
        #expect(t.stderr.contains("\(twice):6: 'Ctrl+Alt+R' (b) is already bound to command 'a' at \(twice):1"), "\(t.stderr)")
        #expect(t.stderr.contains("\(twice):15: 'Meta' (d) is already bound to command 'c' at \(twice):11"), "\(t.stderr)")
    }
}
