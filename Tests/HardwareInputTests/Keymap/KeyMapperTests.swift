import KbdPipeline
import KbdSystem
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdRecording
import KbdEvdev
import KbdConfig
import KbdControl
import Testing

/// Keysyms, text and layout index per press, on real xkb layouts, in the style of
/// libxkbcommon's test/keyseq.c. Expected values are what xkeyboard-config's
/// layouts produce (checked with `xkbcli compile-keymap` / interactive-evdev).
struct KeyMapperTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var layout: String
        var variant: String = ""
        var options: String = ""
        var strokes: [Stroke]
        /// (keysym name, utf8, layout index) for every press, in order.
        var presses: [(String, String, Int)]
        var testDescription: String { "\(layout)\(variant.isEmpty ? "" : "(\(variant))") \(strokes)" }
    }

    static let cases: [Case] = [
        Case(layout: "us", strokes: [.tap("q"), .tap("y"), .tap("z"), .tap("1")],
             presses: [("q", "q", 0), ("y", "y", 0), ("z", "z", 0), ("1", "1", 0)]),
        Case(layout: "us", strokes: [.down("leftshift"), .tap("1"), .tap("a"), .up("leftshift"), .tap("slash")],
             presses: [("Shift_L", "", 0), ("exclam", "!", 0), ("A", "A", 0), ("slash", "/", 0)]),
        Case(layout: "de", strokes: [.tap("y"), .tap("z"), .tap("semicolon"), .tap("minus"), .down("rightalt"), .tap("q"), .up("rightalt")],
             presses: [("z", "z", 0), ("y", "y", 0), ("odiaeresis", "ö", 0), ("ssharp", "ß", 0), ("ISO_Level3_Shift", "", 0), ("at", "@", 0)]),
        Case(layout: "fr", strokes: [.tap("q"), .tap("a"), .tap("w"), .tap("1"), .down("leftshift"), .tap("1"), .up("leftshift")],
             presses: [("a", "a", 0), ("q", "q", 0), ("z", "z", 0), ("ampersand", "&", 0), ("Shift_L", "", 0), ("1", "1", 0)]),
        Case(layout: "ru", strokes: [.tap("c"), .tap("q"), .down("leftshift"), .tap("c"), .up("leftshift")],
             presses: [("Cyrillic_es", "с", 0), ("Cyrillic_shorti", "й", 0), ("Shift_L", "", 0), ("Cyrillic_ES", "С", 0)]),
        // Layout switching by option: Alt+Shift toggles us → ru; the index shows it.
        Case(layout: "us,ru", options: "grp:alt_shift_toggle",
             strokes: [.tap("c"), .down("leftalt"), .tap("leftshift"), .up("leftalt"), .tap("c"), .down("leftalt"), .tap("leftshift"), .up("leftalt"), .tap("c")],
             presses: [("c", "c", 0), ("Alt_L", "", 0), ("ISO_Next_Group", "", 0), ("Cyrillic_es", "с", 1), ("Alt_L", "", 1), ("ISO_Next_Group", "", 1), ("c", "c", 0)]),
        // Caps Lock changes the keysym of letters, not of digits.
        Case(layout: "us", strokes: [.tap("capslock"), .tap("s"), .tap("1"), .tap("capslock"), .tap("s")],
             presses: [("Caps_Lock", "", 0), ("S", "S", 0), ("1", "1", 0), ("Caps_Lock", "", 0), ("s", "s", 0)]),
    ]

    @Test(arguments: cases)
    func pressesMapLikeXkbcommon(_ c: Case) throws {
        let kbd = try TestKeyboard(layout: c.layout, variant: c.variant, options: c.options)
        kbd.type(c.strokes)
        let got = kbd.presses.map { ($0.keysym.name, $0.utf8 ?? "<nil>", $0.layout) }
        #expect(got.map(\.0) == c.presses.map(\.0))
        #expect(got.map(\.1) == c.presses.map(\.1))
        #expect(got.map(\.2) == c.presses.map(\.2))
    }

    @Test func modifiersAreReportedBeforeTheUpdateWithDesignNames() throws {
        let kbd = try TestKeyboard(layout: "de")
        kbd.type([.tap("capslock"), .down("leftctrl"), .down("leftshift"), .down("rightalt"), .tap("e"), .up("rightalt"), .up("leftshift"), .up("leftctrl")])
        let e = try #require(kbd.presses.first { $0.codeName == "KEY_E" })
        #expect(e.modifiers.names == ["Ctrl", "Shift", "AltGr", "CapsLock"])
        let ctrl = try #require(kbd.presses.first { $0.codeName == "KEY_LEFTCTRL" })
        #expect(ctrl.modifiers.names == ["CapsLock"])
    }

    @Test func repeatDoesNotChangeStateAndNonRepeatingKeysDropRepeats() throws {
        let kbd = try TestKeyboard(layout: "us")
        kbd.type([.down("leftshift"), .repeated("leftshift"), .repeated("leftshift"), .down("a"), .repeated("a"), .up("a"), .up("leftshift"), .tap("a")])
        #expect(kbd.keys.filter { $0.state == .repeat }.map(\.codeName) == ["KEY_A"])
        #expect(kbd.keys.last?.keysym.name == "a")
        #expect(kbd.pipeline.mapper.counters.repeatIgnored == 2)
    }

    @Test func impossibleTransitionsAreDroppedAndCounted() throws {
        let kbd = try TestKeyboard(layout: "us")
        kbd.type([.up("a"), .down("a"), .down("a"), .repeated("b"), .up("a"), .up("a")])
        #expect(kbd.keys.map { "\($0.codeName) \($0.state)" } == ["KEY_A press", "KEY_A release"])
        let c = kbd.pipeline.mapper.counters
        #expect(c.releaseWhileUp == 2 && c.pressWhileDown == 1 && c.repeatWhileUp == 1)
        #expect(kbd.pipeline.eventsDropped == 4)
    }

    @Test func detachReleasesHeldKeysSoNoModifierSticks() throws {
        let kbd = try TestKeyboard(layout: "us")
        kbd.type([.down("leftctrl"), .down("leftshift"), .down("t")])
        kbd.detach()
        let synthetic = kbd.keys.filter(\.synthetic)
        #expect(synthetic.map(\.codeName) == ["KEY_T", "KEY_LEFTSHIFT", "KEY_LEFTCTRL"])
        #expect(synthetic.allSatisfy { $0.state == .release })
        #expect(kbd.pipeline.mapper.keysDown(kbd.device).isEmpty)
    }

    static let composeFile = "/usr/share/X11/locale/en_US.UTF-8/Compose"

    @Test(arguments: [
        // dead_acute (the ´ key of German) then e composes é on the e press.
        ("de", [Stroke.tap("equal"), .tap("e")], ["", "e"], [nil, "é"]),
        // dead_circumflex then o: ô.
        ("de", [.tap("grave"), .tap("o")], ["", "o"], [nil, "ô"]),
        // A sequence with no completion is cancelled and yields nothing.
        ("de", [.tap("equal"), .tap("q")], ["", "q"], [nil, nil]),
        // French: dead_circumflex (the ^ key) then e: ê.
        ("fr", [.tap("leftbrace"), .tap("e")], ["", "e"], [nil, "ê"]),
    ] as [(String, [Stroke], [String], [String?])])
    func composeAndDeadKeys(_ layout: String, _ strokes: [Stroke], _ utf8: [String], _ text: [String?]) throws {
        let kbd = try TestKeyboard(layout: layout, compose: .file(path: Self.composeFile, locale: "en_US.UTF-8"))
        kbd.type(strokes)
        #expect(kbd.presses.map { $0.utf8 ?? "<nil>" } == utf8)
        #expect(kbd.presses.map(\.composedText) == text)
    }

    @Test func composeFromLocaleNameWorksToo() throws {
        let kbd = try TestKeyboard(layout: "de", compose: .locale("en_US.UTF-8"))
        kbd.type([.tap("equal"), .tap("e")])
        #expect(kbd.presses.last?.composedText == "é")
    }

    @Test func latinLayoutsAreDetected() throws {
        let keymap = try Keymaps.make("ru,de,us")
        #expect(keymap.latinLayouts == [false, true, true])
        #expect(keymap.firstLatinLayout == 1)
    }

    @Test func badLayoutNamesFailWithAClearError() throws {
        #expect(throws: KeymapError.self) { try Keymaps.make("nosuchlayout") }
    }

    @Test(arguments: [
        (["XKB_DEFAULT_LAYOUT": "de", "XKB_DEFAULT_VARIANT": "nodeadkeys"], KeymapNames(), KeymapNames(), "de", "nodeadkeys"),
        (["XKB_DEFAULT_LAYOUT": "de", "XKB_DEFAULT_VARIANT": "nodeadkeys"], KeymapNames(layout: "fr"), KeymapNames(), "fr", ""),
        ([:], KeymapNames(layout: "fr"), KeymapNames(layout: "ru"), "ru", ""),
        ([:], KeymapNames(), KeymapNames(), "us", ""),
    ] as [([String: String], KeymapNames, KeymapNames, String, String)])
    func keymapNamesResolveCommandLineOverConfigOverEnvironment(
        _ env: [String: String], _ config: KeymapNames, _ cli: KeymapNames, _ layout: String, _ variant: String
    ) {
        let r = KeymapNames.resolve(commandLine: cli, config: config, environment: env)
        #expect(r.layout == layout)
        #expect(r.variant == variant)
        #expect(r.rules == "evdev")
    }
}
