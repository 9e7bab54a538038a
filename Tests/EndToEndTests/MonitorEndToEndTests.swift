import HardwareInput
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 15: `kbd-commandd monitor` on recordings (`--replay`), through the same pipeline as
/// a live keyboard: each press with its device, code, keysym, chord text and command.
@Suite struct MonitorEndToEndTests {
    @Test func eachPressWithItsChordTextAndCommand() {
        let r = runTool(["monitor", "--replay", Paths.examples + "/recordings/ctrl-shift-c.evemu", "--config", Paths.examples + "/commands.toml"])
        #expect(r.status == 0, "\(r.stderr)")
        let d = "\"ctrl-shift-c.evemu\""
        #expect(r.stdout == """
            attach \(d)
            \(d)  KEY_LEFTCTRL (29)  keysym Control_L  (modifier)
            \(d)  KEY_LEFTSHIFT (42)  keysym Shift_L  (modifier)
            \(d)  KEY_LEFTCTRL (29)  keysym Control_L  (modifier)
            \(d)  KEY_LEFTSHIFT (42)  keysym Shift_L  (modifier)
            \(d)  KEY_LEFTCTRL (29)  keysym Control_L  (modifier)
            \(d)  KEY_LEFTSHIFT (42)  keysym Shift_L  (modifier)
            \(d)  KEY_C (46)  keysym c  chord C
            \(d)  KEY_LEFTCTRL (29)  keysym Control_L  (modifier)
            \(d)  KEY_LEFTSHIFT (42)  keysym Shift_L  (modifier)
            \(d)  KEY_C (46)  keysym C  chord Ctrl+Shift+C  → command copy-terminal "Copy (terminal)" (global)
            detach \(d)

            """)
        // It says that it shows key presses, and that commands are not run.
        #expect(r.stderr.hasPrefix("kbd-commandd monitor shows every key you press (what you type appears here); it logs nothing and writes no file."))
    }

    /// Every chord text it prints parses back as the same chord (paste it into keys = "…").
    @Test func printedChordsAreValidKeys() {
        let recordings = ["ctrl-alt-f1.evemu", "super-up.evemu", "logitech-k400-ctrl-c.evemu"].map { Paths.examples + "/recordings/" + $0 }
        for recording in recordings {
            let r = runTool(["monitor", "--replay", recording, "--config", Paths.examples + "/config.toml"])
            #expect(r.status == 0)
            let chords = r.lines.compactMap { line -> String? in
                guard let range = line.firstRange(of: "  chord ") else { return nil }
                return String(line[range.upperBound...].prefix { $0 != " " })
            }
            #expect(!chords.isEmpty)
            for chord in Set(chords) {
                let dir = "/tmp/kbd-e2e-monitor-\(getpid())"
                mkdir(dir, 0o755)
                let path = dir + "/c.toml"
                let f = fopen(path, "w")
                fputs("[[command]]\nid = \"x\"\nkeys = \"\(chord)\"\n", f)
                fclose(f)
                let again = runTool(["monitor", "--replay", recording, "--config", path])
                #expect(again.stdout.contains("chord \(chord)  → command x"), "\(chord)")
                unlink(path)
                rmdir(dir)
            }
        }
    }

    @Test func aDeviceThatCannotBeOpenedIsExit66() {
        let r = runTool(["monitor", "/nonexistent/event0"])
        #expect(r.status == 66)
        #expect(r.stderr.contains("Error: /nonexistent/event0: cannot open"))
    }

    /// Issue 33 (7c): without DEVICE, monitor follows /dev/input (the service's live source,
    /// inotify) instead of scanning it once: with no keyboard yet it waits for one to be
    /// plugged in (it exited 66, "no keyboard to watch", and never saw a keyboard plugged in
    /// later). Only where this machine has no event node (a container, CI).
    @Test(.enabled(if: !Directory.names("/dev/input").contains { $0.hasPrefix("event") }, "this machine has input event nodes"))
    func withNoKeyboardYetItWaitsForOne() {
        let monitor = RunningTool(["monitor"])
        #expect(monitor.waitFor("no keyboard in /dev/input yet: waiting for one to be plugged in", seconds: 5), "\(monitor.stderr)")
        usleep(300_000)
        #expect(kill(monitor.pid, 0) == 0, "monitor exited: \(monitor.stderr)")
        monitor.signal(SIGKILL)
        _ = monitor.wait()
    }
}
