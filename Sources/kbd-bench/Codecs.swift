import KbdTestSupport
import KbdSystem
import KbdConfig
import KbdJSON
import KbdControl
import KbdCommands
#if canImport(Glibc)
import Glibc
#endif

/// The codecs at the edges: TOML config loading and JSON request parsing (issue 17, D4 and D13).
extension Bench {
    /// `kbd-bench toml`: `ConfigLoader.load` (read, TOML, validation, command table) of generated
    /// configs of 1k to 100k commands, and the ratio that shows it is linear.
    static func toml(rounds: Int, sizes: [Int]) {
        let dir = "/tmp/kbd-bench"
        mkdir(dir, 0o755)
        say("| measure | value | target | method |")
        say("|---|---|---|---|")
        var results: [Int: Double] = [:]
        for size in sizes {
            let path = dir + "/toml-\(size).toml"
            let out = try! FileOutput.create(path: path, mode: 0o644)
            out.write(ConfigGenerator.commands(size))
            try! out.flush()
            var times: [Double] = []
            for _ in 0..<rounds {
                let t0 = now()
                let config = try! ConfigLoader.load(path: path)
                times.append(now() - t0)
                precondition(config.table.commands.count == size)
            }
            results[size] = median(times)
            let bytes = (try? readWholeFile(path: path, limit: 1 << 30).count) ?? 0
            let target = size == 100_000 ? "< 2 s" : ""
            row("TOML load, \(size) commands", "\(fmt(median(times) * 1000)) ms (\(fmt(median(times) / Double(size) * 1e6, 2)) µs/command)",
                target, "`ConfigLoader.load`, \(bytes / 1024) KiB, \(ConfigGenerator.scopes(for: size)) scopes, median of \(rounds)")
        }
        if let big = results[100_000], let small = results[10_000] {
            row("   100k / 10k", fmt(big / small, 1), "≤ 12 (linear)", "ratio of the two rows")
        }
        unlinkAll(sizes.map { dir + "/toml-\($0).toml" })
    }

    static func unlinkAll(_ paths: [String]) {
        for p in paths { unlink(p) }
    }

    /// `kbd-bench json`: the issue's 64 KiB request (a ping with a 32,700-element array) through
    /// the JSON parser and the control request parser, and a 1M-element array.
    static func json(rounds: Int) {
        say("| measure | value | target | method |")
        say("|---|---|---|---|")
        let open = #"{"request":"ping","pad":["#
        let count = (65_000 - open.utf8.count - 2 + 1) / 2
        let request = open + Array(repeating: "0", count: count).joined(separator: ",") + "]}"
        var parse: [Double] = [], control: [Double] = []
        for _ in 0..<rounds {
            var t0 = now()
            let value = try! JSONValue.parse(request)
            parse.append(now() - t0)
            precondition(value["pad"]?.arrayValue?.count == count)
            t0 = now()
            let parsed = try! ControlRequest.parse(request)
            control.append(now() - t0)
            precondition(parsed == .ping)
        }
        row("JSON parse, 64 KiB request (\(count) elements)", "\(fmt(median(parse) * 1e6)) µs", "", "`JSONValue.parse`, median of \(rounds)")
        row("   as a control request", "\(fmt(median(control) * 1e6)) µs", "", "`ControlRequest.parse` (depth limit 8)")
        let million = "[" + Array(repeating: "0", count: 1_000_000).joined(separator: ",") + "]"
        var big: [Double] = []
        for _ in 0..<rounds {
            let t0 = now()
            _ = try! JSONValue.parse(million)
            big.append(now() - t0)
        }
        row("JSON parse, 1M-element array (2 MB)", "\(fmt(median(big) * 1000)) ms", "", "`JSONValue.parse`, median of \(rounds)")
    }
}
