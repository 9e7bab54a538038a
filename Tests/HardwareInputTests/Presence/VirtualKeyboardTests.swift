import Testing
import KbdTOML
import KbdSystem
import KbdCore
import KbdKeymap
import KbdRecording
import KbdEvdev
import KbdPipeline
import KbdConfig
import KbdControl
#if canImport(Glibc)
import Glibc
#endif

/// Issue 26: remappers' virtual keyboards (keyd, kanata, xremap, input-remapper type through a
/// uinput keyboard on behalf of the keyboard they grabbed) route chords but never count for
/// presence.
@Suite struct VirtualKeyboardTests {
    /// The real USB keyboard's description with the name and id of keyd's virtual keyboard
    /// ("keyd virtual keyboard", bus USB 0fac:0ade, as keyd declares it), in a temporary copy:
    /// no recording of keyd's device is published, and its capabilities are a full keyboard's.
    static func keydRecording(_ events: [(Double, UInt16, UInt16, Int32)], in dir: String) throws -> String {
        let real = try SwitchFixtures.withEvents(SwitchFixtures.usb, events, in: dir)
        let bytes = try readFile(path: real, limit: 1 << 20, trust: .any)
        let text = String(decoding: bytes, as: UTF8.self)
            .replacingFirst("N: Lenovo ThinkPad Compact USB Keyboard with TrackPoint", with: "N: keyd virtual keyboard")
            .replacingFirst("I: 0003 17ef 6047 0100", with: "I: 0003 0fac 0ade 0001")
        let path = dir + "/keyd-virtual-keyboard.evemu"
        let out = try FileOutput.create(path: path)
        out.write(text)
        try out.flush()
        return path
    }

    @Test func keydsRecordedKeyboardIsVirtualAndItsDescriptionIsReal() throws {
        let dir = SwitchFixtures.temporaryDirectory()
        let path = try Self.keydRecording([], in: dir)
        let d = try #require(try EvemuReader(path: path).description)
        #expect(d.name == "keyd virtual keyboard")
        #expect(d.id.bustype == BusType.usb)
        let v = KeyboardClassifier.classify(d)
        #expect(v.isKeyboard)
        #expect(v.integration == .virtual)
        #expect(v.integrationReason == "keyd's virtual keyboard")
        #expect(v.description == "keyboard (virtual: keyd's virtual keyboard): has KEY_ESC…KEY_S")
        // The same description under its own name and id is the external keyboard it was.
        #expect(KeyboardClassifier.classify(try SwitchFixtures.description(SwitchFixtures.usb)).integration == .external)
    }

    /// The issue's case on recordings: a 2-in-1 folded into a tablet (its AT keyboard, the HP
    /// WMI switch reading tablet mode) running keyd. Presence stays absent while keyd's keyboard
    /// types, and keyd's chords still fire.
    @Test func keydOnATabletStaysAbsentAndItsChordsFire() throws {
        let dir = SwitchFixtures.temporaryDirectory()
        let key = EventType.key, ctrl: UInt16 = 29, s: UInt16 = 31
        let at = try SwitchFixtures.withEvents(SwitchFixtures.at, [(1.0, EventType.msc, 4, 0x1c), (4.0, EventType.msc, 4, 0x1c)], in: dir)
        let hp = try SwitchFixtures.withEvents(SwitchFixtures.hpWMI, [(1.5, EventType.msc, 4, 0xe0), (4.0, EventType.msc, 4, 0xe0)], in: dir)
        let keyd = try Self.keydRecording([(3.0, key, ctrl, 1), (3.05, key, s, 1), (3.1, key, s, 0), (3.15, key, ctrl, 0)], in: dir)
        let config = try ConfigLoader.parse("""
            [[command]]
            id = "save"
            keys = "Ctrl+S"
            """, path: "virtual.toml")
        let pipeline = try Pipeline(keymap: try Keymaps.make("us"), table: config.table)
        let source = try RecordingSource(paths: [at, hp, keyd])
        var out: [PipelineEvent] = []
        while let e = try source.next() { pipeline.process(e, into: &out) }
        let lines = out.filter { [.attach, .presence, .command].contains($0.eventKind) }.map { EventFormatter.json($0) }
        #expect(lines == [
            #"{"event":"attach","time":1.000000,"device":"AT Translated Set 2 keyboard","keyboard":true,"integration":"internal","integration_reason":"bus i8042"}"#,
            #"{"event":"presence","time":1.000000,"hardware_keyboard":true,"reason":"internal keyboard"}"#,
            #"{"event":"attach","time":1.500000,"device":"HP WMI hotkeys","keyboard":false}"#,
            #"{"event":"presence","time":2.000000,"hardware_keyboard":false,"reason":"tablet mode"}"#,
            #"{"event":"attach","time":3.000000,"device":"keyd virtual keyboard","keyboard":true,"integration":"virtual","integration_reason":"keyd's virtual keyboard"}"#,
            #"{"event":"command","time":3.050000,"id":"save","title":"save","scope":"global","chord":"Ctrl+S"}"#,
        ])
    }

    @Test func virtualKeyboardsNeverCountForPresence() {
        let t = EventTime(seconds: 1, microseconds: 0)
        var p = KeyboardPresence(debounceMilliseconds: 0)
        #expect(p.attach(DeviceID(1), integration: .virtual, at: t) == nil)
        #expect(p.target == (false, .noKeyboard))
        // The grabbed keyboard behind it is still attached, and counts.
        #expect(p.attach(DeviceID(2), integration: .external, at: t)! == (true, .externalKeyboard))
        #expect(p.detach(DeviceID(2), at: t)! == (false, .noKeyboard))
        var any = KeyboardPresence(debounceMilliseconds: 0, policy: .anyKeyboard)
        #expect(any.attach(DeviceID(1), integration: .virtual, at: t) == nil)
        #expect(any.attach(DeviceID(2), integration: .internal, at: t)! == (true, .internalKeyboard))
    }

    static func description(name: String, bus: UInt16, vendor: UInt16 = 1, product: UInt16 = 1, sysfs: String? = nil,
                            udev: KeyboardIntegration? = nil) -> DeviceDescription {
        var d = DeviceDescription.genericKeyboard(name: name)
        d.id = InputID(bustype: bus, vendor: vendor, product: product, version: 1)
        d.sysfsPath = sysfs
        d.udevIntegration = udev
        return d
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var device: DeviceDescription
        var filter = DeviceFilter()
        var integration: KeyboardIntegration
        var reason: String
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "uinput on the USB bus (keyd live)", device: description(name: "keyd virtual keyboard", bus: BusType.usb, vendor: 0x0fac, product: 0x0ade,
                                                                            sysfs: "/devices/virtual/input/input12"),
             integration: .virtual, reason: "uinput device (/devices/virtual/input/input12)"),
        Case(name: "uinput on i8042, any name", device: description(name: "my keyboard", bus: BusType.i8042, sysfs: "/devices/virtual/input/input3"),
             integration: .virtual, reason: "uinput device (/devices/virtual/input/input3)"),
        Case(name: "uhid Bluetooth (BlueZ HoG) is not uinput", device: description(name: "BT Keyboard", bus: BusType.bluetooth,
                                                                                     sysfs: "/devices/virtual/misc/uhid/0005:046D:B342.0001/input/input9"),
             integration: .external, reason: "bus Bluetooth"),
        Case(name: "a real USB keyboard", device: description(name: "USB Keyboard", bus: BusType.usb,
                                                              sysfs: "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:046D:C31C.0001/input/input5"),
             integration: .external, reason: "bus USB"),
        Case(name: "BUS_VIRTUAL", device: description(name: "some keyboard", bus: BusType.virtual), integration: .virtual, reason: "bus virtual"),
        Case(name: "kanata by name", device: description(name: "kanata", bus: BusType.usb), integration: .virtual, reason: "kanata's virtual keyboard"),
        Case(name: "xremap by name", device: description(name: "xremap pid=812", bus: BusType.usb), integration: .virtual, reason: "xremap's virtual keyboard"),
        Case(name: "input-remapper by name", device: description(name: "input-remapper AT Translated Set 2 keyboard forwarded", bus: BusType.i8042),
             integration: .virtual, reason: "input-remapper's virtual keyboard"),
        Case(name: "keyd by id alone", device: description(name: "renamed", bus: BusType.usb, vendor: 0x0fac, product: 0x0ade),
             integration: .virtual, reason: "keyd's virtual keyboard"),
        Case(name: "[devices] virtual by name", device: description(name: "My Remapper", bus: BusType.usb),
             filter: DeviceFilter(virtual: ["My Remapper"]), integration: .virtual, reason: "[devices] virtual in the config"),
        Case(name: "[devices] virtual by id", device: description(name: "x", bus: BusType.i8042, vendor: 0x1234, product: 0x5678),
             filter: DeviceFilter(virtual: ["1234:5678"]), integration: .virtual, reason: "[devices] virtual in the config"),
        Case(name: "[devices] external overrides a remapper", device: description(name: "kanata", bus: BusType.usb, sysfs: "/devices/virtual/input/input4"),
             filter: DeviceFilter(external: ["kanata"]), integration: .external, reason: "[devices] external in the config"),
        Case(name: "udev's ID_INTEGRATION before uinput", device: description(name: "vdev", bus: BusType.usb, sysfs: "/devices/virtual/input/input4", udev: .internal),
             integration: .internal, reason: "udev ID_INTEGRATION=internal"),
    ]

    @Test(arguments: cases) func integrationAndItsReason(_ c: Case) {
        let v = KeyboardClassifier.classify(c.device, filter: c.filter)
        #expect(v.isKeyboard)
        #expect(v.integration == c.integration)
        #expect(v.integrationReason == c.reason)
    }

    @Test func sysfsLinksGiveTheInputDevicePath() throws {
        #expect(SysfsDevice.inputDevicePath(link: "../../devices/virtual/input/input12/event6") == "/devices/virtual/input/input12")
        #expect(SysfsDevice.inputDevicePath(link: "../../devices/platform/i8042/serio0/input/input3/event3") == "/devices/platform/i8042/serio0/input/input3")
        #expect(SysfsDevice.inputDevicePath(link: "../../nowhere/event3") == nil)
        // A sysfs tree of our own: /sys/dev/char/13:70 as the kernel links it for a uinput node.
        let root = SwitchFixtures.temporaryDirectory()
        #expect(mkdir(root + "/dev", 0o755) == 0 && mkdir(root + "/dev/char", 0o755) == 0)
        #expect(symlink("../../devices/virtual/input/input12/event6", root + "/dev/char/13:70") == 0)
        #expect(SysfsDevice(root: root).inputDevicePath(device: 13 << 8 | 70) == "/devices/virtual/input/input12")
        #expect(SysfsDevice(root: root).inputDevicePath(device: 13 << 8 | 71) == nil)
        var d = DeviceDescription.genericKeyboard(name: "keyd virtual keyboard")
        d.sysfsPath = SysfsDevice(root: root).inputDevicePath(device: 13 << 8 | 70)
        #expect(d.isUinput)
    }

    @Test func configNamesVirtualKeyboardsAndDropInsMergeThem() throws {
        let config = try ConfigLoader.parse("""
            [devices]
            virtual = ["My Remapper", "1234:5678"]
            """, path: "v.toml")
        #expect(config.devices.virtual == ["My Remapper", "1234:5678"])
        #expect(throws: ConfigError.self) { try ConfigLoader.parse("[devices]\nvirtual = \"My Remapper\"\n", path: "v.toml") }
        do {
            _ = try ConfigLoader.parse("[devices]\nvirtual = \"My Remapper\"\n", path: "v.toml")
        } catch {
            #expect(error.description == "v.toml:2: devices.virtual: expected an array of device names or \"vendor:product\" ids")
        }
    }
}

private extension String {
    /// The text with the line `target` replaced (the first one).
    func replacingFirst(_ target: String, with replacement: String) -> String {
        var lines = split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if let i = lines.firstIndex(of: target) { lines[i] = replacement }
        return lines.joined(separator: "\n")
    }
}
