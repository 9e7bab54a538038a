import KbdTOML
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdRecording
import KbdEvdev
import KbdCommands
import KbdPipeline
import KbdConfig
import KbdProcess
import KbdTestSupport
import Testing

/// Randomised, seeded, reproducible: random interleavings of presses, releases
/// and repeats on several devices, with SYN_DROPPED frames (recording-style and
/// live-style resyncs) and devices vanishing mid-chord. After every step:
/// - a device that detached holds nothing and nothing leaks into other devices;
/// - after a resync the device holds exactly what the kernel said;
/// - the chord modifiers of each device's xkb state equal those of a state
///   rebuilt from the keys actually down;
/// - no pending sequence outlives its timeout;
/// - every event fed is processed or counted as dropped.
struct StuckKeyPropertyTests {
    /// Keys the generator uses: modifiers (incl. AltGr and a group switch), letters, digits, F-keys, Caps Lock.
    static let codes: [UInt16] = ["LEFTCTRL", "RIGHTCTRL", "LEFTSHIFT", "RIGHTSHIFT", "LEFTALT", "RIGHTALT", "LEFTMETA",
                                  "CAPSLOCK", "A", "S", "C", "X", "Z", "1", "F4", "ENTER", "TAB", "SPACE"]
        .map { EventCodeNames.keyCode(named: "KEY_" + $0)! }

    static let config = """
        [settings]
        sequence_timeout_ms = 300
        [[command]]
        id = "save"
        keys = "Ctrl+S"
        [[command]]
        id = "seq"
        keys = "Ctrl+X Ctrl+C"
        [[command]]
        id = "f4"
        keys = "Alt+F4"
        repeat = true
        """

    static func chordModifiers(afterPressing keys: [UInt16], keymap: XkbKeymap) throws -> ModifierSet {
        let m = try KeyMapper(keymap: keymap)
        try m.attach(DeviceID(0))
        for k in keys { _ = m.handle(InputEvent(time: .zero, type: EventType.key, code: k, value: 1), device: DeviceID(0)) }
        return m.modifiers(DeviceID(0)).intersection(.chordModifiers)
    }

    @Test(arguments: [("us", ""), ("de", ""), ("us,ru", "grp:alt_shift_toggle")])
    func randomInterleavingsNeverLeaveAKeyOrModifierStuck(_ layout: String, _ options: String) throws {
        let keymap = try Keymaps.make(layout, options: options)
        let table = try ConfigLoader.parse(Self.config, path: "p.toml").table
        var totalEvents = 0
        for seed in 0..<1_000 as Range<UInt64> {  // 3 layouts × 1,000 seeds × 60 steps per run
            var rng = SeededRandom(seed: seed &* 7919 &+ 1)
            let pipeline = try Pipeline(keymap: keymap, table: table, options: .init(presenceDebounceMilliseconds: 50))
            var out: [PipelineEvent] = []
            var time = EventTime(seconds: 10, microseconds: 0)
            var attached: Set<Int> = []
            var fed = 0
            for step in 0..<60 {
                time = time.adding(milliseconds: rng.below(120))
                let device = rng.below(3)
                let id = DeviceID(device)
                if !attached.contains(device) {
                    pipeline.process(.attached(id, .genericKeyboard(name: "d\(device)"), time: time), into: &out)
                    attached.insert(device)
                }
                switch rng.below(20) {
                case 0:
                    // Vanish mid-chord.
                    pipeline.process(.detached(id, time: time), into: &out)
                    attached.remove(device)
                    #expect(pipeline.mapper.keysDown(id).isEmpty, "seed \(seed) step \(step): keys left after detach")
                case 1:
                    // A recording's SYN_DROPPED frame: events until SYN_REPORT are dropped, then everything released.
                    for e in [InputEvent(time: time, type: EventType.syn, code: SynCode.dropped, value: 0),
                              InputEvent(time: time, type: EventType.key, code: Self.codes[rng.below(Self.codes.count)], value: 1),
                              InputEvent(time: time, type: EventType.syn, code: SynCode.report, value: 0)] {
                        pipeline.process(.input(id, e), into: &out)
                        fed += 1
                    }
                    #expect(pipeline.mapper.keysDown(id).isEmpty, "seed \(seed) step \(step): keys left after a file resync")
                case 2:
                    // A live resync: the kernel says which keys are down.
                    let down = Set((0..<rng.below(3)).map { _ in Self.codes[rng.below(Self.codes.count)] })
                    pipeline.process(.resynchronized(id, keysDown: down, time: time), into: &out)
                    #expect(Set(pipeline.mapper.keysDown(id)) == down, "seed \(seed) step \(step): resync mismatch")
                default:
                    let code = Self.codes[rng.below(Self.codes.count)]
                    let value = Int32(rng.below(3))  // release, press, repeat — impossible ones included
                    pipeline.process(.input(id, InputEvent(time: time, type: EventType.key, code: code, value: value)), into: &out)
                    pipeline.process(.input(id, InputEvent(time: time, type: EventType.syn, code: SynCode.report, value: 0)), into: &out)
                    fed += 2
                }
                // The xkb state agrees with the keys actually down (chord modifiers; locks and group locks are
                // latched state). With grp:alt_shift_toggle a key's action depends on what was held when it went
                // down (Alt pressed while Shift is held switches the group instead of setting Alt), so there the
                // state is not a function of the keys down; the invariant is then that no modifier outlives its keys.
                for d in attached {
                    let keys = pipeline.mapper.keysDown(DeviceID(d))
                    let actual = pipeline.mapper.modifiers(DeviceID(d)).intersection(.chordModifiers)
                    if options.isEmpty {
                        let rebuilt = try Self.chordModifiers(afterPressing: keys, keymap: keymap)
                        #expect(actual == rebuilt, "seed \(seed) step \(step): device \(d) holds \(keys) but has \(actual), expected \(rebuilt)")
                    } else if keys.isEmpty {
                        #expect(actual.isEmpty, "seed \(seed) step \(step): device \(d) holds no key but has \(actual)")
                    } else {
                        let rebuilt = try Self.chordModifiers(afterPressing: keys, keymap: keymap)
                        #expect(actual.isSubset(of: rebuilt.union(.shift)), "seed \(seed) step \(step): device \(d) holds \(keys) but has \(actual)")
                    }
                }
                // No pending sequence outlives its timeout.
                if let deadline = pipeline.router.nextDeadline {
                    #expect(deadline >= time, "seed \(seed) step \(step): a sequence outlived its deadline")
                }
            }
            // Detaching everything leaves nothing down anywhere.
            for d in attached { pipeline.process(.detached(DeviceID(d), time: time), into: &out) }
            for d in 0..<3 { #expect(pipeline.mapper.keysDown(DeviceID(d)).isEmpty) }
            pipeline.finish(into: &out)
            #expect(pipeline.nextDeadline == nil)
            // Every event fed was processed (and those that changed nothing were counted as dropped).
            #expect(pipeline.eventsProcessed == fed, "seed \(seed): \(pipeline.eventsProcessed) processed of \(fed)")
            totalEvents += fed
        }
        #expect(totalEvents > 30_000)
    }
}
