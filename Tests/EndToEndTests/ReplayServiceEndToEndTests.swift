import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `kbd-commandd run --replay FILE…`: the built service with a recording as its device, in
/// real time. The keyboard attaches, its chord runs the bound program, it detaches after its
/// last event and presence goes false; the socket serves throughout and the service runs on
/// until SIGTERM.
@Suite(.serialized)
struct ReplayServiceEndToEndTests {
    static func temporaryDirectory() -> String {
        var template = Array("/tmp/kbd-e2e-replay-XXXXXX".utf8CString)
        _ = mkdtemp(&template)
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func write(_ text: String, to path: String) {
        let f = fopen(path, "w")
        fputs(text, f)
        fclose(f)
    }

    @Test func aRecordingIsTheServicesKeyboardUntilSIGTERM() throws {
        let dir = Self.temporaryDirectory()
        let config = dir + "/config.toml", socket = dir + "/socket", proof = dir + "/fired"
        defer {
            unlink(proof)
            unlink(config)
            rmdir(dir)
        }
        Self.write("""
            [[command]]
            id = "copy-terminal"
            keys = "Ctrl+Shift+C"
            run = ["/bin/sh", "-c", "echo fired > \(proof)"]
            """, to: config)
        // Ctrl and Shift taps, Ctrl autorepeat, then Ctrl+Shift+C 4.58 s after the first event.
        let recording = Paths.examples + "/recordings/ctrl-shift-c.evemu"
        let daemon = RunningTool(["run", "--config", config, "--socket", socket, "--replay", recording])
        #expect(daemon.waitFor("ready: 1 commands, 0 keyboards"))
        let watch = RunningTool(["watch", "--socket", socket, "--retry", "5", "--format", "json", "--events", "attach,detach,presence,command"])

        #expect(daemon.waitFor("keyboard attached: \(recording) \"ctrl-shift-c.evemu\" (bus 0003 0000:0000 v0000, external)"))
        #expect(daemon.waitFor("command copy-terminal \"copy-terminal\" (Ctrl+Shift+C) on \"ctrl-shift-c.evemu\"", seconds: 15))
        #expect(daemon.waitFor("keyboard detached: \(recording) \"ctrl-shift-c.evemu\" (device gone)"))
        #expect(daemon.waitFor("replay: every recording has played; running until SIGTERM"))
        #expect(daemon.waitFor("hardware keyboard absent"))
        // The program ran (as the service's child, reaped).
        var fired = ""
        for _ in 0..<250 where fired.isEmpty {
            fired = slurpFile(proof)
            if fired.isEmpty { usleep(20_000) }
        }
        #expect(fired == "fired\n")

        // The log in order: replay, attach, presence, command, detach, the end, absence.
        let log = daemon.stderr
        let order = ["replaying 1 recordings as the devices", "ready: 1 commands, 0 keyboards", "keyboard attached:",
                     "hardware keyboard present", "command copy-terminal", "keyboard detached:",
                     "replay: every recording has played", "hardware keyboard absent"]
        // A missing line fails the test, never crashes the test process (which would take
        // every other test's result with it).
        let positions = order.compactMap { log.firstRange(of: $0)?.lowerBound }
        #expect(positions.count == order.count, "\(log)")
        #expect(zip(positions, positions.dropFirst()).allSatisfy { $0 < $1 }, "\(log)")

        // A live client saw the command, the detach and presence false.
        var seen = ""
        for _ in 0..<250 {
            seen = watch.stdout
            if seen.split(separator: "\n").contains(where: { $0.hasPrefix(#"{"event":"presence","time""#) && $0.contains(#""hardware_keyboard":false"#) }) { break }
            usleep(20_000)
        }
        let lines = seen.split(separator: "\n").map(String.init)
        let command = lines.firstIndex { $0.hasPrefix(#"{"event":"command""#) && $0.contains(#""id":"copy-terminal""#) }
        let detach = lines.firstIndex { $0.hasPrefix(#"{"event":"detach""#) && $0.contains(#""device":"ctrl-shift-c.evemu""#) }
        // First the state at subscription (no keyboard yet, or the recording's on a slow machine), then the changes.
        #expect(lines.first.map { $0.hasPrefix(#"{"event":"presence","current":true,"hardware_keyboard":"#) } == true, "\(seen)")
        let absent = lines.firstIndex { $0.hasPrefix(#"{"event":"presence","time""#) && $0.contains(#""hardware_keyboard":false"#) }
        #expect(command != nil && detach != nil && absent != nil, "\(seen)")
        if let command, let detach, let absent { #expect(command < detach && detach < absent) }

        // After the last recording the service still serves, with no device left.
        let devices = runTool(["watch", "--socket", socket, "--request", #"{"request":"list_devices"}"#])
        #expect(devices.stdout == #"{"reply":"list_devices","ok":true,"devices":[]}"# + "\n")
        usleep(200_000)
        #expect(waitpid(daemon.pid, nil, WNOHANG) == 0)

        // (The test runner's threads may block SIGTERM, and a spawned watch inherits the mask.)
        watch.signal(SIGKILL)
        _ = watch.wait()
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        #expect(daemon.stderr.contains("INFO stopped"))
    }

    @Test func aBadRecordingStopsTheStartWithFileAndLine() {
        let dir = Self.temporaryDirectory()
        let config = dir + "/config.toml"
        defer {
            unlink(config)
            rmdir(dir)
        }
        Self.write("[[command]]\nid = \"a\"\nkeys = \"Ctrl+A\"\n", to: config)
        let bad = Paths.fixtures + "/configs/bad-recording.evemu"
        let good = Paths.examples + "/recordings/ctrl-alt-f1.evemu"
        let r = runTool(["run", "--config", config, "--no-socket", "--replay", good, bad])
        #expect(r.status == 65)
        #expect(r.stderr == "Error: \(bad):3: time 1.000000 is earlier than the previous event's 2.000000; expected events in time order\n")
        let missing = runTool(["run", "--config", config, "--no-socket", "--replay", dir + "/none.evemu"])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("Error: \(dir)/none.evemu: cannot open: "))
        let both = runTool(["run", "--config", config, "--replay", good, "--input-dir", "/dev/input"])
        #expect(both.status == 64)
    }

    /// Issue 29: each command costs one INFO line and its process is reaped without a wake-up of
    /// its own (after the loop's next turn, or through a pidfd once it outlived the short
    /// window): twenty presses, twenty lines, no zombie left, nothing of the runner at INFO.
    @Test func everyCommandIsOneLogLineAndItsProcessIsReaped() throws {
        let dir = Self.temporaryDirectory()
        let config = dir + "/config.toml", recording = dir + "/f9.evemu", proof = dir + "/ran"
        defer {
            unlink(proof)
            unlink(recording)
            unlink(config)
            rmdir(dir)
        }
        Self.write("""
            [[command]]
            id = "f9"
            keys = "F9"
            run = ["/bin/sh", "-c", "echo x >> \(proof)"]

            [[command]]
            id = "slow"
            keys = "F10"
            run = ["sleep", "0.3"]
            """, to: config)
        // The K400's header (it has every key), then F9 pressed 20 times and F10 once.
        let header = slurpFile(Paths.examples + "/recordings/logitech-k400-ctrl-c.evemu").split(separator: "\n").filter { !$0.hasPrefix("E:") }
        var events: [String] = []
        var us = 1_000_000
        func stamp() -> String {
            let fraction = String(us % 1_000_000)
            return "\(us / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
        }
        func key(_ code: String) {
            events += ["E: \(stamp()) 0001 \(code) 0001", "E: \(stamp()) 0000 0000 0000"]
            us += 10_000
            events += ["E: \(stamp()) 0001 \(code) 0000", "E: \(stamp()) 0000 0000 0000"]
            us += 40_000
        }
        for _ in 0..<20 { key("0043") }
        key("0044")
        Self.write((header + events.map { Substring($0) }).joined(separator: "\n") + "\n", to: recording)
        let daemon = RunningTool(["run", "--config", config, "--no-socket", "--replay", recording])
        defer {
            daemon.signal(SIGTERM)
            _ = daemon.wait()
        }
        #expect(daemon.waitFor("replay: every recording has played; running until SIGTERM", seconds: 15))
        // The slow one exits 0.3 s after its press: reaped through the pidfd it got after 50 ms.
        var children = "?"
        for _ in 0..<100 {
            children = slurpFile("/proc/\(daemon.pid)/task/\(daemon.pid)/children")
            if children.isEmpty { break }
            usleep(20_000)
        }
        #expect(children.isEmpty, "children left: \(children)")
        #expect(slurpFile(proof).split(separator: "\n").count == 20)
        let info = daemon.stderr.split(separator: "\n").filter { $0.hasPrefix("INFO command ") }
        #expect(info.filter { $0.hasPrefix("INFO command f9 ") }.count == 20, "\(info)")
        #expect(info.filter { $0.hasPrefix("INFO command slow ") }.count == 1, "\(info)")
        #expect(info.count == 21, "\(info)")
    }
}
