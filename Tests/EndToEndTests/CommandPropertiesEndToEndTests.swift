import KbdSystem
import KbdTestSupport
import KbdJSON
import Testing

/// Issue 37 through the real replay path: two generated recordings of USB keyboards with
/// their own vendor:product ids (a macro pad and a K120) replayed together on de,ara with
/// Alt+Shift switching layouts: `localize` (the key at the US '[' on de), `mirror` (the
/// US ']' while Arabic is active), `devices` (F1 on the pad and on the K120), and a
/// `[[device]]` grab (the pad's other keys run nothing).
@Suite struct CommandPropertiesEndToEndTests {
    typealias S = RecordingGenerator.Stroke

    static let config = """
        [[command]]
        id = "back"
        keys = "Ctrl+bracketleft"
        mirror = true
        discoverability_title = "Back"

        [[command]]
        id = "literal"
        keys = "Ctrl+bracketright"
        localize = false

        [[command]]
        id = "pad-f1"
        keys = "F1"
        devices = ["1234:5678"]

        [[command]]
        id = "any-f1"
        keys = "F1"

        [[command]]
        id = "save"
        keys = "Ctrl+S"
        """

    static func recording(_ strokes: [S], name: String, vendor: UInt16, product: UInt16, in dir: EndToEndDirectory, file: String) -> String {
        let out = StringOutput()
        var generator = RecordingGenerator(seed: 37, output: out)
        generator.script(strokes, name: name, vendor: vendor, product: product)
        return dir.write(file, out.text)
    }

    /// `id chord device` of each command event.
    static func replay(config: String, extra: String = "") throws -> [String] {
        let dir = EndToEndDirectory()
        let pad = recording([S(0, "KEY_F1", 1), S(50, "KEY_F1", 0), S(100, "KEY_LEFTCTRL", 1), S(150, "KEY_S", 1), S(200, "KEY_S", 0),
                             S(250, "KEY_LEFTCTRL", 0)], name: "Acme Macro Pad", vendor: 0x1234, product: 0x5678, in: dir, file: "pad.evemu")
        // On de: Ctrl + the key that types ü; F1; Alt+Shift to Arabic; Ctrl + the key at the US ']'; Ctrl+S.
        let board = recording([S(1000, "KEY_LEFTCTRL", 1), S(1050, "KEY_LEFTBRACE", 1), S(1100, "KEY_LEFTBRACE", 0), S(1150, "KEY_LEFTCTRL", 0),
                               S(1200, "KEY_F1", 1), S(1250, "KEY_F1", 0),
                               S(1300, "KEY_LEFTALT", 1), S(1350, "KEY_LEFTSHIFT", 1), S(1400, "KEY_LEFTSHIFT", 0), S(1450, "KEY_LEFTALT", 0),
                               S(1500, "KEY_LEFTCTRL", 1), S(1550, "KEY_RIGHTBRACE", 1), S(1600, "KEY_RIGHTBRACE", 0), S(1650, "KEY_LEFTCTRL", 0)],
                              name: "Logitech K120", vendor: 0x046d, product: 0xc31c, in: dir, file: "k120.evemu")
        let path = dir.write("c.toml", extra + config)
        return try commands(["replay", "--config", path, "--layout", "de,ara", "--options", "grp:alt_shift_toggle", pad, board])
    }

    /// `id chord device` of each command event of a replay (`arguments` without --print and --format).
    static func commands(_ arguments: [String]) throws -> [String] {
        let r = runTool(arguments + ["--print", "commands", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        // Command events name no device: each follows its keyboard's attach (the files play in turn).
        var device = "?"
        return try r.lines.compactMap { line in
            guard case .object(let o) = try JSONValue.parse(line) else { return nil }
            if o["event"] == .string("attach") { device = o["device"]?.stringValue ?? "?" }
            guard o["event"] == .string("command") else { return nil }
            return "\(o["id"]?.stringValue ?? "?") \(o["chord"]?.stringValue ?? "?") \(device)"
        }
    }

    @Test func localizedMirroredAndPerKeyboardCommandsFireFromTheirKeys() throws {
        #expect(try Self.replay(config: Self.config) == [
            "pad-f1 F1 Acme Macro Pad", "save Ctrl+S Acme Macro Pad",
            "back Ctrl+bracketleft Logitech K120", "any-f1 F1 Logitech K120",
            // Arabic active: the key at the US ']' is Ctrl+plus on de, localized to Ctrl+bracketright, mirrored.
            "back Ctrl+bracketleft Logitech K120",
        ])
    }

    @Test func aGrabbedPadRunsOnlyItsOwnCommands() throws {
        let grabbed = try Self.replay(config: Self.config, extra: "[[device]]\nmatch = \"Acme*\"\ngrab = true\n\n")
        #expect(grabbed.filter { $0.hasSuffix("Acme Macro Pad") } == ["pad-f1 F1 Acme Macro Pad"])
        #expect(grabbed.filter { $0.hasSuffix("Logitech K120") }.count == 3)
    }

    @Test func checkAndCommandsShowTheKeycaps() throws {
        let dir = EndToEndDirectory()
        let path = dir.write("c.toml", Self.config)
        let check = runTool(["check", "--config", path, "--layout", "de,ara"])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("Note: \(path):1: keys = 'Ctrl+bracketleft' (command 'back'): localized: Ctrl+bracketleft fires from Ctrl+Ü on German"))
        #expect(check.stdout.contains("Note: \(path):1: keys = 'Ctrl+bracketleft' (command 'back'): mirrored: while Arabic (right to left) is active"))
        #expect(!check.stdout.contains("command 'literal'"), "localize = false: no note")
        let listing = runTool(["commands", "--config", path, "--layout", "de"])
        #expect(listing.stdout.contains("back     Ctrl+bracketleft  (on this keymap: Ctrl+Ü)"), "\(listing.stdout)")
        let us = runTool(["commands", "--config", path, "--layout", "us"])
        #expect(!us.stdout.contains("on this keymap"))
    }

    @Test func devicesListsTheIdsAndTheGrab() throws {
        let dir = EndToEndDirectory()
        let pad = Self.recording([S(0, "KEY_F1", 1), S(50, "KEY_F1", 0)], name: "Acme Macro Pad", vendor: 0x1234, product: 0x5678, in: dir, file: "pad.evemu")
        let path = dir.write("c.toml", "[[device]]\nmatch = \"1234:5678\"\ngrab = true\n")
        let r = runTool(["devices", "--config", path, pad])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("1234:5678"))
        #expect(r.stdout.contains("grabbed by the service: [[device]] match = \"1234:5678\" at \(path):1 has grab = true"), "\(r.stdout)")
        let json = runTool(["devices", "--config", path, "--format", "json", pad])
        #expect(json.stdout.contains(#""grabbed":"[[device]] match = \"1234:5678\" at "# + path + #":1 has grab = true""#), "\(json.stdout)")
    }

    /// `[device.keymap]`: the pad reads with de (the key at the US 'z' types y there), the
    /// K120 with the service's us, replayed together.
    @Test func aPadWithItsOwnKeymapReadsWithItAndTheOtherKeyboardDoesNot() throws {
        let dir = EndToEndDirectory()
        let ctrlZ = [S(0, "KEY_LEFTCTRL", 1), S(50, "KEY_Z", 1), S(100, "KEY_Z", 0), S(150, "KEY_LEFTCTRL", 0)]
        let pad = Self.recording(ctrlZ, name: "Acme Macro Pad", vendor: 0x1234, product: 0x5678, in: dir, file: "pad.evemu")
        let board = Self.recording(ctrlZ.map { S($0.ms + 1000, $0.key, $0.value) }, name: "Logitech K120", vendor: 0x046d,
                                   product: 0xc31c, in: dir, file: "k120.evemu")
        let path = dir.write("c.toml", """
            [[device]]
            match = "1234:5678"
            grab = true
            [device.keymap]
            layout = "de"

            [[command]]
            id = "pad-undo"
            keys = "Ctrl+Y"
            devices = ["1234:5678"]

            [[command]]
            id = "redo"
            keys = "Ctrl+Y"

            [[command]]
            id = "undo"
            keys = "Ctrl+Z"
            """)
        #expect(try Self.commands(["replay", "--config", path, "--layout", "us", pad, board])
            == ["pad-undo Ctrl+Y Acme Macro Pad", "undo Ctrl+Z Logitech K120"])
    }

    /// "`devices` and `monitor` say which is grabbed and why": monitor --replay's attach line.
    @Test func monitorSaysWhichKeyboardTheServiceGrabsAndWhy() throws {
        let dir = EndToEndDirectory()
        let pad = Self.recording([S(0, "KEY_F1", 1), S(50, "KEY_F1", 0)], name: "Acme Macro Pad", vendor: 0x1234, product: 0x5678, in: dir, file: "pad.evemu")
        let board = Self.recording([S(100, "KEY_F1", 1), S(150, "KEY_F1", 0)], name: "Logitech K120", vendor: 0x046d, product: 0xc31c, in: dir, file: "k120.evemu")
        let path = dir.write("c.toml", "[[command]]\nid = \"help\"\nkeys = \"F1\"\n\n[[device]]\nmatch = \"1234:5678\"\ngrab = true\n")
        let r = runTool(["monitor", "--replay", pad, board, "--config", path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.contains("attach \"Acme Macro Pad\"  grabbed by the service: [[device]] match = \"1234:5678\" at \(path):5 has grab = true"), "\(r.stdout)")
        #expect(r.lines.contains("attach \"Logitech K120\""), "\(r.stdout)")
        let all = dir.write("all.toml", "[devices]\ngrab = true\n")
        let every = runTool(["monitor", "--replay", board, "--config", all])
        #expect(every.lines.contains("attach \"Logitech K120\"  grabbed by the service: [devices] grab = true"), "\(every.stdout)")
    }

    /// `check` on a pad with its own keymap: a note that it reads with it, the localization
    /// of the commands bound to it on that keymap, and a keymap that does not compile refused
    /// with the [[device]]'s line.
    @Test func checkNamesAKeyboardsOwnKeymapAndLocalizesItsCommandsOnIt() throws {
        let dir = EndToEndDirectory()
        let path = dir.write("c.toml", """
            [[device]]
            match = "1234:5678"
            grab = true
            [device.keymap]
            layout = "de"

            [[command]]
            id = "pad-back"
            keys = "Ctrl+bracketleft"
            devices = ["1234:5678"]
            """)
        let r = runTool(["check", "--config", path, "--layout", "us"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Note: \(path):1: [[device]] match = \"1234:5678\": its keys read with its own keymap, layout de (German), not the desktop's"), "\(r.stdout)")
        #expect(r.stdout.contains("Note: \(path):7: on [[device]] match = \"1234:5678\": keys = 'Ctrl+bracketleft' (command 'pad-back'): localized: Ctrl+bracketleft fires from Ctrl+Ü on German"), "\(r.stdout)")
        let bad = dir.write("bad.toml", "\n[[device]]\nmatch = \"1234:5678\"\n[device.keymap]\nrules = \"nosuchrules\"\n")
        let refused = runTool(["check", "--config", bad, "--layout", "us"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("\(bad):2: [[device]] match = \"1234:5678\": [device.keymap] does not compile"), "\(refused.stderr)")
    }

    /// `commands` shows a pad's commands on the pad's own keycaps (`[device.keymap]`), the
    /// others on the keymap listed for.
    @Test func commandsShowsAPadsCommandsOnItsOwnKeycaps() throws {
        let dir = EndToEndDirectory()
        let pad = { (layout: String) in dir.write("pad-\(layout).toml", """
            [[device]]
            match = "1234:5678"
            grab = true
            [device.keymap]
            layout = "\(layout)"

            [[command]]
            id = "pad-back"
            keys = "Ctrl+bracketleft"
            devices = ["1234:5678"]

            [[command]]
            id = "back"
            keys = "Ctrl+bracketleft"
            """) }
        let onUs = runTool(["commands", "--config", pad("de"), "--layout", "us"])
        #expect(onUs.status == 0, "\(onUs.stderr)")
        #expect(onUs.lines.contains("  pad-back  Ctrl+bracketleft  (on its keyboard's own keymap: Ctrl+Ü)"), "\(onUs.stdout)")
        #expect(onUs.lines.contains("  back      Ctrl+bracketleft"), "\(onUs.stdout)")
        let json = runTool(["commands", "--config", pad("de"), "--layout", "us", "--format", "json"])
        #expect(json.lines.first?.contains(#""keycaps":"Ctrl+Ü""#) == true, "\(json.stdout)")
        // The pad on us, listed for de: the pad's command as written, the other as Ctrl+Ü.
        let onDe = runTool(["commands", "--config", pad("us"), "--layout", "de"])
        #expect(onDe.lines.contains("  pad-back  Ctrl+bracketleft"), "\(onDe.stdout)")
        #expect(onDe.lines.contains("  back      Ctrl+bracketleft  (on this keymap: Ctrl+Ü)"), "\(onDe.stdout)")
    }
}
