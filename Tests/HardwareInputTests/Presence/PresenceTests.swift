import Testing
import KbdJSON
import KbdTOML
import KbdSystem
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdRecording
import KbdEvdev
import KbdCommands
import KbdPipeline
import KbdConfig
import KbdControl
import KbdProcess
import KbdDaemon
import KbdTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Real device descriptions for presence: a ThinkPad X220t's built-in AT keyboard (i8042),
/// an HP laptop's WMI hotkeys (SW_TABLET_MODE, recorded reading 1), systemd's test lid
/// switch, and a ThinkPad USB keyboard (see Fixtures/recordings/switches/PROVENANCE.md).
enum SwitchFixtures {
    static let at = "switches/xorg-integration-tests--at-translated-set-2-keyboard.x220t.desc.evemu"
    static let hpWMI = "switches/evemu-devices--hp-wmi-hotkeys.desc.evemu"
    static let lid = "switches/systemd--test-35-login.fake-lid-switch.extracted.evemu"
    static let usb = "evemu-devices--lenovo-tp-compact-usb-kbd.keyboard.evemu"

    static func description(_ name: String) throws -> DeviceDescription {
        try #require(try EvemuReader(path: Fixtures.recording(name)).description)
    }

    /// The header lines of a fixture (no events), to append events to.
    static func header(_ name: String) throws -> String {
        let bytes = try readFile(path: Fixtures.recording(name), limit: 1 << 20, trust: .any)
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("E:") }.joined(separator: "\n")
    }

    /// A temporary copy of a real description with synthetic events appended
    /// (`(seconds, type, code, value)`; a SYN_REPORT follows each).
    static func withEvents(_ name: String, _ events: [(Double, UInt16, UInt16, Int32)], in dir: String) throws -> String {
        var text = try header(name)
        if !text.hasSuffix("\n") { text += "\n" }
        for (t, type, code, value) in events {
            let us = Int64((t * 1_000_000).rounded())
            let time = "\(us / 1_000_000)." + String(String(us % 1_000_000).reversed()).padding(6).reversed()
            text += "E: \(time) \(hex4(type)) \(hex4(code)) \(value)\n"
            text += "E: \(time) 0000 0000 0\n"
        }
        let path = dir + "/" + (name.split(separator: "/").last.map(String.init) ?? name)
        let out = try FileOutput.create(path: path)
        out.write(text)
        try out.flush()
        return path
    }

    static func hex4(_ v: UInt16) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 4 - s.count) + s
    }

    static func temporaryDirectory() -> String {
        var template = Array("/tmp/kbd-presence-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }
}

private extension String {
    /// Right-pads with zeros to `n` characters (the reversed microseconds).
    func padding(_ n: Int) -> String { self + String(repeating: "0", count: max(0, n - count)) }
}

@Suite struct IntegrationTests {
    struct Case: Sendable, CustomStringConvertible {
        var fixture: String
        var bus: UInt16? = nil
        var udev: KeyboardIntegration? = nil
        var filter = DeviceFilter()
        var keyboard: Bool
        var isSwitch: Bool = false
        var integration: KeyboardIntegration
        var description: String { "\(fixture) bus=\(bus.map { String($0) } ?? "-") udev=\(udev?.rawValue ?? "-")" }
    }

    static let cases: [Case] = [
        Case(fixture: SwitchFixtures.at, keyboard: true, integration: .internal),
        Case(fixture: SwitchFixtures.usb, keyboard: true, integration: .external),
        // A Bluetooth keyboard: the same real description with the bus field rewritten (none was found recorded).
        Case(fixture: SwitchFixtures.usb, bus: BusType.bluetooth, keyboard: true, integration: .external),
        Case(fixture: SwitchFixtures.usb, bus: BusType.host, keyboard: true, integration: .internal),
        // udev's ID_INTEGRATION wins over the bus; the config wins over both.
        Case(fixture: SwitchFixtures.usb, udev: .internal, keyboard: true, integration: .internal),
        Case(fixture: SwitchFixtures.at, udev: .external, keyboard: true, integration: .external),
        Case(fixture: SwitchFixtures.usb, udev: .external, filter: DeviceFilter(internal: ["17ef:6047"]), keyboard: true, integration: .internal),
        Case(fixture: SwitchFixtures.at, filter: DeviceFilter(external: ["AT Translated Set 2 keyboard"]), keyboard: true, integration: .external),
        // Switch devices are never keyboards, whatever keys they carry.
        Case(fixture: SwitchFixtures.hpWMI, keyboard: false, isSwitch: true, integration: .external),
        Case(fixture: SwitchFixtures.lid, keyboard: false, isSwitch: true, integration: .external),
        Case(fixture: SwitchFixtures.lid, filter: DeviceFilter(include: ["Fake Lid Switch"]), keyboard: false, isSwitch: true, integration: .external),
        // Excluded by the config: ignored altogether, switch or not.
        Case(fixture: SwitchFixtures.hpWMI, filter: DeviceFilter(exclude: ["HP WMI hotkeys"]), keyboard: false, integration: .external),
    ]

    @Test(arguments: cases)
    func verdict(_ c: Case) throws {
        var d = try SwitchFixtures.description(c.fixture)
        if let bus = c.bus { d.id.bustype = bus }
        d.udevIntegration = c.udev
        let v = KeyboardClassifier.classify(d, filter: c.filter)
        #expect(v.isKeyboard == c.keyboard)
        #expect(v.isSwitch == c.isSwitch)
        if c.keyboard { #expect(v.integration == c.integration) }
    }

    @Test func theHPDescriptionCarriesItsRecordedSwitchStates() throws {
        let d = try SwitchFixtures.description(SwitchFixtures.hpWMI)
        #expect(d.switchStates == [SwitchCode.tabletMode: 1, 0x05: 1])
        #expect(KeyboardClassifier.classify(d).description == "switch: switch device (SW_TABLET_MODE)")
    }

    @Test func udevDatabaseFilesAreRead() throws {
        // The layout of /run/udev/data/c13:64 as systemd 252 writes it.
        let text = "I:1234567\nE:ID_INPUT=1\nE:ID_INPUT_KEY=1\nE:ID_INPUT_KEYBOARD=1\nE:ID_BUS=usb\nE:ID_INTEGRATION=external\nG:seat\nQ:seat\nV:1\n"
        #expect(UdevDatabase.integration(in: text) == .external)
        #expect(UdevDatabase.integration(in: "E:ID_INTEGRATION=internal\n") == .internal)
        #expect(UdevDatabase.integration(in: "E:ID_INPUT=1\n") == nil)
        #expect(UdevDatabase.integration(in: "E:ID_INTEGRATION=sideways\n") == nil)
        // makedev(13, 64) and a minor above 255 (makedev(13, 1100)).
        #expect(UdevDatabase(directory: "/run/udev/data").path(device: 13 << 8 | 64) == "/run/udev/data/c13:64")
        let dev: UInt64 = (13 << 8) | (1100 & 0xff) | ((1100 & ~0xff) << 12)
        #expect(UdevDatabase(directory: "/d").path(device: dev) == "/d/c13:1100")
    }
}

@Suite struct PresencePolicyTests {
    enum Step: Sendable {
        case keyboard(Int, KeyboardIntegration)
        case unplug(Int)
        case switches(Int, tablet: Int32, lid: Int32)
        case sw(Int, UInt16, Int32)
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var policy: PresencePolicy
        var steps: [Step]
        var present: Bool
        var reason: PresenceReason
        var description: String { "\(name) (\(policy.rawValue))" }
    }

    static let cases: [Case] = [
        Case(name: "no keyboard", policy: .auto, steps: [], present: false, reason: .noKeyboard),
        Case(name: "internal keyboard only", policy: .auto, steps: [.keyboard(1, .internal)], present: true, reason: .internalKeyboard),
        Case(name: "tablet mode on with only the internal keyboard", policy: .auto,
             steps: [.keyboard(1, .internal), .switches(9, tablet: 1, lid: 0)], present: false, reason: .tabletMode),
        Case(name: "a USB keyboard plugged in tablet mode", policy: .auto,
             steps: [.keyboard(1, .internal), .switches(9, tablet: 1, lid: 0), .keyboard(2, .external)], present: true, reason: .externalKeyboard),
        Case(name: "lid closed with an external keyboard", policy: .auto,
             steps: [.keyboard(1, .internal), .keyboard(2, .external), .switches(9, tablet: 0, lid: 1)], present: true, reason: .externalKeyboard),
        Case(name: "lid closed with only the internal keyboard", policy: .auto,
             steps: [.keyboard(1, .internal), .switches(9, tablet: 0, lid: 1)], present: false, reason: .lidClosed),
        Case(name: "lid opened again", policy: .auto,
             steps: [.keyboard(1, .internal), .switches(9, tablet: 0, lid: 1), .sw(9, SwitchCode.lid, 0)], present: true, reason: .internalKeyboard),
        Case(name: "the external keyboard unplugged in tablet mode", policy: .auto,
             steps: [.keyboard(1, .internal), .keyboard(2, .external), .switches(9, tablet: 1, lid: 0), .unplug(2)], present: false, reason: .tabletMode),
        Case(name: "the switch device removed", policy: .auto,
             steps: [.keyboard(1, .internal), .switches(9, tablet: 1, lid: 0), .unplug(9)], present: true, reason: .internalKeyboard),
        Case(name: "a second switch device still reads tablet mode", policy: .auto,
             steps: [.keyboard(1, .internal), .switches(8, tablet: 1, lid: 0), .switches(9, tablet: 0, lid: 0)], present: false, reason: .tabletMode),
        Case(name: "internal keyboard only", policy: .externalOnly, steps: [.keyboard(1, .internal)], present: false, reason: .noExternalKeyboard),
        Case(name: "external keyboard", policy: .externalOnly, steps: [.keyboard(1, .internal), .keyboard(2, .external)], present: true, reason: .externalKeyboard),
        Case(name: "tablet mode ignored", policy: .anyKeyboard,
             steps: [.keyboard(1, .internal), .switches(9, tablet: 1, lid: 1)], present: true, reason: .internalKeyboard),
    ]

    /// Each step 100 ms apart, with no debounce and with the default one (let run out at the end):
    /// both end in the same state.
    @Test(arguments: cases, [0, 500])
    func finalState(_ c: Case, debounce: Int) {
        var p = KeyboardPresence(debounceMilliseconds: debounce, policy: c.policy)
        var t = EventTime(microseconds: 0)
        for step in c.steps {
            t = t.adding(milliseconds: 100)
            _ = p.expire(at: t)
            switch step {
            case .keyboard(let id, let integration): _ = p.attach(DeviceID(id), integration: integration, at: t)
            case .unplug(let id): _ = p.detach(DeviceID(id), at: t)
            case .switches(let id, let tablet, let lid): _ = p.setSwitches(DeviceID(id), [SwitchCode.tabletMode: tablet, SwitchCode.lid: lid], at: t)
            case .sw(let id, let code, let value): _ = p.setSwitch(DeviceID(id), code: code, value: value, at: t)
            }
        }
        _ = p.expire(at: t.adding(milliseconds: 10_000))
        #expect(p.reported == c.present)
        #expect(p.reason == c.reason)
        #expect(p.target.present == c.present)
    }

    @Test func goingAbsentIsDebouncedAndABounceIsNotReported() {
        var p = KeyboardPresence(debounceMilliseconds: 500)
        let t0 = EventTime(microseconds: 1_000_000)
        #expect(p.attach(DeviceID(1), integration: .internal, at: t0)! == (true, .internalKeyboard))
        _ = p.setSwitches(DeviceID(9), [:], at: t0)
        // The hinge passes tablet mode for 200 ms: nothing reported.
        #expect(p.setSwitch(DeviceID(9), code: SwitchCode.tabletMode, value: 1, at: t0.adding(milliseconds: 100)) == nil)
        #expect(p.reason == .internalKeyboard)
        #expect(p.setSwitch(DeviceID(9), code: SwitchCode.tabletMode, value: 0, at: t0.adding(milliseconds: 300)) == nil)
        #expect(p.nextDeadline == nil)
        #expect(p.expire(at: t0.adding(milliseconds: 2000)) == nil)
        #expect(p.reported)
        // Folded for good: false 500 ms after the switch, with the reason.
        _ = p.setSwitch(DeviceID(9), code: SwitchCode.tabletMode, value: 1, at: t0.adding(milliseconds: 3000))
        #expect(p.nextDeadline == t0.adding(milliseconds: 3500))
        let done = p.expire(at: t0.adding(milliseconds: 3600))
        #expect(done?.0 == t0.adding(milliseconds: 3500))
        #expect(done?.1 == .tabletMode)
        #expect(!p.reported)
        // Events of a code presence does not read, or of a device that is not a switch, change nothing.
        #expect(p.setSwitch(DeviceID(9), code: 0x05, value: 1, at: t0.adding(milliseconds: 4000)) == nil)
        #expect(p.setSwitch(DeviceID(1), code: SwitchCode.tabletMode, value: 0, at: t0.adding(milliseconds: 4000)) == nil)
        #expect(!p.reported)
    }
}

/// Several real descriptions replayed as one merged run (`kbd-commandd replay A B C D`):
/// the laptop's AT keyboard, its tablet-mode switch (the HP description reads tablet mode 1),
/// a USB keyboard plugged for a while, and a lid switch. Events are synthetic (appended to
/// temporary copies); the descriptions are real.
@Suite struct PresenceReplayTests {
    static let ctrl: UInt16 = 29, s: UInt16 = 31, a: UInt16 = 30
    static let key = EventType.key, sw = EventType.sw

    static func replay(policy: PresencePolicy = .auto) throws -> [String] {
        let dir = SwitchFixtures.temporaryDirectory()
        let at = try SwitchFixtures.withEvents(SwitchFixtures.at, [
            (1.0, key, a, 1), (1.05, key, a, 0),
            // Shortcuts keep working in tablet mode: presence is about the on-screen keyboard.
            (2.7, key, ctrl, 1), (2.72, key, s, 1), (2.74, key, s, 0), (2.76, key, ctrl, 0),
            (9.0, key, a, 1), (9.05, key, a, 0),
        ], in: dir)
        let hp = try SwitchFixtures.withEvents(SwitchFixtures.hpWMI, [
            (2.0, EventType.msc, 4, 0xe0), (5.0, sw, SwitchCode.tabletMode, 0), (9.6, EventType.msc, 4, 0xe0),
        ], in: dir)
        let usb = try SwitchFixtures.withEvents(SwitchFixtures.usb, [(3.0, key, a, 1), (3.05, key, a, 0), (4.0, key, a, 1), (4.05, key, a, 0)], in: dir)
        let lid = try SwitchFixtures.withEvents(SwitchFixtures.lid, [(6.0, sw, SwitchCode.lid, 1), (7.0, sw, SwitchCode.lid, 0)], in: dir)
        let config = try ConfigLoader.parse("""
            [settings]
            presence = "\(policy.rawValue)"
            [[command]]
            id = "save"
            keys = "Ctrl+S"
            """, path: "presence.toml")
        let pipeline = try Pipeline(keymap: try Keymaps.make("us"), table: config.table,
                                    options: Pipeline.Options(presencePolicy: config.presence))
        let source = try RecordingSource(paths: [at, hp, usb, lid])
        var out: [PipelineEvent] = []
        while let e = try source.next() { pipeline.process(e, into: &out) }
        pipeline.finish(into: &out)
        return out.filter { [.attach, .presence, .command].contains($0.eventKind) }.map { EventFormatter.json($0) }
    }

    @Test func tabletModeLidAndAUSBKeyboard() throws {
        let lines = try Self.replay()
        #expect(lines == [
            #"{"event":"attach","time":1.000000,"device":"AT Translated Set 2 keyboard","keyboard":true,"integration":"internal","integration_reason":"bus i8042"}"#,
            #"{"event":"presence","time":1.000000,"hardware_keyboard":true,"reason":"internal keyboard"}"#,
            #"{"event":"attach","time":2.000000,"device":"HP WMI hotkeys","keyboard":false}"#,
            #"{"event":"presence","time":2.500000,"hardware_keyboard":false,"reason":"tablet mode"}"#,
            #"{"event":"command","time":2.720000,"id":"save","title":"save","scope":"global","chord":"Ctrl+S"}"#,
            #"{"event":"attach","time":3.000000,"device":"Lenovo ThinkPad Compact USB Keyboard with TrackPoint","keyboard":true,"integration":"external","integration_reason":"bus USB"}"#,
            #"{"event":"presence","time":3.000000,"hardware_keyboard":true,"reason":"external keyboard"}"#,
            #"{"event":"presence","time":4.550000,"hardware_keyboard":false,"reason":"tablet mode"}"#,
            #"{"event":"presence","time":5.000000,"hardware_keyboard":true,"reason":"internal keyboard"}"#,
            #"{"event":"attach","time":6.000000,"device":"Fake Lid Switch","keyboard":false}"#,
            #"{"event":"presence","time":6.500000,"hardware_keyboard":false,"reason":"lid closed"}"#,
            #"{"event":"presence","time":7.000000,"hardware_keyboard":true,"reason":"internal keyboard"}"#,
            #"{"event":"presence","time":9.550000,"hardware_keyboard":false,"reason":"no keyboard"}"#,
        ])
    }

    @Test func anyKeyboardIgnoresTheSwitches() throws {
        let presence = try Self.replay(policy: .anyKeyboard).filter { $0.contains("\"presence\"") }
        #expect(presence == [
            #"{"event":"presence","time":1.000000,"hardware_keyboard":true,"reason":"internal keyboard"}"#,
            #"{"event":"presence","time":9.550000,"hardware_keyboard":false,"reason":"no keyboard"}"#,
        ])
    }

    @Test func externalOnlyIgnoresTheBuiltInKeyboard() throws {
        let presence = try Self.replay(policy: .externalOnly).filter { $0.contains("\"presence\"") }
        #expect(presence == [
            #"{"event":"presence","time":3.000000,"hardware_keyboard":true,"reason":"external keyboard"}"#,
            #"{"event":"presence","time":4.550000,"hardware_keyboard":false,"reason":"no external keyboard"}"#,
        ])
    }
}

@Suite(.serialized) struct PresenceDaemonTests {
    /// A tablet-mode change the kernel dropped (SYN_DROPPED) is picked up from the
    /// device's state after the resync, and switch devices stay open while other
    /// non-keyboards are closed.
    @Test func aSwitchChangeLostInSynDroppedIsCorrectAfterTheResync() throws {
        let h = try DaemonHarness()
        h.source.plug("/dev/input/event2", try SwitchFixtures.description(SwitchFixtures.at))
        var hp = try SwitchFixtures.description(SwitchFixtures.hpWMI)
        hp.switchStates = [SwitchCode.tabletMode: 0]
        let sw = h.source.plug("/dev/input/event5", hp)
        h.pump()
        #expect(h.daemon.keyboardCount == 1)
        #expect(h.daemon.deviceList().map { $0.id != nil } == [true, true])
        #expect(h.daemon.hardwareKeyboardPresent)
        #expect(h.daemon.presenceReason == .internalKeyboard)
        // Folded: the change to 1 is lost in the drop; only the resync tells.
        h.clock.advance(ms: 10)
        sw.dropEvents(keysDown: [], switches: [SwitchCode.tabletMode: 1])
        h.pump()
        #expect(h.daemon.presenceReason == .internalKeyboard)  // debounced
        h.clock.advance(ms: 501)
        h.pump()
        #expect(!h.daemon.hardwareKeyboardPresent)
        #expect(h.daemon.presenceReason == .tabletMode)
        #expect(h.logs.all.contains("info hardware keyboard absent (tablet mode)"))
        // Unfolded with an event: present again at once.
        h.clock.advance(ms: 10)
        sw.setSwitch(SwitchCode.tabletMode, 0, at: h.clock.now)
        h.pump()
        #expect(h.daemon.hardwareKeyboardPresent)
        #expect(h.daemon.presenceReason == .internalKeyboard)
        #expect(h.logs.all.contains("info switch attached: /dev/input/event5 \"HP WMI hotkeys\" (switch device (SW_TABLET_MODE))"))
    }

    @Test func theDeviceListingSaysIntegrationAndSwitch() throws {
        let h = try DaemonHarness(devices: [("/dev/input/event2", try SwitchFixtures.description(SwitchFixtures.at)),
                                            ("/dev/input/event3", try SwitchFixtures.description(SwitchFixtures.usb)),
                                            ("/dev/input/event5", try SwitchFixtures.description(SwitchFixtures.lid))])
        let rows = h.daemon.deviceList().map { $0.jsonValue.serialized() }
        #expect(rows.count == 3)
        #expect(rows[0].contains(#""keyboard":true,"reason":"has KEY_ESC…KEY_S","integration":"internal""#))
        #expect(rows[1].contains(#""integration":"external""#))
        #expect(rows[2].contains(#""keyboard":false,"reason":"switch device (SW_LID)","switch":true"#))
        #expect(h.logs.all.contains { $0.hasPrefix("info ready: ") && $0.hasSuffix(" commands, 2 keyboards, 1 switches") })
    }
}

@Suite struct PresenceConfigTests {
    @Test func presenceAndIntegrationKeysAreRead() throws {
        let config = try ConfigLoader.parse("""
            [settings]
            presence = "external-only"
            [devices]
            internal = ["Dell KB216 Wired Keyboard", "0001:0001"]
            external = ["AT Translated Set 2 keyboard"]
            """, path: "p.toml")
        #expect(config.presence == .externalOnly)
        #expect(config.devices.internal == ["Dell KB216 Wired Keyboard", "0001:0001"])
        #expect(config.devices.external == ["AT Translated Set 2 keyboard"])
        #expect(ConfigLoader.parseOrNil("").map(\.presence) == .auto)
    }

    @Test(arguments: [
        ("[settings]\npresence = \"tablet\"", "p.toml:2: settings.presence: expected one of \"auto\", \"external-only\", \"any-keyboard\""),
        ("[devices]\ninternal = \"AT keyboard\"", "p.toml:2: devices.internal: expected an array of device names or \"vendor:product\" ids"),
        ("[devices]\nbuiltin = []", "p.toml:2: unknown key 'devices.builtin'; expected include, exclude, internal, external, virtual or grab"),
    ])
    func badValuesNameTheLine(_ text: String, _ message: String) {
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(text, path: "p.toml") }
        do { _ = try ConfigLoader.parse(text, path: "p.toml") } catch { #expect(error.description.contains(message), "\(error.description)") }
    }
}

private extension ConfigLoader {
    static func parseOrNil(_ text: String) -> Config? { try? parse(text, path: "p.toml") }
}

@Suite(.serialized) struct PresenceAtStartTests {
    /// A laptop whose service starts in tablet mode: absent at once, with no flap through
    /// present while the devices are opened one by one (the keyboard's node sorts first).
    @Test func startingInTabletModeIsAbsentAtOnce() throws {
        var hp = try SwitchFixtures.description(SwitchFixtures.hpWMI)
        hp.switchStates = [SwitchCode.tabletMode: 1]
        let h = try DaemonHarness(devices: [("/dev/input/event2", try SwitchFixtures.description(SwitchFixtures.at)),
                                            ("/dev/input/event5", hp)])
        #expect(!h.daemon.hardwareKeyboardPresent)
        #expect(h.daemon.presenceReason == .tabletMode)
        let presence = h.logs.all.filter { $0.contains("hardware keyboard") }
        #expect(presence == ["info hardware keyboard present (internal keyboard)", "info hardware keyboard absent (tablet mode)"])
        let ready = try #require(h.logs.all.firstIndex { $0.hasPrefix("info ready: ") })
        #expect(h.logs.all.firstIndex(of: "info hardware keyboard absent (tablet mode)")! < ready)
    }
}
