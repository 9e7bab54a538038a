import KbdTOML
import KbdSystem
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdCommands
import KbdPipeline
import KbdConfig
import KbdDaemon

/// Paths of test fixtures, found next to this source file (no Foundation bundle needed).
enum Fixtures {
    static let root: String = {
        let file = #filePath
        let dir = file.split(separator: "/", omittingEmptySubsequences: false).dropLast(2).joined(separator: "/")
        return dir + "/Fixtures"
    }()

    static func recording(_ name: String) -> String { root + "/recordings/" + name }
    static func config(_ name: String) -> String { root + "/configs/" + name }

    /// Every recording fixture's file name.
    static let recordingNames: [String] = [
        "cros-autotest--emulated-keyboard.prop.evemu",
        "cros-autotest--inbox-input-latency-typing.events-only.evemu",
        "cros-autotest--keyboard_b+a+d+enter.events-only.evemu",
        "cros-autotest--keyboard_ctrl+alt+f1.events-only.evemu",
        "cros-autotest--keyboard_ctrl+shift+c.events-only.evemu",
        "cros-autotest--keyboard_ctrl+shift+j.events-only.evemu",
        "cros-autotest--keyboard_ctrl+shift+q.events-only.evemu",
        "cros-autotest--keyboard_ctrl+shift+y.events-only.evemu",
        "cros-autotest--keyboard_f12.events-only.evemu",
        "cros-autotest--keyboard_search+f2.events-only.evemu",
        "cros-autotest--keyboard_search+up.events-only.evemu",
        "cros-autotest--samsung-usb-keyboard.prop.evemu",
        "cros-autotest--searchkey-tabs-enter.events-only.evemu",
        "evemu-devices--lenovo-tp-compact-usb-kbd.keyboard.evemu",
        "evemu-devices--lenovo-tp-compact-usb-kbd.trackpoint.desc.evemu",
        "evemu-devices--logitech-k400-plus.evemu",
        "evemu-devices--logitech-ultrathin-touch-mouse.evemu",
        "evemu-devices--ms-surface-type-cover.evemu",
        "evemu-devices--plantronics-audio648-headset.buttons.events-only.evemu",
        "evemu-devices--plantronics-audio648-headset.desc.evemu",
        "evemu-devices--razer-blackwidow-2013.keyboard.desc.evemu",
        "evemu-devices--wacom-cintiq-12wx-pad.buttons-left.evemu",
        "cros-autotest--inbox-input-latency-typing.with-prop.evemu",
        "cros-autotest--searchkey-tabs-enter.with-prop.evemu",
        "umockdev--usbkbd.derived.events-only.evemu",
        "cros-autotest--keyboard_alt+shift+i.events-only.evemu",
        "cros-autotest--keyboard_shift+tab.events-only.evemu",
    ]
}

/// Compiles keymaps once per set of names (compiling takes milliseconds; tests make many).
enum Keymaps {
    static func make(_ layout: String, variant: String = "", options: String = "") throws -> XkbKeymap {
        try XkbKeymap(context: try XkbContext(), names: KeymapNames(rules: "evdev", model: "pc105", layout: layout, variant: variant, options: options))
    }
}

/// A step of a typed key sequence for table-driven tests.
enum Stroke: Sendable, CustomStringConvertible {
    case down(String)
    case up(String)
    case repeated(String)
    /// Down then up.
    case tap(String)
    /// Let time pass (milliseconds).
    case wait(Int)

    var description: String {
        switch self {
        case .down(let k): return "+\(k)"
        case .up(let k): return "-\(k)"
        case .repeated(let k): return "~\(k)"
        case .tap(let k): return k
        case .wait(let ms): return "wait \(ms)ms"
        }
    }
}

/// Drives a `Pipeline` with named keys, one device, 10 ms between events.
final class TestKeyboard {
    let pipeline: Pipeline
    private(set) var time = EventTime(seconds: 100, microseconds: 0)
    let device = DeviceID(0)
    private(set) var events: [PipelineEvent] = []

    init(layout: String = "us", variant: String = "", options: String = "", config: String? = nil,
         scopes: [String] = [], textInputActive: Bool = false, emitKeys: Bool = true, compose: ComposeSource = .none) throws {
        let keymap = try Keymaps.make(layout, variant: variant, options: options)
        let table = try config.map { try ConfigLoader.parse($0, path: "test.toml").table } ?? CommandTable(commands: [])
        pipeline = try Pipeline(keymap: keymap, table: table, scopes: scopes, textInputActive: textInputActive,
                                options: Pipeline.Options(emitKeys: emitKeys, compose: compose, presenceDebounceMilliseconds: 0))
        pipeline.process(.attached(device, .genericKeyboard(name: "test"), time: time), into: &events)
    }

    func send(_ code: String, _ value: Int32) {
        time = time.adding(milliseconds: 10)
        guard let c = EventCodeNames.keyCode(named: code.hasPrefix("KEY_") ? code : "KEY_" + code.uppercased()) else {
            fatalError("unknown key \(code)")
        }
        pipeline.process(.input(device, InputEvent(time: time, type: EventType.key, code: c, value: value)), into: &events)
        pipeline.process(.input(device, InputEvent(time: time, type: EventType.syn, code: SynCode.report, value: 0)), into: &events)
    }

    func type(_ strokes: [Stroke]) {
        for s in strokes {
            switch s {
            case .down(let k): send(k, 1)
            case .up(let k): send(k, 0)
            case .repeated(let k): send(k, 2)
            case .tap(let k): send(k, 1); send(k, 0)
            case .wait(let ms): time = time.adding(milliseconds: ms)
            }
        }
    }

    func detach() {
        time = time.adding(milliseconds: 10)
        pipeline.process(.detached(device, time: time), into: &events)
    }

    var commandIDs: [String] { events.compactMap { if case .command(_, _, let c, _, _) = $0 { return c.id } else { return nil } } }
    var chords: [String] { events.compactMap { if case .chord(_, _, let c) = $0 { return c } else { return nil } } }
    var keys: [KeyEvent] { events.compactMap { if case .key(let k, _) = $0 { return k } else { return nil } } }
    var presses: [KeyEvent] { keys.filter { $0.state == .press } }
}
