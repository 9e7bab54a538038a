import HardwareInput
#if canImport(Glibc)
import Glibc
#endif

/// Fuzz targets for every parser that takes outside input. Built for libFuzzer with
/// `scripts/fuzz` (`--sanitize fuzzer --sanitize address -DFUZZING`); in the normal
/// build it is a corpus runner: `kbd-fuzz TARGET FILE...` feeds each file once, which
/// is how the regression inputs in Tests/fuzz-regressions are replayed.
enum FuzzTarget: String, CaseIterable {
    case evemu, toml, chord, scenario, control
}

/// The keymap compiled once per process (keymap compilation is not what is fuzzed).
let fuzzKeymap: XkbKeymap = try! XkbKeymap(context: try! XkbContext(), names: KeymapNames(layout: "us,ru", options: "grp:alt_shift_toggle"))

func fuzzOne(_ target: FuzzTarget, _ bytes: UnsafeRawBufferPointer) {
    let data = Array(bytes)
    let text = String(decoding: data, as: UTF8.self)
    switch target {
    case .evemu:
        // Parse, then push every event through the pipeline (mapper, router, presence).
        guard let reader = try? EvemuReader(source: MemoryByteSource(data), path: "fuzz", maxLineLength: 4096) else { return }
        let table = try! CommandTable(commands: [Command(id: "s", title: "s", keys: [try! ChordKey(parsing: "Ctrl+S")]),
                                                 Command(id: "q", title: "q", keys: try! ChordKey.parseSequence("Ctrl+X Ctrl+C"))])
        let pipeline = try! Pipeline(keymap: fuzzKeymap, table: table, options: .init(emitKeys: true))
        var out: [PipelineEvent] = []
        pipeline.process(.attached(DeviceID(0), reader.description ?? .genericKeyboard(name: "fuzz"), time: .zero), into: &out)
        var count = 0
        while count < 100_000, let e = try? reader.next() {
            pipeline.process(.input(DeviceID(0), e), into: &out)
            for o in out { _ = EventFormatter.json(o) }
            out.removeAll(keepingCapacity: true)
            count += 1
        }
        pipeline.process(.detached(DeviceID(0), time: .zero), into: &out)
        pipeline.finish(into: &out)
    case .toml:
        if let config = try? ConfigLoader.parse(text, path: "fuzz.toml") { _ = try? config.geometryState() }
    case .chord:
        _ = try? ChordKey.parseSequence(text)
        for word in text.split(separator: "\n") { _ = (try? ChordKey(parsing: String(word)))?.description }
    case .scenario:
        _ = try? GeometryScenarioRunner.run(text: text)
    case .control:
        for line in text.split(separator: "\n") { _ = try? ControlRequest.parse(String(line)) }
    }
}

#if FUZZING
let activeTarget: FuzzTarget = {
    guard let name = getenv("KBD_FUZZ_TARGET").map({ String(cString: $0) }), let t = FuzzTarget(rawValue: name) else {
        print("set KBD_FUZZ_TARGET to one of \(FuzzTarget.allCases.map(\.rawValue))")
        exit(64)
    }
    return t
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEntry(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    fuzzOne(activeTarget, UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#else
@main
struct CorpusRunner {
    static func main() {
        let args = CommandLine.arguments
        guard args.count >= 2, let target = FuzzTarget(rawValue: args[1]) else {
            print("usage: kbd-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) FILE...")
            exit(64)
        }
        for path in args.dropFirst(2) {
            guard let bytes = try? readWholeFile(path: path, limit: 64 << 20) else {
                print("cannot read \(path)")
                exit(66)
            }
            bytes.withUnsafeBytes { fuzzOne(target, $0) }
        }
        print("\(args.count - 2) inputs ran")
    }
}
#endif
