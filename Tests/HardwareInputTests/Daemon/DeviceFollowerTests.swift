import HardwareInput
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 33 (7c): `kbd-commandd monitor` follows every keyboard, those plugged in after it
/// started too, through the source's own hotplug (the live source is the service's
/// EvdevDeviceSource); it scanned /dev/input once before.
@Suite(.serialized)
struct DeviceFollowerTests {
    static func keyboards(_ device: any InputDevice) -> Bool { KeyboardClassifier.classify(device.description).isKeyboard }

    @Test func aKeyboardPluggedInLaterIsFollowedAndAMouseIsNot() throws {
        let source = FakeDeviceSource()
        let follower = DeviceFollower(source: source, keep: Self.keyboards)
        #expect(follower.start().isEmpty)
        #expect(follower.watching)
        let keyboard = source.plug("/dev/input/event7", try Descriptions.lenovo)
        source.plug("/dev/input/event8", try Descriptions.mouse)
        var changes = follower.step(timeoutMilliseconds: 1000)
        guard case .attached(let id, let device)? = changes.first else {
            Issue.record("the keyboard plugged in after start was not attached: \(changes)")
            return
        }
        #expect(changes.count == 1)
        #expect(device.path == "/dev/input/event7")
        keyboard.keys([("leftctrl", 1), ("c", 1)], at: EventTime(seconds: 1, microseconds: 0))
        changes = follower.step(timeoutMilliseconds: 1000)
        guard case .input(let from, let events)? = changes.first else {
            Issue.record("no input: \(changes)")
            return
        }
        #expect(from == id && events.filter { $0.type == EventType.key }.map(\.code) == [29, 46])
        source.unplug("/dev/input/event7")
        changes = follower.step(timeoutMilliseconds: 1000)
        guard case .detached(let gone, let path)? = changes.first else {
            Issue.record("no detach: \(changes)")
            return
        }
        #expect(gone == id && path == "/dev/input/event7")
        #expect(follower.devices.isEmpty)
    }

    /// A real recording (examples/recordings/ctrl-alt-f1.evemu) as a device plugged in 100 ms
    /// after start: the monitor's pipeline prints its Ctrl+Alt+F1.
    @Test func aReplayedKeyboardPluggedLaterReachesTheMonitorsPipeline() throws {
        let source = try ReplayDeviceSource(paths: [NewcomerConfigTests.examples + "/recordings/ctrl-alt-f1.evemu"], startDelayMilliseconds: 100)
        let follower = DeviceFollower(source: source, keep: Self.keyboards)
        let pipeline = try Pipeline(keymap: try Keymaps.make("us"), table: try CommandTable(commands: []), options: Pipeline.Options(emitKeys: true))
        #expect(follower.start().isEmpty)  // nothing is plugged in at start
        var chords: [String] = []
        var attached = 0, detached = 0
        var events: [PipelineEvent] = []
        let deadline = monotonicNow().adding(milliseconds: 5000)
        while detached == 0 && monotonicNow() < deadline {
            for change in follower.step(timeoutMilliseconds: 500) {
                switch change {
                case .attached(let id, let device):
                    attached += 1
                    pipeline.process(.attached(id, device.description, verdict: KeyboardClassifier.classify(device.description), time: monotonicNow()), into: &events)
                case .input(let id, let input): for e in input { pipeline.process(.input(id, e), into: &events) }
                case .detached(let id, _):
                    detached += 1
                    pipeline.process(.detached(id, time: monotonicNow()), into: &events)
                default: break
                }
            }
            for case .key(let key, _) in events where key.state == .press && !key.isModifierKey { chords.append(key.chord.description) }
            events.removeAll()
        }
        #expect(attached == 1 && detached == 1)
        #expect(chords == ["Ctrl+Alt+F1"])
    }
}
