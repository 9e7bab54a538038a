import KbdSystem
import KbdCore
import KbdKeymap
import KbdCommands
import KbdPipeline
import KbdConfig
import KbdControl
import Testing

/// The key command's own properties (issue 37): `localize`, `mirror`, `devices` and
/// `[[device]]` grab, on real xkb layouts and through the whole pipeline.
struct CommandPropertiesTests {
    /// Two keyboards with their own ids, driven by evdev key names, 10 ms between events.
    final class TwoKeyboards {
        let pipeline: Pipeline
        var time = EventTime(seconds: 100, microseconds: 0)
        var events: [PipelineEvent] = []
        static let pad = DeviceID(1), board = DeviceID(2)

        init(layout: String = "us", config: String) throws {
            let parsed = try ConfigLoader.parse(config, path: "props.toml")
            pipeline = try Pipeline(keymap: try Keymaps.make(layout), table: parsed.table,
                                    options: Pipeline.Options(deviceFilter: parsed.devices, presenceDebounceMilliseconds: 0,
                                                              deviceKeymaps: parsed.deviceKeymaps))
            var pad = DeviceDescription.genericKeyboard(name: "Acme Macro Pad")
            pad.id = InputID(bustype: BusType.usb, vendor: 0x1234, product: 0x5678, version: 1)
            var board = DeviceDescription.genericKeyboard(name: "Logitech K120")
            board.id = InputID(bustype: BusType.usb, vendor: 0x046d, product: 0xc31c, version: 1)
            pipeline.process(.attached(Self.pad, pad, time: time), into: &events)
            pipeline.process(.attached(Self.board, board, time: time), into: &events)
        }

        func tap(_ keys: [String], on device: DeviceID) {
            for k in keys { send(k, 1, device) }
            for k in keys.reversed() { send(k, 0, device) }
        }

        private func send(_ name: String, _ value: Int32, _ device: DeviceID) {
            time = time.adding(milliseconds: 10)
            let code = EventCodeNames.keyCode(named: "KEY_" + name.uppercased())!
            pipeline.process(.input(device, InputEvent(time: time, type: EventType.key, code: code, value: value)), into: &events)
            pipeline.process(.input(device, InputEvent(time: time, type: EventType.syn, code: SynCode.report, value: 0)), into: &events)
        }

        /// The commands fired since the last call, as `id chord`.
        func fired() -> [String] {
            defer { events.removeAll() }
            return events.compactMap { if case .command(_, _, let c, let chord, _) = $0 { return "\(c.id) \(chord)" } else { return nil } }
        }
    }

    static func command(_ id: String, _ keys: String, _ extra: String = "") -> String {
        "[[command]]\nid = \"\(id)\"\nkeys = \"\(keys)\"\n\(extra)\n"
    }

    // MARK: localize

    @Test func aChordThatNeedsAltGrOnGermanFiresFromTheUSPosition() throws {
        // '[' is AltGr+8 on de; the key at the US '[' types ü there.
        let k = try TwoKeyboards(layout: "de", config: Self.command("back", "Ctrl+bracketleft"))
        k.tap(["leftctrl", "leftbrace"], on: TwoKeyboards.board)
        #expect(k.fired() == ["back Ctrl+bracketleft"])
        // AltGr+8 with Ctrl still types '[' as written (AltGr is consumed by the keysym).
        k.tap(["leftctrl", "rightalt", "8"], on: TwoKeyboards.board)
        #expect(k.fired() == ["back Ctrl+bracketleft"])
    }

    @Test func localizeFalseKeepsTheChordLiteral() throws {
        let k = try TwoKeyboards(layout: "de", config: Self.command("back", "Ctrl+bracketleft", "localize = false"))
        k.tap(["leftctrl", "leftbrace"], on: TwoKeyboards.board)
        #expect(k.fired().isEmpty)
    }

    @Test func aChordTypeableAsWrittenIsNotChanged() throws {
        // z is typeable on de (at the US y): the key at the US z (y on de) does not fire Ctrl+Z.
        let k = try TwoKeyboards(layout: "de", config: Self.command("undo", "Ctrl+Z") + Self.command("ue", "Ctrl+udiaeresis")
                                 + Self.command("back", "Ctrl+bracketleft"))
        k.tap(["leftctrl", "z"], on: TwoKeyboards.board)
        #expect(k.fired().isEmpty)
        k.tap(["leftctrl", "y"], on: TwoKeyboards.board)
        #expect(k.fired() == ["undo Ctrl+Z"])
        // A command on the keycap's own chord wins over the localized one.
        k.tap(["leftctrl", "leftbrace"], on: TwoKeyboards.board)
        #expect(k.fired() == ["ue Ctrl+udiaeresis"])
        // On fr (AZERTY) Ctrl+A fires from the key that types a, never from the US a (q there).
        let f = try TwoKeyboards(layout: "fr", config: Self.command("all", "Ctrl+A"))
        f.tap(["leftctrl", "a"], on: TwoKeyboards.board)
        #expect(f.fired().isEmpty)
        f.tap(["leftctrl", "q"], on: TwoKeyboards.board)
        #expect(f.fired() == ["all Ctrl+A"])
    }

    @Test func theLocalizationFollowsTheDesktopsActiveLayout() throws {
        let k = try TwoKeyboards(layout: "us", config: Self.command("back", "Ctrl+bracketleft"))
        k.tap(["leftctrl", "leftbrace"], on: TwoKeyboards.board)
        #expect(k.fired() == ["back Ctrl+bracketleft"])
        // The desktop says: de, then us,de with de active, then us active.
        try k.pipeline.setKeymap(try Keymaps.make("de"), layout: 0)
        k.tap(["leftctrl", "leftbrace"], on: TwoKeyboards.board)
        #expect(k.fired() == ["back Ctrl+bracketleft"])
        let usde = try Keymaps.make("us,de")
        try k.pipeline.setKeymap(usde, layout: 1)
        #expect(k.pipeline.mapper.localization(of: ChordKey(modifiers: .ctrl, keysym: Keysym(0x5B)))?.keycaps == "Ctrl+Ü")
        k.tap(["leftctrl", "leftbrace"], on: TwoKeyboards.board)
        #expect(k.fired() == ["back Ctrl+bracketleft"])
        try k.pipeline.setKeymap(usde, layout: 0)
        #expect(k.pipeline.mapper.localization(of: ChordKey(modifiers: .ctrl, keysym: Keysym(0x5B))) == nil)
    }

    /// Layouts where `localize` applies: Latin layouts that move or hide US punctuation,
    /// and non-Latin ones; on each, every US key's chord either types as written or fires
    /// from its US position, and a key whose US keysym is typeable never fires it from there.
    static let layouts = ["de", "fr", "ch", "es", "it", "se", "no", "dk", "fi", "pt", "br", "be", "nl", "pl", "cz", "sk", "hu",
                          "tr", "gb", "latam", "ca", "is", "ee", "lt", "lv", "ro", "si", "hr", "ru", "ua", "gr", "il", "ara", "ir", "by",
                          "bg", "mk", "kz", "jp", "kr", "us(dvorak)", "us(colemak)", "de(neo)", "fr(bepo)", "ch(fr)", "ca(multix)"]

    @Test(arguments: layouts)
    func everyUSKeyFiresItsChordWhenItsKeysymIsNotTypeable(_ spec: String) throws {
        let parts = spec.split(separator: "(")
        let layout = String(parts[0]), variant = parts.count > 1 ? String(parts[1].dropLast()) : ""
        let keymap = try XkbKeymap(context: try XkbContext(), names: KeymapNames(rules: "evdev", model: "pc105", layout: layout, variant: variant))
        let us = try Keymaps.make("us")
        let positions = KeyPositions(keymap: keymap, reference: us)
        let codes: [UInt16] = Array(2...13) + Array(16...27) + Array(30...41) + Array(43...53)
        var localized = 0
        for code in codes {
            let usSym = us.levelOneKeysym(code: code, layout: 0)
            let here = keymap.levelOneKeysym(code: code, layout: 0)
            let typeable = keymap.typesPlainly(usSym, layout: 0)
            let mapped = positions.localized(code: code, layout: 0)
            if here.lowercased == usSym.lowercased || typeable {
                #expect(mapped == .noSymbol, "\(spec): \(EventCodeNames.keyName(code)) types \(usSym) as written, so it is not localized")
            } else {
                #expect(mapped == usSym.lowercased, "\(spec): \(EventCodeNames.keyName(code)) should stand in for \(usSym)")
                localized += 1
                // And the pipeline fires it from there, with the keycap shown.
                let mapper = try KeyMapper(keymap: keymap)
                try mapper.attach(DeviceID(0))
                let t = EventTime(seconds: 1, microseconds: 0)
                _ = mapper.handle(InputEvent(time: t, type: EventType.key, code: 29, value: 1), device: DeviceID(0))
                let key = mapper.handle(InputEvent(time: t, type: EventType.key, code: code, value: 1), device: DeviceID(0))
                #expect(key?.localizedChord == ChordKey(modifiers: .ctrl, keysym: usSym), "\(spec): \(EventCodeNames.keyName(code))")
                let shown = mapper.localization(of: ChordKey(modifiers: .ctrl, keysym: usSym))
                #expect(shown?.keycaps == "Ctrl+" + here.keycapName, "\(spec): \(usSym)")
            }
        }
        // These keep the US punctuation at its place (or typeable with Shift): nothing to localize.
        let usPunctuation = ["gb", "pl", "lv", "ro", "jp", "kr", "us(dvorak)", "us(colemak)"]
        #expect(usPunctuation.contains(spec) ? localized == 0 : localized > 0, "\(spec): \(localized) keys localized")
    }

    // MARK: mirror

    static let mirrorTable = command("back", "Ctrl+bracketleft", "mirror = true") + command("forward", "Ctrl+bracketright", "mirror = true")
        + command("word-left", "Alt+Left", "mirror = true") + command("plain", "Ctrl+parenleft")

    @Test func mirroredCommandsSwapTheirPairsWhileARightToLeftLayoutIsActive() throws {
        let k = try TwoKeyboards(layout: "us", config: Self.mirrorTable)
        let usara = try Keymaps.make("us,ara")
        #expect(usara.rightToLeftLayouts == [false, true])
        try k.pipeline.setKeymap(usara, layout: 1)
        k.tap(["leftctrl", "rightbrace"], on: TwoKeyboards.board)
        k.tap(["leftctrl", "leftbrace"], on: TwoKeyboards.board)
        k.tap(["leftalt", "right"], on: TwoKeyboards.board)
        k.tap(["leftalt", "left"], on: TwoKeyboards.board)
        #expect(k.fired() == ["back Ctrl+bracketleft", "forward Ctrl+bracketright", "word-left Alt+Left"])
        // A command without mirror stays literal (ara itself types '(' with Shift+0, the US ')'
        // key); back on the Latin layout, nothing swaps.
        k.tap(["leftctrl", "leftshift", "0"], on: TwoKeyboards.board)
        #expect(k.fired() == ["plain Ctrl+parenleft"])
        try k.pipeline.setKeymap(usara, layout: 0)
        k.tap(["leftctrl", "rightbrace"], on: TwoKeyboards.board)
        k.tap(["leftalt", "left"], on: TwoKeyboards.board)
        #expect(k.fired() == ["forward Ctrl+bracketright", "word-left Alt+Left"])
    }

    /// What the docs say of Arabic alone: ara types '[' with Shift at the US 'f' (and ']'
    /// with Shift at the US 'd'), so `Ctrl+bracketleft` is typeable and not localized: it fires
    /// from Ctrl+Shift and that key; with `mirror = true` it swaps with ']' (ara is right to left).
    @Test func onArabicAloneCtrlBracketleftIsTypedWithShiftNotLocalizedAndMirrored() throws {
        let literal = try TwoKeyboards(layout: "ara", config: Self.command("back", "Ctrl+bracketleft"))
        #expect(literal.pipeline.mapper.localization(of: ChordKey(modifiers: .ctrl, keysym: Keysym(0x5B))) == nil)
        literal.tap(["leftctrl", "leftbrace"], on: TwoKeyboards.board)
        literal.tap(["leftctrl", "leftshift", "f"], on: TwoKeyboards.board)
        #expect(literal.fired() == ["back Ctrl+bracketleft"])
        #expect(Self.shown(literal.pipeline.hudView(pending: nil)) == ["back Ctrl+bracketleft"])
        let mirrored = try TwoKeyboards(layout: "ara", config: Self.command("back", "Ctrl+bracketleft", "mirror = true"))
        mirrored.tap(["leftctrl", "leftshift", "f"], on: TwoKeyboards.board)
        mirrored.tap(["leftctrl", "leftshift", "d"], on: TwoKeyboards.board)
        #expect(mirrored.fired() == ["back Ctrl+bracketleft"])
        #expect(Self.shown(mirrored.pipeline.hudView(pending: nil)) == ["back Ctrl+bracketright"])
        let notes = ConfigLoader.localizationNotes(mirrored.pipeline.table, keymap: try Keymaps.make("ara")).map(\.message)
        #expect(notes.count == 1 && notes.allSatisfy { $0.contains("mirrored: while Arabic (right to left) is active") }, "\(notes)")
        // The same on a pad whose own keymap is Arabic alone, beside a us keyboard.
        let pad = try TwoKeyboards(layout: "us", config: "[[device]]\nmatch = \"1234:5678\"\n[device.keymap]\nlayout = \"ara\"\n\n"
            + Self.command("pad-back", "Ctrl+bracketleft", "devices = [\"1234:5678\"]\nmirror = true") + Self.command("back", "Ctrl+bracketleft"))
        pad.tap(["leftctrl", "leftshift", "f"], on: TwoKeyboards.pad)
        pad.tap(["leftctrl", "leftshift", "d"], on: TwoKeyboards.pad)
        pad.tap(["leftctrl", "leftbrace"], on: TwoKeyboards.board)
        #expect(pad.fired() == ["pad-back Ctrl+bracketleft", "back Ctrl+bracketleft"])
        #expect(Self.shown(pad.pipeline.hudView(pending: nil)) == ["pad-back Ctrl+bracketright", "back Ctrl+bracketleft"])
    }

    @Test func rightToLeftLayoutsAreTheArabicHebrewPersianAndUrduOnes() throws {
        for (layout, rtl) in [("ara", true), ("il", true), ("ir", true), ("pk", true), ("us", false), ("ru", false), ("de", false), ("gr", false)] {
            #expect(try Keymaps.make(layout).rightToLeftLayouts == [rtl], "\(layout)")
        }
    }

    // MARK: devices

    static let deviceTable = command("pad-f1", "F1", "devices = [\"1234:5678\"]") + command("any-f1", "F1")
        + command("k120-f2", "F2", "devices = [\"Logitech*\"]") + command("save", "Ctrl+S")

    @Test func aCommandLimitedToAKeyboardWinsThereOnly() throws {
        let k = try TwoKeyboards(config: Self.deviceTable)
        k.tap(["f1"], on: TwoKeyboards.pad)
        k.tap(["f1"], on: TwoKeyboards.board)
        k.tap(["f2"], on: TwoKeyboards.pad)
        k.tap(["f2"], on: TwoKeyboards.board)
        k.tap(["leftctrl", "s"], on: TwoKeyboards.pad)
        #expect(k.fired() == ["pad-f1 F1", "any-f1 F1", "k120-f2 F2", "save Ctrl+S"])
    }

    @Test func aGrabbedPadRunsOnlyItsOwnCommandsAndDoesNotCountForPresence() throws {
        let grab = "[[device]]\nmatch = \"1234:5678\"\ngrab = true\n\n" + Self.deviceTable
        let k = try TwoKeyboards(config: grab)
        #expect(k.pipeline.presence.reported, "the K120 counts")
        k.tap(["f1"], on: TwoKeyboards.pad)
        k.tap(["leftctrl", "s"], on: TwoKeyboards.pad)
        k.tap(["f1"], on: TwoKeyboards.board)
        #expect(k.fired() == ["pad-f1 F1", "any-f1 F1"])
        // Only the pad attached: no hardware keyboard, unless presence = true says so.
        for (extra, present) in [("", false), ("presence = true\n", true)] {
            let parsed = try ConfigLoader.parse("[[device]]\nmatch = \"Acme*\"\ngrab = true\n\(extra)", path: "p.toml")
            let p = try Pipeline(keymap: try Keymaps.make("us"), table: parsed.table,
                                 options: Pipeline.Options(deviceFilter: parsed.devices, presenceDebounceMilliseconds: 0))
            var pad = DeviceDescription.genericKeyboard(name: "Acme Macro Pad")
            pad.id = InputID(bustype: BusType.usb, vendor: 0x1234, product: 0x5678, version: 1)
            var out: [PipelineEvent] = []
            p.process(.attached(DeviceID(1), pad, time: EventTime(seconds: 1, microseconds: 0)), into: &out)
            #expect(p.presence.reported == present, "\(extra)")
        }
    }

    @Test func devicePatternsParseIdsAndGlobs() throws {
        let id = InputID(bustype: 3, vendor: 0x046d, product: 0xc52b, version: 0)
        #expect(try DevicePattern(parsing: "046D:C52B").matches(name: "x", id: id))
        #expect(try DevicePattern(parsing: "46d:c52b").matches(name: "x", id: id))
        #expect(try !DevicePattern(parsing: "046d:c52c").matches(name: "x", id: id))
        #expect(try DevicePattern(parsing: "Logitech*Receiver").matches(name: "Logitech USB Receiver", id: id))
        #expect(try DevicePattern(parsing: "Logi?ech*").matches(name: "Logitech", id: id))
        #expect(try !DevicePattern(parsing: "Logitech").matches(name: "Logitech USB Receiver", id: id))
        #expect(throws: DevicePatternError.self) { try DevicePattern(parsing: "046d:c52bx") }
        #expect(throws: DevicePatternError.self) { try DevicePattern(parsing: "") }
    }

    @Test func configErrorsNameTheFileLineAndWhatWasExpected() throws {
        let bad = """
            [[command]]
            id = "a"
            keys = "F1"
            devices = ["046d:zz2b"]

            [[command]]
            id = "b"
            keys = "F1"
            devices = "046d:c52b"

            [[command]]
            id = "c"
            keys = "F2"
            devices = ["1234:5678"]

            [[command]]
            id = "d"
            keys = "F2"
            devices = ["1234:5678", "Other"]
            localize = "yes"

            [[device]]
            grab = true
            macth = "x"
            """
        #expect {
            try ConfigLoader.parse(bad, path: "bad.toml")
        } throws: { error in
            let text = "\(error)"
            return text.contains("bad.toml:4: devices: '046d:zz2b' is not a vendor:product id")
                && text.contains("bad.toml:9: devices: expected a non-empty array of strings")
                && text.contains("bad.toml:20: localize: expected true or false")
                && text.contains("bad.toml:22: [[device]] needs 'match'")
                && text.contains("bad.toml:24: unknown key 'macth' in [[device]] (did you mean 'match'?)")
        }
        let conflict = Self.command("c", "F2", "devices = [\"1234:5678\"]") + Self.command("d", "F2", "devices = [\"1234:5678\", \"Other\"]")
        #expect {
            try ConfigLoader.parse(conflict, path: "c.toml")
        } throws: { error in
            "\(error)".contains("c.toml:5: 'F2' (d) is already bound to command 'c' at c.toml:1 in scope 'global' for the keyboards \"1234:5678\"")
        }
    }

    // MARK: [device.keymap]

    static let padKeymap = """
        [[device]]
        match = "1234:5678"
        grab = true
        [device.keymap]
        layout = "de"

        """ + command("pad-y", "Ctrl+Y", "devices = [\"1234:5678\"]") + command("pad-z", "Ctrl+Z", "devices = [\"1234:5678\"]")
        + command("y", "Ctrl+Y") + command("z", "Ctrl+Z")

    @Test func aPadWithItsOwnKeymapReadsWithItWhileTheOtherKeyboardKeepsTheServicesOne() throws {
        // The key at the US 'z' types y on de.
        let k = try TwoKeyboards(config: Self.padKeymap)
        k.tap(["leftctrl", "z"], on: TwoKeyboards.pad)
        k.tap(["leftctrl", "z"], on: TwoKeyboards.board)
        #expect(k.fired() == ["pad-y Ctrl+Y", "z Ctrl+Z"])
    }

    @Test func aPadWithItsOwnKeymapDoesNotFollowTheDesktopsKeymap() throws {
        let k = try TwoKeyboards(config: Self.padKeymap)
        // The desktop's keymap (de for all, then us for seat0, then the service's own): the
        // K120 follows it, the pad keeps its de.
        try k.pipeline.setKeymap(try Keymaps.make("de"), layout: 0)
        k.tap(["leftctrl", "z"], on: TwoKeyboards.board)
        k.tap(["leftctrl", "z"], on: TwoKeyboards.pad)
        try k.pipeline.setKeymap(try Keymaps.make("us"), layout: 0, seat: "seat0")
        k.tap(["leftctrl", "z"], on: TwoKeyboards.board)
        k.tap(["leftctrl", "z"], on: TwoKeyboards.pad)
        try k.pipeline.setKeymap(nil, layout: nil)
        k.tap(["leftctrl", "z"], on: TwoKeyboards.pad)
        #expect(k.fired() == ["y Ctrl+Y", "pad-y Ctrl+Y", "z Ctrl+Z", "pad-y Ctrl+Y", "pad-y Ctrl+Y"])
    }

    @Test func deviceKeymapsCompileOncePerDescriptionWithTheServicesRulesAndModel() throws {
        let base = KeymapNames(rules: "evdev", model: "pc104", layout: "us", variant: "", options: "ctrl:nocaps")
        #expect(KeymapNames(layout: "de").forDevice(base: base)
            == KeymapNames(rules: "evdev", model: "pc104", layout: "de", variant: "", options: "ctrl:nocaps"))
        #expect(KeymapNames(options: "").forDevice(base: base)
            == KeymapNames(rules: "evdev", model: "pc104", layout: "us", variant: "", options: ""))
    }

    @Test func deviceKeymapErrorsNameTheLineAndTheNearestName() throws {
        let bad = """
            [[device]]
            match = "1234:5678"
            [device.keymap]
            layuot = "de"

            [[device]]
            match = "Acme*"
            [device.keymap]
            layout = "dee"

            [[device]]
            match = "Other*"
            keymap = "de"
            """
        #expect {
            try ConfigLoader.parse(bad, path: "bad.toml")
        } throws: { error in
            let text = "\(error)"
            return text.contains("bad.toml:4: unknown key 'device.keymap.layuot' (did you mean 'layout'?); expected rules, model, layout, variant or options")
                && text.contains("bad.toml:9: device.keymap.layout: unknown layout 'dee'")
                && text.contains("'de' (German)")
                && text.contains("bad.toml:13: device.keymap: expected a table ([device.keymap])")
        }
        let good = try ConfigLoader.parse(Self.padKeymap, path: "good.toml")
        #expect(good.deviceKeymaps == [KeymapNames(layout: "de")])
        #expect(good.devices.dedicated.first?.location == "good.toml:1")
    }

    @Test func dedicatedDevicesAndTheirKeymapsSurviveTheDropInMerge() throws {
        // The service reads its config with a drop-in folder: [[device]] was lost in the merge.
        let d = ConfigDropIns(prefix: "kbd-device-merge")
        try d.write("config.toml", Self.padKeymap)
        try d.write("config.d/10-more.toml", "[[device]]\nmatch = \"Other*\"\ngrab = true\n")
        let config = try ConfigLoader.load(d.files)
        #expect(config.devices.dedicated.map(\.location) == [d.directory + "/config.toml:1", d.directory + "/config.d/10-more.toml:1"])
        #expect(config.deviceKeymaps == [KeymapNames(layout: "de"), nil])
    }

    // MARK: a pad's commands on its own keycaps

    /// The pad reads with `layout` (`[device.keymap]`), every other keyboard with the service's
    /// keymap: the same chord bound to the pad and to every keyboard.
    static func padBack(_ layout: String) -> String { """
        [[device]]
        match = "1234:5678"
        grab = true
        [device.keymap]
        layout = "\(layout)"

        """ + command("pad-back", "Ctrl+bracketleft", "devices = [\"1234:5678\"]") + command("back", "Ctrl+bracketleft")
    }

    /// `id chord` of each command a HUD view shows.
    static func shown(_ view: Discoverability.View) -> [String] {
        view.groups.flatMap(\.entries).map { "\($0.command.id) \($0.chord)" }
    }

    @Test func aPadsCommandsShowOnThePadsOwnKeycapsInTheHudAndInCommands() throws {
        let k = try TwoKeyboards(layout: "us", config: Self.padBack("de"))
        // The pad's '[' is AltGr+8 on de: its command shows as the key that fires it there.
        #expect(Self.shown(k.pipeline.hudView(pending: nil)) == ["pad-back Ctrl+Ü", "back Ctrl+bracketleft"])
        let listing = CommandListing(table: k.pipeline.table, activeScopes: nil, keycaps: k.pipeline.mapper.keycaps(), pads: k.pipeline.padKeycaps)
        #expect(listing.groups.flatMap(\.entries).map(\.keycaps) == ["Ctrl+Ü", nil])
        #expect(listing.text().contains("pad-back  Ctrl+bracketleft  (on its keyboard's own keymap: Ctrl+Ü)\n"), "\(listing.text())")
        #expect(listing.text().contains("back      Ctrl+bracketleft\n"), "\(listing.text())")
        // And it fires from that key on the pad (what the keycaps promise).
        k.tap(["leftctrl", "leftbrace"], on: TwoKeyboards.pad)
        #expect(k.fired() == ["pad-back Ctrl+bracketleft"])
    }

    @Test func aPadsKeycapsDoNotFollowTheDesktopsKeymap() throws {
        // The pad on us, the desktop on de: the pad's command as written, the others' as Ctrl+Ü.
        let k = try TwoKeyboards(layout: "us", config: Self.padBack("us"))
        try k.pipeline.setKeymap(try Keymaps.make("de"), layout: 0, seat: ActiveSessions.defaultSeat)
        let session = ControlSession()
        _ = session.sessionsChanged(ActiveSessions(available: true, activeUID: [ActiveSessions.defaultSeat: 1000]), problem: nil)
        let view = ControlSession.View(hardwareKeyboard: true, presenceReason: "external keyboard", geometry: nil, systemTable: k.pipeline.table,
                                       allowKeyEvents: false, devices: { [] })
        let alice = ControlSession.Peer(id: 2, uid: 1000, trusted: false)
        session.connected(alice)
        #expect(session.handle(.subscribe([.hud, .toolbar]), from: alice, view: view).reply?.ok == true)
        let hud = session.hudDeliveries(time: .zero, trigger: .hold, view: k.pipeline.hudView(pending: nil), pipeline: k.pipeline)
        guard case .hud(let shown)? = hud.first?.event.payload else {
            Issue.record("no hud for alice: \(hud)")
            return
        }
        #expect(shown.groups.flatMap(\.commands).map { "\($0.id) \($0.chord)" } == ["pad-back Ctrl+bracketleft", "back Ctrl+Ü"])
        guard case .toolbar(let bar)? = session.toolbarDeliveries(time: .zero, pipeline: k.pipeline).first?.event.payload else {
            Issue.record("no toolbar for alice")
            return
        }
        #expect(bar.groups.flatMap(\.commands).map { "\($0.id) \($0.chord)" } == ["pad-back Ctrl+bracketleft", "back Ctrl+Ü"])
    }

    @Test func aCommandOnKeyboardsWithDifferentKeymapsShowsTheActiveKeymapsKeycaps() throws {
        // One scope each: the same chord for the same keyboard twice is refused in one scope.
        let config = try ConfigLoader.parse("""
            [[device]]
            match = ["1234:5678", "Acme*"]
            [device.keymap]
            layout = "de"

            [[device]]
            match = "Other*"
            [device.keymap]
            layout = "de"

            [[device]]
            match = "Plain*"
            [device.keymap]
            layout = "us"

            [[device]]
            match = "Bare*"

            """ + Self.command("one", "Ctrl+bracketleft", "devices = [\"1234:5678\"]\nscope = \"one\"")
                + Self.command("upper", "Ctrl+bracketleft", "devices = [\"1234:5678\", \"Acme*\"]\nscope = \"upper\"")
                + Self.command("alike", "Ctrl+bracketleft", "devices = [\"1234:5678\", \"Other*\"]\nscope = \"alike\"")
                + Self.command("mixed", "Ctrl+bracketleft", "devices = [\"1234:5678\", \"Plain*\"]\nscope = \"mixed\"")
                + Self.command("bare", "Ctrl+bracketleft", "devices = [\"1234:5678\", \"Bare*\"]\nscope = \"bare\"")
                + Self.command("unnamed", "Ctrl+bracketleft", "devices = [\"1234:5678\", \"046d:c31c\"]\nscope = \"unnamed\"")
                + Self.command("all", "Ctrl+bracketleft"), path: "mixed.toml")
        let us = try Keymaps.make("us"), ru = try Keymaps.make("ru")
        let pads = PadKeycaps(dedicated: config.devices.dedicated, names: config.deviceKeymaps, base: us)
        // A pad's own, or its pads' when their keymaps show alike (two on de: Ü); else the active keymap's.
        let onUs = ChordKeycaps(keymap: us, layout: 0, positions: us.keyPositions)
        #expect(config.table.commands.map { pads.shown($0, active: onUs) ?? $0.chordText }
            == ["Ctrl+Ü", "Ctrl+Ü", "Ctrl+Ü", "Ctrl+bracketleft", "Ctrl+bracketleft", "Ctrl+bracketleft", "Ctrl+bracketleft"])
        let onRu = ChordKeycaps(keymap: ru, layout: 0, positions: ru.keyPositions)
        #expect(config.table.commands.map { pads.shown($0, active: onRu) ?? $0.chordText }
            == ["Ctrl+Ü", "Ctrl+Ü", "Ctrl+Ü", "Ctrl+Х", "Ctrl+Х", "Ctrl+Х", "Ctrl+Х"])
        #expect(PadKeycaps(dedicated: config.devices.dedicated, names: [nil, nil, nil, nil], base: us).isEmpty)
    }
}
