import KbdCommands
import KbdSystem
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdRecording
import KbdPipeline
import KbdConfig
import KbdProcess
import KbdDaemon
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's own loop on the real clock, with recordings as its devices (`run --replay`):
/// a keyboard and a tablet pad recorded together attach, the keyboard's chord fires with its
/// due time as the event time, the keyboard detaches after its last event and the pad, never
/// opened as a keyboard, leaves the device list at its end.
struct ReplayDaemonTests {
    @Test func theDaemonRunsOnRecordingsInRealTime() throws {
        let keyboard = Fixtures.recording("evemu-devices--lenovo-tp-compact-usb-kbd.keyboard.evemu")
        let pad = Fixtures.recording("evemu-devices--wacom-cintiq-12wx-pad.buttons-left.evemu")
        let configPath = "/tmp/kbd-replay-daemon-\(getpid()).toml"
        let out = try FileOutput.create(path: configPath)
        out.write("[[command]]\nid = \"copy\"\nkeys = \"Ctrl+C\"\n")
        try out.flush()
        defer { unlink(configPath) }

        let source = try ReplayDeviceSource(paths: [keyboard, pad], startDelayMilliseconds: 20)
        var finished = false
        source.onFinished = { finished = true }
        let logs = LogCollector()
        let daemon = try KeyboardDaemon(
            options: .init(socketPath: nil, presenceDebounceMilliseconds: 100), source: source, logger: logs.makeLogger(),
            load: {
                let config = try ConfigLoader.load(path: configPath)
                return .init(config: config, keymap: try Keymaps.make("us"))
            })
        var events: [PipelineEvent] = []
        daemon.observer = { events.append($0) }
        var dispatched: [(String, EventTime, EventTime)] = []
        daemon.dispatchObserver = { command, eventTime, dispatchTime in dispatched.append((command.id, eventTime, dispatchTime)) }
        var padListed = false
        let deadline = monotonicNow().adding(milliseconds: 10_000)
        while !(finished && !daemon.hardwareKeyboardPresent), monotonicNow() < deadline {
            daemon.runOnce(maxWaitMilliseconds: 1000)
            if daemon.deviceList().contains(where: { $0.path == pad && !$0.verdict!.isKeyboard }) { padListed = true }
        }
        #expect(finished)
        #expect(padListed)
        #expect(daemon.deviceList().isEmpty)  // the pad was removed at its last event
        #expect(events.map(\.kind) == ["attach", "presence", "chord", "command", "detach", "presence"])

        // The chord's event time is when C was due: 1.560031 s after the keyboard's first event
        // (0.000001), the pad's (0.000000) having played 20 ms after the start.
        let attach = try #require(source.schedule(of: 0)?.attach)
        try #require(dispatched.count == 1)
        #expect(dispatched[0].0 == "copy")
        #expect(dispatched[0].1.microseconds == attach.microseconds + 1_560_030)
        #expect(dispatched[0].2.microseconds - dispatched[0].1.microseconds < 250_000)
        #expect(logs.all.contains("info keyboard detached: \(keyboard) \"Lenovo ThinkPad Compact USB Keyboard with TrackPoint\" (device gone)"))
    }
}
