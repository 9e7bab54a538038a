import KbdJSON
import KbdSystem
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdRecording
import KbdEvdev
import KbdCommands
import KbdControl
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized)
struct GeometryEndToEndTests {
    @Test func replayWithAGeometrySectionPublishesPresenceAndGeometry() {
        let r = runTool(["replay", Paths.examples + "/recordings/logitech-k400-ctrl-c.evemu", "--config", Paths.examples + "/tablet.toml", "--format", "json"])
        #expect(r.status == 0)
        let kinds = r.lines.compactMap { $0.split(separator: "\"").dropFirst(3).first.map(String.init) }
        #expect(kinds == ["attach", "presence", "geometry", "chord", "command", "detach", "presence", "geometry"])
        #expect(r.lines[2].hasPrefix(#"{"event":"geometry","time":0.000001,"layout":"mini-toolbar","keyboard_frame":{"x":519,"y":969,"width":328,"height":55},"windows":[{"id":"main","guide":{"x":0,"y":969,"width":1366,"height":55},"bottom_offset":55,"near":["bottom"]"#))
        #expect(r.lines[7].hasPrefix(#"{"event":"geometry","time":12.076222,"layout":"docked","keyboard_frame":{"x":0,"y":626,"width":1366,"height":398}"#))
    }

    @Test func geometryCommandPrintsOneLinePerStepAndDrawsSVG() {
        let svg = "/tmp/kbd-e2e-geometry.svg"
        let r = runTool(["geometry", Paths.examples + "/geometry/design-example.json", "--svg", svg])
        #expect(r.status == 0)
        #expect(r.lines.count == 5)
        #expect(r.lines.first?.hasPrefix(#"{"step":0,"layout":"docked","keyboard_frame":{"x":0,"y":626,"width":1366,"height":398}"#) == true)
        let f = fopen(svg, "r")
        #expect(f != nil)
        var head = [CChar](repeating: 0, count: 5)
        if let f { fread(&head, 1, 4, f); fclose(f) }
        #expect(String(decoding: head.prefix(4).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "<svg")
        unlink(svg)
    }

    @Test func geometryErrorsNameTheJSONPath() {
        let path = "/tmp/kbd-e2e-bad-scenario.json"
        let f = fopen(path, "w")
        fputs(#"{"screen":{"width":1366,"height":1024},"keyboard":{"kind":"hidden"},"windows":[{"id":"a","frame":{"x":0,"y":0,"width":"wide","height":10}}]}"#, f)
        fclose(f)
        let r = runTool(["geometry", path])
        #expect(r.status == 65)
        #expect(r.stderr == "Error: \(path): windows[0].frame.width: expected a number\n")
        unlink(path)
    }

    @Test func badGeometryConfigNamesTheLine() {
        let path = "/tmp/kbd-e2e-bad-geometry.toml"
        let f = fopen(path, "w")
        fputs("[[command]]\nid = \"a\"\nkeys = \"Ctrl+A\"\n\n[geometry]\nscreen = { width = 0, height = 10 }\n", f)
        fclose(f)
        let r = runTool(["replay", Paths.examples + "/recordings/super-up.evemu", "--config", path])
        #expect(r.status == 78)
        #expect(r.stderr.hasPrefix("Error: \(path):5: geometry.screen"))
        unlink(path)
    }
}

/// Files we write are read by libevemu's own parser (what evemu-play and
/// evemu-device use): checked with a small C program built against libevemu.
@Suite(.serialized)
struct EvemuCompatibilityTests {
    static let checker: String? = {
        let source = Paths.root + "/Tests/tools/evemu-accepts.c"
        let out = "/tmp/kbd-e2e-evemu-accepts"
        let cc = runTool(["-O0", "-o", out, source, "-levemu"], environment: ["PATH": "/usr/bin:/bin"], executable: "/usr/bin/cc")
        return cc.status == 0 ? out : nil
    }()

    @Test(.enabled(if: checker != nil, "needs cc and libevemu-dev"), arguments: [
        "evemu-devices--lenovo-tp-compact-usb-kbd.keyboard.evemu",
        "evemu-devices--logitech-k400-plus.evemu",
        "cros-autotest--searchkey-tabs-enter.with-prop.evemu",
        "evemu-devices--razer-blackwidow-2013.keyboard.desc.evemu",
    ])
    func evemuAcceptsWhatWeWrite(_ name: String) throws {
        let reader = try EvemuReader(path: Paths.recording(name))
        let out = "/tmp/kbd-e2e-written.evemu"
        let file = try FileOutput.create(path: out)
        var writer = EvemuWriter(output: file)
        writer.writeHeader(try #require(reader.description))
        var count = 0
        while let e = try reader.next() {
            writer.write(e)
            count += 1
        }
        try file.flush()
        let theirs = runTool([out], executable: Self.checker!)
        let original = runTool([Paths.recording(name)], executable: Self.checker!)
        #expect(theirs.status == 0)
        #expect(theirs.stdout == original.stdout)
        #expect(theirs.stdout.split(separator: "|").dropFirst().first == Substring(String(count)))
        unlink(out)
    }
}

/// Every input a fuzzer crashed on (Tests/fuzz-regressions/TARGET/) runs through
/// the same harness (the kbd-fuzz corpus runner) without crashing.
@Suite(.serialized)
struct FuzzRegressionTests {
    @Test(arguments: ["evemu", "toml", "chord", "scenario", "control"])
    func crashInputsNoLongerCrash(_ target: String) {
        let dir = Paths.root + "/Tests/fuzz-regressions/" + target
        let files = Directory.names(dir).filter { !$0.hasPrefix(".") }.map { dir + "/" + $0 }
        guard !files.isEmpty else { return }
        let r = runTool([target] + files, executable: Paths.builtProduct("kbd-fuzz"))
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        #expect(r.stdout.contains("\(files.count) inputs ran"))
    }
}
