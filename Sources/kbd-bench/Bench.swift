import KbdService
import KbdProcess
import KbdTestSupport
import KbdCommands
import KbdSystem
import KbdKeymap
import KbdConfig
import KbdRecording
import KbdCore
import KbdPipeline
#if canImport(Glibc)
import Glibc
#endif

/// kbd-bench: reproducible performance figures for kbd-commandd. Prints numbers;
/// never fails because a machine is slow (exit 0 unless something could not run).
///
///   kbd-bench generate [--events N] [--seed S] -o FILE
///   kbd-bench run [--events N] [--rounds R] [--long-events N]
///   kbd-bench toml [--rounds R]
///   kbd-bench json [--rounds R]
///   kbd-bench attack [--chords N] [--only U5,U6]
@main
struct Bench {
    static func main() {
        var args = Array(CommandLine.arguments.dropFirst())
        guard let verb = args.first else { usage() }
        args.removeFirst()
        func option(_ name: String, _ fallback: Int) -> Int {
            guard let i = args.firstIndex(of: name), i + 1 < args.count, let v = Int(args[i + 1]) else { return fallback }
            return v
        }
        switch verb {
        case "generate":
            guard let i = args.firstIndex(of: "-o"), i + 1 < args.count else { usage() }
            let n = generate(path: args[i + 1], events: option("--events", 1_000_000), seed: UInt64(option("--seed", 1)))
            say("wrote \(n) events to \(args[i + 1])")
        case "attack":
            // --only U5,U6: the scenarios whose names start with these words.
            let only = args.firstIndex(of: "--only").flatMap { $0 + 1 < args.count ? args[$0 + 1].split(separator: ",").map(String.init) : nil }
            Attack.run(chords: option("--chords", 1000), only: only)
        case "seats":
            Seats.run(changes: option("--changes", 1))
        case "attacker":
            guard args.count >= 2 else { usage() }
            Attack.attacker(args[0], args[1], uid: args.count >= 3 ? UInt32(args[2]) : nil)
        case "agent-idle":
            mkdir("/tmp/kbd-bench", 0o755)
            mkdir("/tmp/kbd-bench/input-empty", 0o755)
            let cfg = "/tmp/kbd-bench/bench.toml"
            let out = try! FileOutput.create(path: cfg, mode: 0o644)
            out.write(config)
            try! out.flush()
            agentIdle(configPath: cfg)
        case "floor":
            let dir = "/tmp/kbd-bench"
            mkdir(dir, 0o755)
            say("| measure | value | target | method |")
            say("|---|---|---|---|")
            floor(events: option("--events", 2_000_000), rounds: option("--rounds", 5), kbd: directory + "/kbd-commandd", dir: dir)
        case "toml":
            toml(rounds: option("--rounds", 5), sizes: [1_000, 5_001, 10_000, 20_000, 100_000])
        case "json":
            json(rounds: option("--rounds", 5))
        case "run":
            run(events: option("--events", 1_000_000), rounds: option("--rounds", 5), longEvents: option("--long-events", 10_000_000))
        default:
            usage()
        }
    }

    static func usage() -> Never {
        say("""
            usage: kbd-bench generate [--events N] [--seed S] -o FILE
                   kbd-bench run [--events N] [--rounds R] [--long-events N]
                   kbd-bench floor [--events N] [--rounds R]   (replay against replay_floor.c only)
                   kbd-bench attack [--chords N]               (chord latency under each attack of issue 17)
                   kbd-bench toml [--rounds R]                 (config load, 1k to 100k commands)
                   kbd-bench json [--rounds R]                 (the 64 KiB control request)
            """)
        exit(64)
    }

    @discardableResult
    static func generate(path: String, events: Int, seed: UInt64) -> Int {
        let out = try! FileOutput.create(path: path, mode: 0o644)
        var g = RecordingGenerator(seed: seed, output: out)
        g.generate(events: events)
        try! out.flush()
        return g.written
    }

    // MARK: - Helpers

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static let directory: String = ProcessEnvironment.executableDirectory() ?? "."

    /// Runs a program with stdout to /dev/null; returns (wall seconds, max RSS KiB, exit status).
    static func spawn(_ argv: [String], stderrPath: String = "/dev/null", measureMemory: Bool = false) -> (Double, Int, Int32) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let cargs = argv.map { strdup($0) } + [nil]
        var pid = pid_t()
        let t0 = now()
        posix_spawn(&pid, argv[0], &actions, nil, cargs, environ)
        // ru_maxrss of a posix_spawn child includes the parent's memory (vfork shares it
        // until exec), so the peak is read from /proc while the child runs.
        var status: Int32 = 0
        var peak = 0
        if measureMemory {
            while waitpid(pid, &status, WNOHANG) == 0 {
                peak = max(peak, procStatus(pid, "VmHWM"))
                usleep(2000)
            }
        } else {
            waitpid(pid, &status, 0)
        }
        let t = now() - t0
        posix_spawn_file_actions_destroy(&actions)
        cargs.forEach { free($0) }
        return (t, peak, (status >> 8) & 0xff)
    }

    /// Starts a program in the background (stdout to /dev/null, stderr to `stderrPath`).
    static func launch(_ argv: [String], stderrPath: String? = nil) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if let stderrPath { posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        let cargs = argv.map { strdup($0) } + [nil]
        var pid = pid_t()
        posix_spawn(&pid, argv[0], &actions, nil, cargs, environ)
        posix_spawn_file_actions_destroy(&actions)
        cargs.forEach { free($0) }
        return pid
    }

    /// A `key: N kB` field of /proc/PID/status (or of another file under /proc/PID with `file`).
    static func procStatus(_ pid: pid_t, _ key: String, file: String = "status") -> Int {
        guard let f = fopen("/proc/\(pid)/\(file)", "r") else { return -1 }
        defer { fclose(f) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, 256, f) != nil {
            let s = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if s.hasPrefix(key + ":") {
                return Int(s.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first ?? "") ?? -1
            }
        }
        return -1
    }

    static func fileContains(_ path: String, _ text: String) -> Bool {
        (try? readWholeFile(path: path, limit: 1 << 20)).map { String(decoding: $0, as: UTF8.self).contains(text) } ?? false
    }

    static func row(_ measure: String, _ value: String, _ target: String, _ method: String) {
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        say("| \(pad(measure, 44)) | \(pad(value, 26)) | \(pad(target, 16)) | \(method) |")
    }

    static func fmt(_ x: Double, _ digits: Int = 1) -> String {
        var p = 1.0
        for _ in 0..<digits { p *= 10 }
        let v = (x * p).rounded() / p
        return String(v)
    }

    static let config = """
        [keymap]
        layout = "us,ru"
        options = "grp:alt_shift_toggle"

        [[command]]
        id = "save"
        keys = "Ctrl+S"
        [[command]]
        id = "reopen-tab"
        keys = "Ctrl+Shift+T"
        [[command]]
        id = "switch"
        keys = "Alt+Tab"
        [[command]]
        id = "terminal"
        keys = "Super+Return"
        [[command]]
        id = "save-all"
        keys = "Ctrl+X Ctrl+K"
        [[command]]
        id = "copy"
        keys = "Ctrl+C"
        """

    /// Three commands with key phases, appended to a table for the floor's phases row.
    static let phasesCommands = """

        [[command]]
        id = "push-to-talk"
        keys = "Ctrl+Shift+M"
        run_on_release = []
        [[command]]
        id = "long-save"
        keys = "Ctrl+Shift+H"
        hold_ms = 500
        [[command]]
        id = "launcher"
        keys = "Super"
        tap_ms = 300

        """

    // MARK: - The run

    static func run(events: Int, rounds: Int, longEvents: Int) {
        let dir = "/tmp/kbd-bench"
        mkdir(dir, 0o755)
        let file = dir + "/typing-\(events).evemu"
        let configPath = dir + "/bench.toml"
        let cfg = try! FileOutput.create(path: configPath, mode: 0o644)
        cfg.write(config)
        try! cfg.flush()
        let n = generate(path: file, events: events, seed: 1)
        let kbd = directory + "/kbd-commandd"
        let reference = directory + "/xkb-reference"
        say("kbd-bench: \(n) events (seed 1) in \(file); \(rounds) rounds; medians\n")
        say("| measure | value | target | method |")
        say("|---|---|---|---|")

        // 0. Against the tight C floor (replay_floor.c), as users run replay: 200 commands,
        // commands printed as JSON.
        floor(events: 2 * events, rounds: rounds, kbd: kbd, dir: dir)

        // 1. Throughput against the C floor.
        var swift: [Double] = [], c: [Double] = [], ratios: [Double] = []
        for _ in 0..<rounds {
            let (ts, _, s1) = spawn([kbd, "replay", file, "--config", configPath])
            let (tc, _, s2) = spawn([reference, "--layout", "us,ru", "--options", "grp:alt_shift_toggle", file])
            guard s1 == 0, s2 == 0 else { say("replay or xkb-reference failed (\(s1), \(s2))"); exit(1) }
            swift.append(ts)
            c.append(tc)
            ratios.append(ts / tc)
        }
        let perEvent = median(swift) / Double(n) * 1e9
        row("1. replay throughput (full pipeline)", "\(Int(Double(n) / median(swift))) ev/s, \(fmt(perEvent)) ns/ev", "", "`kbd-commandd replay FILE --config` > /dev/null, whole process")
        row("   C floor (xkb-reference)", "\(Int(Double(n) / median(c))) ev/s, \(fmt(median(c) / Double(n) * 1e9)) ns/ev", "", "parse E: + keysym + utf8 + state update, whole process")
        row("   ratio Swift / C", fmt(median(ratios), 2), "≤ 1.5", "median of per-round ratios, same file, alternating")

        // 2. Per-stage cost, in process.
        stages(file: file, events: n, rounds: rounds)

        // 3. Routing cost against table size.
        routing(file: file, rounds: rounds)

        // 4. The daemon idle.
        idle(kbd: kbd, configPath: configPath)
        agentIdle(configPath: configPath)

        // 5. Memory after a long replay.
        let long = dir + "/typing-\(longEvents).evemu"
        let ln = generate(path: long, events: longEvents, seed: 2)
        let (_, rssShort, _) = spawn([kbd, "replay", file, "--config", configPath], measureMemory: true)
        let (tl, rssLong, _) = spawn([kbd, "replay", long, "--config", configPath], measureMemory: true)
        row("5. peak RSS replaying \(n / 1000)k events", "\(rssShort) KiB", "", "VmHWM of the replay process")
        row("   peak RSS replaying \(ln / 1_000_000)M events", "\(rssLong) KiB (\(fmt(tl, 2)) s)", "no growth", "VmHWM of the replay process")
        unlink(long)
    }

    /// A config of `size` commands in the bench's layout (us,ru): the base chords, then
    /// modifier chords over F-keys, letters and digits spread over scopes.
    static func configText(commands size: Int) -> String {
        var out = config + "\n"
        let mods = ["Ctrl+Alt", "Ctrl+Alt+Shift", "Super+Shift", "Alt+Super", "Ctrl+Super"]
        let keys = (1...12).map { "F\($0)" } + (0..<26).map { String(UnicodeScalar(UInt8(97 + $0))) } + (0...9).map(String.init)
        var n = 6
        var i = 0
        while n < size, i < mods.count * keys.count {
            out += "[[command]]\nid = \"c\(i)\"\nkeys = \"\(mods[i / keys.count])+\(keys[i % keys.count])\"\nscope = \"s\(i % 5)\"\n"
            i += 1
            n += 1
        }
        return out
    }

    /// Replay against replay_floor.c, median of alternating rounds, and callgrind's
    /// instructions per event (start-up subtracted) when valgrind is installed.
    static func floor(events: Int, rounds: Int, kbd: String, dir: String) {
        let file = dir + "/floor-\(events).evemu"
        let small = dir + "/floor-200000.evemu"
        let empty = dir + "/floor-0.evemu"
        let configPath = dir + "/floor-200.toml"
        let cfg = try! FileOutput.create(path: configPath, mode: 0o644)
        cfg.write(configText(commands: 200))
        try! cfg.flush()
        let n = generate(path: file, events: events, seed: 3)
        let floorBinary = directory + "/replay-floor"
        let replay = [kbd, "replay", file, "--config", configPath, "--print", "commands", "--format", "json"]
        let floorArgs = [floorBinary, file, "us,ru", "grp:alt_shift_toggle"]
        var swift: [Double] = [], c: [Double] = [], ratios: [Double] = []
        for _ in 0..<rounds {
            let (ts, _, s1) = spawn(replay)
            let (tc, _, s2) = spawn(floorArgs)
            guard s1 == 0, s2 == 0 else { say("replay or replay-floor failed (\(s1), \(s2))"); exit(1) }
            swift.append(ts)
            c.append(tc)
            ratios.append(ts / tc)
        }
        row("0. replay, 200 commands, --print commands --format json", "\(fmt(median(swift) / Double(n) * 1e9)) ns/ev", "",
            "\(n / 1000)k events, whole process, > /dev/null")
        row("   C floor (replay_floor.c)", "\(fmt(median(c) / Double(n) * 1e9)) ns/ev", "", "same file, us,ru")
        row("   **ratio Swift / replay_floor.c**", fmt(median(ratios), 2), "≤ 1.3", "median of \(rounds) per-round ratios, alternating")
        guard access("/usr/bin/valgrind", X_OK) == 0 else {
            row("   instructions per event", "(valgrind not installed)", "", "")
            return
        }
        let smallCount = generate(path: small, events: 200_000, seed: 3)
        let head = try! FileOutput.create(path: empty, mode: 0o644)
        head.write("# EVEMU 1.3\nN: empty\nI: 0003 046d 4024 0111\n")
        try! head.flush()
        // valgrind 3.19 cannot read this toolchain's release debug info ("Possibly corrupted
        // debuginfo file"): the instructions are counted on a copy without it (the same code).
        var measured = kbd
        if access("/usr/bin/strip", X_OK) == 0 {
            let copy = dir + "/kbd-commandd.stripped"
            if spawn(["/usr/bin/strip", "--strip-debug", "-o", copy, kbd]).2 == 0 { measured = copy }
        }
        func instructions(_ argv: [String]) -> Double {
            let out = dir + "/callgrind.out"
            let log = dir + "/callgrind.log"
            let argv = argv.first == kbd ? [measured] + argv.dropFirst() : argv
            _ = spawn(["/usr/bin/valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + argv, stderrPath: log)
            guard let text = try? String(decoding: readWholeFile(path: log, limit: 1 << 20), as: UTF8.self),
                let line = text.split(separator: "\n").first(where: { $0.contains("Collected :") }),
                let value = Double(line.split(separator: " ").last.map { String($0) } ?? "")
            else { return .nan }
            return value
        }
        let swiftPer = (instructions([kbd, "replay", small, "--config", configPath, "--print", "commands", "--format", "json"])
            - instructions([kbd, "replay", empty, "--config", configPath, "--print", "commands", "--format", "json"])) / Double(smallCount)
        let cPer = (instructions([floorBinary, small, "us,ru", "grp:alt_shift_toggle"])
            - instructions([floorBinary, empty, "us,ru", "grp:alt_shift_toggle"])) / Double(smallCount)
        guard swiftPer.isFinite, cPer.isFinite else {
            row("   instructions per event", "(valgrind could not run them: see \(dir)/callgrind.log)", "", "")
            return
        }
        row("   instructions per event, Swift / C", "\(Int(swiftPer)) / \(Int(cPer)) = \(fmt(swiftPer / cPer, 2))", "",
            "callgrind, 200k-event file minus a header-only file (debug info stripped)")
        // The same table with key phases (issue 36): a push-to-talk with run_on_release, a hold
        // and a tap of Super. A table without them must not pay for them (the row above).
        let phasesPath = dir + "/floor-200-phases.toml"
        let phases = try! FileOutput.create(path: phasesPath, mode: 0o644)
        phases.write(configText(commands: 200) + phasesCommands)
        try! phases.flush()
        let phasesPer = (instructions([kbd, "replay", small, "--config", phasesPath, "--print", "commands", "--format", "json"])
            - instructions([kbd, "replay", empty, "--config", phasesPath, "--print", "commands", "--format", "json"])) / Double(smallCount)
        row("   instructions per event, the table with key phases", "\(Int(phasesPer)) = \(fmt(phasesPer / cPer, 2)) × C", "",
            "the same file; + run_on_release, hold_ms, a tap of Super")
        unlink(phasesPath)
        unlink(small)
        unlink(empty)
        unlink(file)
    }

    static func stages(file: String, events: Int, rounds: Int) {
        let keymap = try! XkbKeymap(context: try! XkbContext(), names: KeymapNames(layout: "us,ru", options: "grp:alt_shift_toggle"))
        let table = try! ConfigLoader.parse(config, path: "bench.toml").table
        var parse: [Double] = [], map: [Double] = [], full: [Double] = []
        for _ in 0..<rounds {
            var t0 = now()
            var source = try! RecordingSource(paths: [file])
            var count = 0
            while (try! source.next()) != nil { count += 1 }
            parse.append(now() - t0)

            t0 = now()
            source = try! RecordingSource(paths: [file])
            let mapper = try! KeyMapper(keymap: keymap)
            try! mapper.attach(DeviceID(0))
            var keys = 0
            while let item = try! source.next() {
                if case .input(_, let e) = item, e.type == EventType.key, mapper.handle(e, device: DeviceID(0)) != nil { keys += 1 }
            }
            map.append(now() - t0)

            t0 = now()
            source = try! RecordingSource(paths: [file])
            let pipeline = try! Pipeline(keymap: keymap, table: table)
            var out: [PipelineEvent] = []
            while let e = try! source.next() {
                pipeline.process(e, into: &out)
                out.removeAll(keepingCapacity: true)
            }
            full.append(now() - t0)
            _ = count + keys
        }
        let p = median(parse) / Double(events) * 1e9
        let m = median(map) / Double(events) * 1e9
        let f = median(full) / Double(events) * 1e9
        row("2. parse (evemu reader, RecordingSource)", "\(fmt(p)) ns/ev", "", "in process, every event of the file")
        row("   map (xkbcommon, KeyMapper)", "\(fmt(m - p)) ns/ev", "", "parse+map minus parse")
        row("   route + devices (Pipeline, ChordRouter)", "\(fmt(f - m)) ns/ev", "", "full pipeline minus parse+map")
        row("   full pipeline in process", "\(fmt(f)) ns/ev", "", "RecordingSource + Pipeline, no output")
    }

    static func routing(file: String, rounds: Int) {
        let keymap = try! XkbKeymap(context: try! XkbContext(), names: KeymapNames(layout: "us,ru", options: "grp:alt_shift_toggle"))
        let reader = try! EvemuReader(path: file)
        let mapper = try! KeyMapper(keymap: keymap)
        try! mapper.attach(DeviceID(0))
        var keys: [KeyEvent] = []
        while let e = try! reader.next() {
            if e.type == EventType.key, let k = mapper.handle(e, device: DeviceID(0)) { keys.append(k) }
        }
        var results: [(Int, Double)] = []
        for size in [10, 100, 1000, 10_000] {
            let table = makeTable(size: size)
            var times: [Double] = []
            var fired = 0
            for _ in 0..<rounds {
                var router = ChordRouter(table: table, scopes: ["s2", "s1", "s0"])
                var out: [ChordRouter.Output] = []
                out.reserveCapacity(8)
                let t0 = now()
                for k in keys {
                    router.handle(k, into: &out)
                    fired &+= out.count
                    out.removeAll(keepingCapacity: true)
                }
                times.append(now() - t0)
            }
            results.append((size, median(times) / Double(keys.count) * 1e9))
            _ = fired
        }
        for (size, ns) in results {
            row("3. route, \(size) commands", "\(fmt(ns)) ns/key event", "", "ChordRouter.handle over \(keys.count) mapped key events, 3 scopes, sequences")
        }
        row("   10,000 / 10", fmt(results.last!.1 / results.first!.1, 2), "≤ 1.2", "ratio of the two rows")
    }

    /// `size` commands over several scopes, with sequences, always including the chords the generator types.
    static func makeTable(size: Int) -> CommandTable {
        var commands: [Command] = []
        let base = ["Ctrl+S", "Ctrl+Shift+T", "Alt+Tab", "Super+Return", "Ctrl+C"]
        for (i, k) in base.enumerated() {
            commands.append(Command(id: "base\(i)", title: k, keys: try! ChordKey.parseSequence(k)))
        }
        commands.append(Command(id: "seq", title: "seq", keys: try! ChordKey.parseSequence("Ctrl+X Ctrl+K")))
        let mods = ["Ctrl+Alt", "Ctrl+Alt+Shift", "Super+Shift", "Alt+Super", "Ctrl+Super", "Ctrl+Alt+Super", "Alt+Shift+Super", "Ctrl+Shift+Super"]
        let keys = (1...12).map { "F\($0)" } + (0..<26).map { String(UnicodeScalar(UInt8(97 + $0))) } + (0...9).map(String.init)
        // 8 modifier sets × 48 keys in 30 scopes (3 of them active), every 7th a sequence
        // behind Ctrl+Alt+Q (whose scopes then never bind Ctrl+Alt+Q alone).
        var i = 0
        while commands.count < size {
            let scope = "s\(i % 30)"
            let combo = i / 30
            let chord = "\(mods[(combo / keys.count) % mods.count])+\(keys[combo % keys.count])"
            i += 1
            guard combo < mods.count * keys.count else { break }
            if chord == "Ctrl+Alt+q" { continue }
            let text = combo % 7 == 0 ? "Ctrl+Alt+Q \(chord)" : chord
            commands.append(Command(id: "c\(i)", title: text, keys: try! ChordKey.parseSequence(text), scope: scope))
        }
        return try! CommandTable(commands: commands)
    }

    /// The session agent idle, connected to a service: resident memory and wake-ups.
    static func agentIdle(configPath: String) {
        let dir = "/tmp/kbd-bench/agent"
        mkdir(dir, 0o700)
        let socket = dir + "/socket"
        unlink(socket)
        let userConfig = dir + "/config.toml"
        let cfg = try! FileOutput.create(path: userConfig, mode: 0o600)
        cfg.write("[osk]\nbackend = \"none\"\n\n[[command]]\nid = \"terminal\"\nkeys = \"Ctrl+Alt+T\"\nrun = [\"foot\"]\n")
        try! cfg.flush()
        func start(_ argv: [String], _ err: String) -> pid_t { launch(argv, stderrPath: err) }
        let service = start([directory + "/kbd-commandd-daemon", "--config", configPath, "--socket", socket, "--input-dir", "/tmp/kbd-bench/input-empty"], dir + "/service.err")
        let agent = start([directory + "/kbd-commandd-agent", "--config", userConfig, "--socket", socket], dir + "/agent.err")
        for _ in 0..<500 {
            if fileContains(dir + "/agent.err", "registered 1 commands") { break }
            usleep(10_000)
        }
        usleep(500_000)
        let rss = procStatus(agent, "VmRSS")
        let s0 = procStatus(agent, "voluntary_ctxt_switches") + procStatus(agent, "nonvoluntary_ctxt_switches")
        sleep(5)
        let s1 = procStatus(agent, "voluntary_ctxt_switches") + procStatus(agent, "nonvoluntary_ctxt_switches")
        for pid in [agent, service] {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        row("4. session agent idle resident memory (connected)", "\(rss) KiB", "≤ 8 MB", "/proc/PID/status VmRSS, registered and waiting")
        row("   agent wake-ups per second while idle", fmt(Double(s1 - s0) / 5, 2), "0", "context switches over 5 s")
    }

    static func idle(kbd: String, configPath: String) {
        let empty = "/tmp/kbd-bench/input-empty"
        mkdir(empty, 0o755)
        let err = "/tmp/kbd-bench/daemon.err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = [kbd, "run", "--config", configPath, "--no-socket", "--input-dir", empty]
        let cargs = argv.map { strdup($0) } + [nil]
        var pid = pid_t()
        let t0 = now()
        posix_spawn(&pid, kbd, &actions, nil, cargs, environ)
        var ready = -1.0
        for _ in 0..<500 {
            if fileContains(err, "ready:") { ready = now() - t0; break }
            usleep(1000)
        }
        usleep(300_000)
        let rss = procStatus(pid, "VmRSS")
        let pss = procStatus(pid, "Pss", file: "smaps_rollup")
        let dirty = procStatus(pid, "Private_Dirty", file: "smaps_rollup")
        let switches0 = procStatus(pid, "voluntary_ctxt_switches") + procStatus(pid, "nonvoluntary_ctxt_switches")
        sleep(5)
        let switches1 = procStatus(pid, "voluntary_ctxt_switches") + procStatus(pid, "nonvoluntary_ctxt_switches")
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        cargs.forEach { free($0) }
        row("4. daemon idle resident memory, no device", "\(rss) KiB", "≤ 8 MB (4 kbds)", "/proc/PID/status VmRSS after ready")
        row("   of which proportional (PSS) / private dirty", "\(pss) / \(dirty) KiB", "", "/proc/PID/smaps_rollup")
        row("   wake-ups per second while idle", fmt(Double(switches1 - switches0) / 5, 2), "0", "context switches over 5 s")
        row("5. start-up to ready", "\(fmt(ready * 1000)) ms", "", "spawn to the 'ready' log line")
    }
}

extension Substring {
    func trimmingCharacters() -> String { String(self.filter { $0 != " " && $0 != "\t" && $0 != "\n" }) }
}

/// Writes a line to standard output at once (no buffering: progress shows as it happens).
func say(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}
