import KbdSystem
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdCommands
import KbdPipeline
import KbdConfig
import KbdControl
import KbdProcess
import Testing

/// Every routing rule of the command table on real layouts.
struct RoutingTests {
    static let table = """
        [keymap]
        layout = "us"

        [settings]
        sequence_timeout_ms = 1000

        [[command]]
        id = "undo"
        keys = "Ctrl+Z"

        [[command]]
        id = "copy"
        keys = "Ctrl+C"

        [[command]]
        id = "save"
        keys = "Ctrl+S"

        [[command]]
        id = "bang"
        keys = "Ctrl+exclam"

        [[command]]
        id = "new-tab"
        keys = "Ctrl+T"

        [[command]]
        id = "reopen-tab"
        keys = "Ctrl+Shift+T"

        [[command]]
        id = "zoom-in"
        keys = "Ctrl+plus"
        repeat = true

        [[command]]
        id = "save-all"
        keys = "Ctrl+X Ctrl+S"

        [[command]]
        id = "editor-save"
        keys = "Ctrl+S"
        scope = "editor"

        [[command]]
        id = "plain-q"
        keys = "q"

        [[command]]
        id = "shift-w"
        keys = "Shift+W"

        [[command]]
        id = "plain-e"
        keys = "e"
        priority_over_text_input = true

        [[command]]
        id = "help"
        keys = "F1"

        [[command]]
        id = "confirm"
        keys = "Return"

        [[command]]
        id = "terminal"
        keys = "Super+Return"

        [[command]]
        id = "vt1"
        keys = "Ctrl+Alt+F1"
        """

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var layout = "us"
        var options = ""
        var scopes: [String] = []
        var textInput = false
        var strokes: [Stroke]
        var fired: [String]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "Ctrl+Z fires on the key that types z on German (the Y position)", layout: "de",
             strokes: [.down("leftctrl"), .tap("y"), .up("leftctrl"), .down("leftctrl"), .tap("z"), .up("leftctrl")], fired: ["undo"]),
        Case(name: "Ctrl+Z on US is the Z position", strokes: [.down("leftctrl"), .tap("y"), .tap("z"), .up("leftctrl")], fired: ["undo"]),
        Case(name: "Ctrl+C fires while the Russian layout of us,ru is active", layout: "us,ru", options: "grp:alt_shift_toggle",
             strokes: [.down("leftalt"), .tap("leftshift"), .up("leftalt"), .down("leftctrl"), .tap("c"), .up("leftctrl")], fired: ["copy"]),
        Case(name: "Ctrl+C on French AZERTY is the C position", layout: "fr", strokes: [.down("leftctrl"), .tap("c"), .up("leftctrl")], fired: ["copy"]),
        Case(name: "Ctrl+exclam matches Ctrl+Shift+1 on US", strokes: [.down("leftctrl"), .down("leftshift"), .tap("1"), .up("leftshift"), .up("leftctrl")], fired: ["bang"]),
        Case(name: "CapsLock on does not stop Ctrl+S", strokes: [.tap("capslock"), .down("leftctrl"), .tap("s"), .up("leftctrl")], fired: ["save"]),
        Case(name: "NumLock on does not stop Ctrl+S", strokes: [.tap("numlock"), .down("leftctrl"), .tap("s"), .up("leftctrl")], fired: ["save"]),
        Case(name: "Ctrl+T and Ctrl+Shift+T are different chords", strokes: [.down("leftctrl"), .tap("t"), .down("leftshift"), .tap("t"), .up("leftshift"), .up("leftctrl")], fired: ["new-tab", "reopen-tab"]),
        Case(name: "a held key fires once", strokes: [.down("leftctrl"), .down("s"), .repeated("s"), .repeated("s"), .up("s"), .up("leftctrl")], fired: ["save"]),
        Case(name: "a held key with repeat = true fires on every repeat", strokes: [.down("leftctrl"), .down("leftshift"), .down("equal"), .repeated("equal"), .repeated("equal"), .up("equal"), .up("leftshift"), .up("leftctrl")], fired: ["zoom-in", "zoom-in", "zoom-in"]),
        Case(name: "a sequence completes inside the timeout", strokes: [.down("leftctrl"), .tap("x"), .wait(900), .tap("s"), .up("leftctrl")], fired: ["save-all"]),
        Case(name: "a sequence does not complete after the timeout", strokes: [.down("leftctrl"), .tap("x"), .wait(1100), .tap("s"), .up("leftctrl")], fired: ["save"]),
        Case(name: "another chord cancels a pending sequence and is routed itself", strokes: [.down("leftctrl"), .tap("x"), .tap("t"), .tap("s"), .up("leftctrl")], fired: ["new-tab", "save"]),
        Case(name: "a more specific scope wins over global", scopes: ["editor"], strokes: [.down("leftctrl"), .tap("s"), .up("leftctrl")], fired: ["editor-save"]),
        Case(name: "unknown scopes fall through to global", scopes: ["browser"], strokes: [.down("leftctrl"), .tap("s"), .up("leftctrl")], fired: ["save"]),
        Case(name: "plain letters fire without text input", strokes: [.tap("q"), .down("leftshift"), .tap("w"), .up("leftshift")], fired: ["plain-q", "shift-w"]),
        Case(name: "plain and Shift+letters never fire while text input is active", textInput: true, strokes: [.tap("q"), .down("leftshift"), .tap("w"), .up("leftshift")], fired: []),
        Case(name: "priority_over_text_input fires anyway", textInput: true, strokes: [.tap("e")], fired: ["plain-e"]),
        Case(name: "editing keys do not fire while text input is active", textInput: true, strokes: [.tap("enter")], fired: []),
        Case(name: "F-keys and Ctrl/Super chords still fire while text input is active", textInput: true,
             strokes: [.tap("f1"), .down("leftctrl"), .tap("s"), .up("leftctrl"), .down("leftmeta"), .tap("enter"), .up("leftmeta")], fired: ["help", "save", "terminal"]),
        Case(name: "Return fires without text input", strokes: [.tap("enter")], fired: ["confirm"]),
        Case(name: "Ctrl+Alt+F1 matches by level one although xkb produces XF86Switch_VT_1",
             strokes: [.down("leftctrl"), .down("leftalt"), .tap("f1"), .up("leftalt"), .up("leftctrl")], fired: ["vt1"]),
        Case(name: "modifier keys alone fire nothing", strokes: [.tap("leftctrl"), .tap("leftshift"), .tap("leftmeta")], fired: []),
    ]

    @Test(arguments: cases)
    func route(_ c: Case) throws {
        let kbd = try TestKeyboard(layout: c.layout, options: c.options, config: Self.table, scopes: c.scopes, textInputActive: c.textInput)
        kbd.type(c.strokes)
        #expect(kbd.commandIDs == c.fired)
    }

    @Test(arguments: [
        ("us", [Stroke.down("leftctrl"), .down("leftshift"), .tap("t")], "Ctrl+Shift+T"),
        ("us", [.down("leftctrl"), .down("leftshift"), .tap("1")], "Ctrl+Shift+1"),
        ("us", [.down("leftmeta"), .tap("enter")], "Super+Return"),
        ("us", [.down("leftalt"), .tap("f4")], "Alt+F4"),
        ("de", [.down("leftctrl"), .tap("y")], "Ctrl+Z"),
        ("us,ru", [.down("leftalt"), .tap("leftshift"), .up("leftalt"), .down("leftctrl"), .tap("c")], "Ctrl+C"),
    ] as [(String, [Stroke], String)])
    func chordStrings(_ layout: String, _ strokes: [Stroke], _ chord: String) throws {
        let kbd = try TestKeyboard(layout: layout, options: layout == "us,ru" ? "grp:alt_shift_toggle" : "")
        kbd.type(strokes)
        #expect(kbd.chords == [chord])
    }

    @Test func shiftAndAltGrAloneAreNotLoggedAsChords() throws {
        let kbd = try TestKeyboard(layout: "de")
        kbd.type([.down("leftshift"), .tap("a"), .up("leftshift"), .down("rightalt"), .tap("q"), .up("rightalt"), .tap("b")])
        #expect(kbd.chords.isEmpty)
    }

    @Test func theRouterReportsItsDeadlineOnlyWhileASequenceIsPending() throws {
        let kbd = try TestKeyboard(config: Self.table)
        #expect(kbd.pipeline.nextDeadline == nil)
        kbd.type([.down("leftctrl"), .tap("x")])
        let deadline = try #require(kbd.pipeline.nextDeadline)
        #expect(deadline == kbd.time.adding(milliseconds: 1000 - 10))
        kbd.type([.tap("s")])
        #expect(kbd.pipeline.nextDeadline == nil)
    }

    @Test func detachCancelsAPendingSequence() throws {
        let kbd = try TestKeyboard(config: Self.table)
        kbd.type([.down("leftctrl"), .tap("x")])
        kbd.detach()
        #expect(kbd.pipeline.router.nextDeadline == nil)
    }

    @Test func routingCostDoesNotScanTheTable() throws {
        // 10,000 commands in 50 scopes: building the index works and lookups still find the right one.
        var commands: [Command] = []
        let letters = (0..<26).map { String(UnicodeScalar(UInt8(97 + $0))) }
        for i in 0..<10_000 {
            let mods = ["Ctrl", "Ctrl+Alt", "Ctrl+Shift", "Alt+Shift", "Super", "Ctrl+Super", "Alt+Super", "Ctrl+Alt+Shift"][i % 8]
            let key = i < 26 * 8 * 40 ? letters[(i / 8) % 26] : "F\((i / 8) % 12 + 1)"
            commands.append(Command(id: "c\(i)", title: "c\(i)", keys: [try ChordKey(parsing: "\(mods)+\(key)")], scope: "s\(i % 50)"))
        }
        // Duplicates within a scope are expected from this generator; keep the first of each.
        var seen: Set<String> = []
        commands = commands.filter { seen.insert("\($0.scope) \($0.chordText)").inserted }
        let table = try CommandTable(commands: commands)
        #expect(table.commands.count == commands.count)
        var router = ChordRouter(table: table, scopes: ["s8"])
        let keymap = try Keymaps.make("us")
        let mapper = try KeyMapper(keymap: keymap)
        try mapper.attach(DeviceID(0))
        var out: [ChordRouter.Output] = []
        for (code, value) in [(29 as UInt16, 1 as Int32), (30, 1)] {
            let key = try #require(mapper.handle(InputEvent(time: .zero, type: 1, code: code, value: value), device: DeviceID(0)))
            router.handle(key, into: &out)
        }
        let fired = out.compactMap { if case .command(_, _, let c, _, _) = $0 { return c.scope } else { return nil } }
        #expect(fired.count == 1)
    }
}
