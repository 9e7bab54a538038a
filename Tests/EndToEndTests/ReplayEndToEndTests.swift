import Testing

/// Runs the built `kbd-commandd` on fixture recordings and configs and pins
/// its output and exit codes.
@Suite(.serialized)
struct ReplayEndToEndTests {
    /// An error message that quotes a bad line keeps its control characters escaped.
    @Test func anErrorQuotingABadLineEscapesItsControlCharacters() {
        let path = "/tmp/kbd-e2e-escape.evemu"
        let f = fopen(path, "w")
        fputs("N: keyboard\n\u{1B}[2J\u{1B}]0;owned\u{7}garbage\n", f)
        fclose(f)
        defer { unlink(path) }
        let r = runTool(["replay", path])
        #expect(r.status == 65)
        #expect(r.stderr.contains("Error: \(path):2: expected a line starting with N:"))
        #expect(r.stderr.contains("found '\\u{1B}[2J\\u{1B}]0;owned\\u{7}garbage'"))
        #expect(!r.stderr.unicodeScalars.contains("\u{1B}"))
    }

    @Test func quickStartReplayPrintsTheCommandsThatFire() {
        let r = runTool(["replay", Paths.examples + "/recordings/ctrl-alt-f1.evemu", Paths.examples + "/recordings/super-up.evemu",
                         "--config", Paths.examples + "/commands.toml", "--format", "json"])
        #expect(r.status == 0)
        #expect(r.stderr == "")
        #expect(r.lines == [
            #"{"event":"attach","time":1473280906.938344,"device":"ctrl-alt-f1.evemu","keyboard":true,"integration":"external","integration_reason":"bus USB"}"#,
            #"{"event":"presence","time":1473280906.938344,"hardware_keyboard":true,"reason":"external keyboard"}"#,
            #"{"event":"chord","time":1473280907.354371,"device":"ctrl-alt-f1.evemu","chord":"Ctrl+Alt+F1"}"#,
            #"{"event":"command","time":1473280907.354371,"id":"console-1","title":"Switch to console 1","scope":"global","chord":"Ctrl+Alt+F1"}"#,
            #"{"event":"detach","time":1473280907.602389,"device":"ctrl-alt-f1.evemu","keyboard":true}"#,
            #"{"event":"presence","time":1473280908.102389,"hardware_keyboard":false,"reason":"no keyboard"}"#,
            #"{"event":"attach","time":1498157316.454215,"device":"super-up.evemu","keyboard":true,"integration":"external","integration_reason":"bus USB"}"#,
            #"{"event":"presence","time":1498157316.454215,"hardware_keyboard":true,"reason":"external keyboard"}"#,
            #"{"event":"chord","time":1498157316.822214,"device":"super-up.evemu","chord":"Super+Up"}"#,
            #"{"event":"command","time":1498157316.822214,"id":"maximize","title":"Maximize window","scope":"global","chord":"Super+Up"}"#,
            #"{"event":"detach","time":1498157317.230336,"device":"super-up.evemu","keyboard":true}"#,
            #"{"event":"presence","time":1498157317.730336,"hardware_keyboard":false,"reason":"no keyboard"}"#,
        ])
    }

    @Test func keyEventsCarryKeysymTextModsAndLayout() {
        let r = runTool(["replay", Paths.recording("evemu-devices--lenovo-tp-compact-usb-kbd.keyboard.evemu"), "--print", "keys", "--format", "json"])
        #expect(r.status == 0)
        #expect(r.lines.filter { $0.contains(#""event":"key""#) } == [
            #"{"event":"key","time":1.399994,"device":"Lenovo ThinkPad Compact USB Keyboard with TrackPoint","code":"KEY_LEFTCTRL","state":"press","keysym":"Control_L","utf8":"","mods":[],"layout":0}"#,
            #"{"event":"key","time":1.560031,"device":"Lenovo ThinkPad Compact USB Keyboard with TrackPoint","code":"KEY_C","state":"press","keysym":"c","utf8":"\u0003","mods":["Ctrl"],"layout":0}"#,
            #"{"event":"key","time":1.560031,"device":"Lenovo ThinkPad Compact USB Keyboard with TrackPoint","code":"KEY_C","state":"release","keysym":"c","utf8":"\u0003","mods":["Ctrl"],"layout":0,"synthetic":true}"#,
            #"{"event":"key","time":1.560031,"device":"Lenovo ThinkPad Compact USB Keyboard with TrackPoint","code":"KEY_LEFTCTRL","state":"release","keysym":"Control_L","utf8":"","mods":["Ctrl"],"layout":0,"synthetic":true}"#,
        ])
    }

    @Test func layoutFlagChangesWhatTheSameKeysType() {
        let r = runTool(["replay", Paths.recording("cros-autotest--keyboard_b+a+d+enter.events-only.evemu"), "--print", "keys", "--layout", "fr"])
        #expect(r.status == 0)
        let presses = r.lines.filter { $0.contains(" press ") }.map { $0.split(separator: " ").first { $0.hasPrefix("keysym=") } ?? "" }
        #expect(presses == ["keysym=b", "keysym=q", "keysym=d", "keysym=Return"])
    }

    @Test func severalFilesMergeByTimestamp() {
        let r = runTool(["replay", Paths.recording("evemu-devices--lenovo-tp-compact-usb-kbd.keyboard.evemu"),
                         Paths.recording("evemu-devices--logitech-k400-plus.evemu"), "--format", "json"])
        #expect(r.status == 0)
        let times = r.lines.compactMap { line -> Double? in
            guard let t = line.split(separator: ",").first(where: { $0.hasPrefix(#""time":"#) }) else { return nil }
            return Double(t.dropFirst(7))
        }
        #expect(times == times.sorted())
        #expect(r.lines.filter { $0.contains(#""event":"attach""#) }.count == 2)
    }

    @Test func defaultOutputNeverCarriesTypedText() {
        // The recording types "this is a test. We are going to measure input latency…".
        let r = runTool(["replay", Paths.recording("cros-autotest--inbox-input-latency-typing.with-prop.evemu"), "--config", Paths.examples + "/commands.toml"])
        #expect(r.status == 0)
        for word in ["this", "test", "measure", "latency", "keysym", "utf8"] {
            #expect(!r.stdout.contains(word))
            #expect(!r.stderr.contains(word))
        }
        #expect(r.lines.dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "" } == ["attach", "presence", "detach", "presence"])
    }

    /// Issue 27: one clock in text output, said in its first line; JSON keeps each recording's
    /// own timestamps. Issue 33 (item 8): two recordings made years apart (2017 and 2019 Unix
    /// times) do not overlap: the second starts a timeline of its own (it was printed 50,795,553
    /// s after the first); --merge keeps the single timeline.
    @Test func eachRecordingOnItsOwnClockStartsATimelineAndMergeKeepsOne() {
        let files = ["super-up.evemu", "ctrl-shift-c.evemu"].map { Paths.examples + "/recordings/" + $0 }
        let r = runTool(["replay"] + files + ["--config", Paths.examples + "/commands.toml"])
        #expect(r.status == 0)
        #expect(r.lines.first == ##"# time: seconds since the first event of its timeline (a recording whose clock does not overlap the ones before it starts a new one: "# timeline" lines; --merge: one); then the event and its details (--format json: the recordings' own timestamps)"##)
        #expect(r.lines.contains("# timeline 2: \(files[1]) starts at 1548952869.462032 on its own clock, after every recording before it ended; times count from 0 again"), "\(r.lines)")
        let times = r.lines.dropFirst().filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(times.first == "0.000000")
        #expect(times.contains("0.367999"), "\(times)")  // Super+Up, 0.367999 s after its attach
        #expect(times.contains("4.583071"), "\(times)")  // Ctrl+Shift+C, 4.583071 s after its own attach
        #expect(times.allSatisfy { (Double($0) ?? .infinity) < 60 }, "\(times)")

        let merged = runTool(["replay"] + files + ["--config", Paths.examples + "/commands.toml", "--merge"])
        #expect(merged.status == 0)
        #expect(merged.lines.first == "# time: seconds since the first event, one timeline for every recording (--merge); then the event and its details (--format json: the recordings' own timestamps)")
        #expect(!merged.stdout.contains("# timeline"))
        let mergedTimes = merged.lines.dropFirst().compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(mergedTimes.first == "0.000000")
        // The second recording is 50,795,553 s (1.6 years) later on the same clock.
        #expect(mergedTimes.contains { $0.hasPrefix("50795552.") || $0.hasPrefix("50795553.") }, "\(mergedTimes)")
        #expect(!mergedTimes.contains { $0.hasPrefix("1498157316") || $0.hasPrefix("1548952869") })

        // JSON is the contract it was: the recordings' own timestamps, --merge or not.
        let json = runTool(["replay"] + files + ["--config", Paths.examples + "/commands.toml", "--format", "json"])
        #expect(json.lines.first == #"{"event":"attach","time":1498157316.454215,"device":"super-up.evemu","keyboard":true,"integration":"external","integration_reason":"bus USB"}"#)
        let jsonMerged = runTool(["replay"] + files + ["--config", Paths.examples + "/commands.toml", "--format", "json", "--merge"])
        #expect(json.stdout == jsonMerged.stdout)
        // The Logitech recording starts at 0.000001: its first line is 0.000000 in text too.
        let k400 = runTool(["replay", Paths.examples + "/recordings/logitech-k400-ctrl-c.evemu", "--config", Paths.examples + "/commands.toml"])
        #expect(k400.lines.dropFirst().first?.hasPrefix("0.000000 ") == true, "\(k400.lines)")
    }

    /// Issue 33 (item 8): what scripts/quickstart shows a newcomer, every example recording: the
    /// three recordings on one clock from 0 s share the first timeline, each of the three with
    /// Unix times starts its own; no time jumps from "12.07" to "1473280906.93".
    @Test func theQuickstartReplayOfEveryExampleRecordingHasATimelinePerClock() {
        let names = ["ctrl-alt-f1", "ctrl-shift-c", "desktop-keys", "logitech-k400-ctrl-c", "service-keys", "super-up"]
        let files = names.map { Paths.examples + "/recordings/\($0).evemu" }  // the glob's order
        let r = runTool(["replay"] + files + ["--config", Paths.examples + "/commands.toml"])
        #expect(r.status == 0, "\(r.stderr)")
        let timelines = r.lines.filter { $0.hasPrefix("# timeline ") }
        #expect(timelines.map { $0.split(separator: ":").first.map(String.init) ?? "" } == ["# timeline 2", "# timeline 3", "# timeline 4"])
        #expect(timelines.map { $0.split(separator: " ")[3] } == [Substring(files[0]), Substring(files[5]), Substring(files[1])])
        let times = r.lines.filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: " ").first.flatMap { Double($0) } }
        #expect(times.count == r.lines.count - 4)
        #expect(times.allSatisfy { $0 < 13 }, "\(r.stdout)")
        // Each timeline counts from 0 and its events keep their order.
        var expectZero = true
        var last = 0.0
        for line in r.lines.dropFirst() {
            if line.hasPrefix("# timeline ") { expectZero = true; continue }
            let t = Double(line.split(separator: " ")[0]) ?? -1
            if expectZero { #expect(t == 0, "\(line)"); expectZero = false } else { #expect(t >= last, "\(line)") }
            last = t
        }
        // The same commands fire as with one merged timeline: only the time column differs.
        let merged = runTool(["replay"] + files + ["--config", Paths.examples + "/commands.toml", "--merge"])
        func body(_ lines: [String]) -> [String] {
            lines.filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " ") }
        }
        #expect(body(r.lines) == body(merged.lines))
        #expect(merged.lines.contains { $0.hasPrefix("1473280906.") })
    }

    @Test func nonKeyboardsAttachAsNonKeyboards() {
        let r = runTool(["replay", Paths.recording("evemu-devices--wacom-cintiq-12wx-pad.buttons-left.evemu"),
                         Paths.recording("evemu-devices--plantronics-audio648-headset.desc.evemu"), "--format", "json"])
        #expect(r.status == 0)
        #expect(r.lines.filter { $0.contains("attach") }.allSatisfy { $0.contains(#""keyboard":false"#) })
        #expect(!r.stdout.contains("presence"))
    }

    @Test func textInputFlagBlocksTypingCommands() throws {
        let dir = "/tmp/kbd-e2e-config.toml"
        let f = fopen(dir, "w")
        fputs("[[command]]\nid = \"b\"\nkeys = \"b\"\n[[command]]\nid = \"enter\"\nkeys = \"Return\"\n", f)
        fclose(f)
        let rec = Paths.recording("cros-autotest--keyboard_b+a+d+enter.events-only.evemu")
        let free = runTool(["replay", rec, "--config", dir, "--print", "commands"])
        #expect(free.lines.filter { $0.contains("command") }.count == 2)
        let typing = runTool(["replay", rec, "--config", dir, "--text-input-active"])
        #expect(!typing.stdout.contains("command"))
        unlink(dir)
    }

    /// Issue 23: the CLI refused `--model evdev` (exit 78, "unknown model 'evdev'") although
    /// libxkbcommon compiles it. Now it replays, with one warning line on stderr.
    @Test func aModelTheListOmitsReplaysWithAWarning() {
        let rec = Paths.recording("cros-autotest--keyboard_ctrl+shift+q.events-only.evemu")
        let r = runTool(["replay", rec, "--rules", "evdev", "--model", "evdev", "--layout", "us"])
        #expect(r.status == 0)
        #expect(r.stderr == "Warning: --model: model 'evdev' is not in /usr/share/X11/xkb/rules/evdev.lst, but libxkbcommon compiles it: using it\n")
        #expect(r.stdout.contains("Ctrl+Shift+Q"))
    }

    @Test(arguments: [
        // (arguments, exit status, stderr)
        (["replay"], 64 as Int32, "Error: Missing expected argument '<file> ...'"),
        (["replay", "/nonexistent.evemu"], 66, "Error: /nonexistent.evemu: cannot open: No such file or directory"),
        (["replay", "FIXTURES/recordings/cros-autotest--keyboard_ctrl+shift+q.events-only.evemu", "--layout", "nosuch"], 78,
         "Error: --layout: unknown layout 'nosuch' (see /usr/share/X11/xkb/rules/evdev.lst)"),
        (["replay", "FIXTURES/recordings/cros-autotest--keyboard_ctrl+shift+q.events-only.evemu", "--format", "yaml"], 64,
         "Error: The value 'yaml' is invalid for '--format <format>'. Please provide one of 'text' and 'json'."),
        (["check", "--config", "FIXTURES/configs/conflicts.toml"], 78, """
            Error: FIXTURES/configs/conflicts.toml:6: keys = 'Ctrl+Sprocket': unknown key name 'Sprocket'; expected a keysym name such as a, 1, exclam, Return, F4 (see xkbcommon-keysyms.h)
            Error: FIXTURES/configs/conflicts.toml:7: duplicate command id 'save'; first defined at FIXTURES/configs/conflicts.toml:1
            """),
        (["check", "--config", "FIXTURES/configs/bad-recording.evemu"], 78,
         "Error: FIXTURES/configs/bad-recording.evemu:1: expected '=' after the key 'E'"),
        (["replay", "FIXTURES/configs/bad-recording.evemu"], 65,
         "Error: FIXTURES/configs/bad-recording.evemu:3: time 1.000000 is earlier than the previous event's 2.000000; expected events in time order"),
    ] as [([String], Int32, String)])
    func errorsNameTheFileAndLineAndExitWithStableCodes(_ args: [String], _ status: Int32, _ stderr: String) {
        let fix: (String) -> String = { $0.replacingFixtures() }
        let r = runTool(args.map(fix))
        #expect(r.status == status)
        // xkbcommon's diagnostics may come first and usage errors add a hint; ours are whole lines.
        let got = r.stderr.split(separator: "\n").map(String.init)
        for line in fix(stderr).split(separator: "\n").map(String.init) {
            #expect(got.contains(line), "missing stderr line: \(line)\ngot: \(got)")
        }
    }

    @Test func checkAcceptsTheExample() {
        let r = runTool(["check", "--config", Paths.examples + "/commands.toml"])
        #expect(r.status == 0)
        #expect(r.stdout.hasSuffix("OK: 7 commands (1 sequences) in 2 scopes; keymap us English (US) (from the config's [keymap])\n"))
    }

    @Test func commandsListsByScopeMostSpecificFirst() {
        let r = runTool(["commands", "--config", Paths.examples + "/commands.toml", "--scope", "editor"])
        #expect(r.status == 0)
        #expect(r.lines.first == "editor")
        #expect(r.lines.contains("global"))
        #expect(r.lines.contains { $0.contains("Save all") && $0.hasSuffix("Ctrl+X Ctrl+S") })
    }

    @Test func helpTeaches() {
        let r = runTool(["replay", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("--print"))
        #expect(r.stdout.contains("Examples:"))
    }
}

extension String {
    func replacingFixtures() -> String {
        var out = ""
        var rest = Substring(self)
        while let r = rest.firstRange(of: "FIXTURES") {
            out += rest[..<r.lowerBound] + Paths.fixtures
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}

#if canImport(Glibc)
import Glibc
#endif
