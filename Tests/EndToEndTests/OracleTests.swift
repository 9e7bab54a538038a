import KbdJSON
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdControl
import Testing

/// kbd-commandd's key events against libxkbcommon driven directly from C
/// (`xkb-reference`, the interactive-evdev loop), on real recordings and the
/// layouts us, de, fr and us,ru: keysym, text and layout must agree on every
/// key event.
@Suite(.serialized)
struct OracleTests {
    static let recordings = [
        "cros-autotest--inbox-input-latency-typing.with-prop.evemu",
        "cros-autotest--searchkey-tabs-enter.with-prop.evemu",
        "cros-autotest--keyboard_ctrl+shift+c.events-only.evemu",
        "cros-autotest--keyboard_ctrl+alt+f1.events-only.evemu",
        "cros-autotest--keyboard_alt+shift+i.events-only.evemu",
        "evemu-devices--logitech-k400-plus.evemu",
        "umockdev--usbkbd.derived.events-only.evemu",
    ]
    static let layouts: [(String, String)] = [("us", ""), ("de", ""), ("fr", ""), ("us,ru", "grp:alt_shift_toggle")]

    struct Case: Sendable, CustomTestStringConvertible {
        var recording: String
        var layout: String
        var options: String
        var testDescription: String { "\(recording) on \(layout)" }
    }

    static let cases: [Case] = recordings.flatMap { r in layouts.map { Case(recording: r, layout: $0.0, options: $0.1) } }

    @Test(arguments: cases)
    func keyEventsMatchXkbcommon(_ c: Case) throws {
        var refArgs = ["--print", "--layout", c.layout]
        var ourArgs = ["replay", Paths.recording(c.recording), "--print", "keys", "--format", "json", "--layout", c.layout]
        if !c.options.isEmpty {
            refArgs += ["--options", c.options]
            ourArgs += ["--options", c.options]
        }
        let ref = runTool(refArgs + [Paths.recording(c.recording)], executable: Paths.reference)
        #expect(ref.status == 0)
        let ours = runTool(ourArgs)
        #expect(ours.status == 0)
        var got: [String] = []
        for line in ours.lines where line.contains(#""event":"key""#) {
            let v = try JSONValue.parse(line)
            if v["synthetic"] != nil { continue }
            let code = EventCodeNames.keyCode(named: v["code"]?.stringValue ?? "") ?? 0
            got.append([v["time"]!.numberValue!.formatted6, String(code), v["state"]!.stringValue!, v["keysym"]!.stringValue!,
                        v["utf8"]!.stringValue!, String(v["layout"]!.intValue!)].joined(separator: " "))
        }
        #expect(!got.isEmpty)
        #expect(got == ref.lines)
    }
}

extension Double {
    /// Six decimals, as evemu and xkb-reference print times.
    var formatted6: String {
        let micro = Int64((self * 1_000_000).rounded())
        return EventTime(microseconds: micro).description
    }
}
