import KbdCommands
import Testing
import KbdTOML
import KbdCore
import KbdKeymap
import KbdRecording
import KbdEvdev
import KbdPipeline
import KbdConfig
import KbdControl
import KbdDaemon

/// Issue 26: sticky keys as AccessX does them, replayed on the real USB keyboard's description
/// with the US keymap: a modifier tapped alone latches for the next key, tapped twice locks
/// until tapped again, a latch clears after the next key that is not a modifier.
@Suite struct StickyKeysTests {
    static let ctrl: UInt16 = 29, shift: UInt16 = 42, s: UInt16 = 31, c: UInt16 = 46, t: UInt16 = 20, a: UInt16 = 30

    enum Step { case tap(UInt16), down(UInt16), up(UInt16) }

    /// Replays `steps` (50 ms apart) on a temporary copy of the USB keyboard's recording;
    /// returns the chords and commands, and the key events.
    static func replay(_ steps: [Step], sticky: Bool = true) throws -> (lines: [String], keys: [KeyEvent]) {
        var events: [(Double, UInt16, UInt16, Int32)] = []
        var time = 1.0
        func key(_ code: UInt16, _ value: Int32) {
            events.append((time, EventType.key, code, value))
            time += 0.05
        }
        for step in steps {
            switch step {
            case .tap(let k): key(k, 1); key(k, 0)
            case .down(let k): key(k, 1)
            case .up(let k): key(k, 0)
            }
        }
        let dir = SwitchFixtures.temporaryDirectory()
        let path = try SwitchFixtures.withEvents(SwitchFixtures.usb, events, in: dir)
        let config = try ConfigLoader.parse("""
            [accessibility]
            sticky_keys = \(sticky)

            [[command]]
            id = "save"
            keys = "Ctrl+S"

            [[command]]
            id = "copy"
            keys = "Ctrl+C"

            [[command]]
            id = "tab"
            keys = "Ctrl+Shift+T"
            """, path: "sticky.toml")
        #expect(config.stickyKeys == sticky)
        let pipeline = try Pipeline(keymap: try Keymaps.make("us"), table: config.table,
                                    options: Pipeline.Options(emitKeys: true, stickyKeys: config.stickyKeys))
        let source = try RecordingSource(paths: [path])
        var out: [PipelineEvent] = []
        while let e = try source.next() { pipeline.process(e, into: &out) }
        var lines: [String] = [], keys: [KeyEvent] = []
        for e in out {
            switch e {
            case .chord(_, _, let chord): lines.append("chord \(chord)")
            case .command(_, _, let command, _, _): lines.append("command \(command.id)")
            case .key(let k, _): keys.append(k)
            default: break
            }
        }
        return (lines, keys)
    }

    @Test func aModifierTappedAloneLatchesForTheNextKeyOnly() throws {
        let r = try Self.replay([.tap(Self.ctrl), .tap(Self.s), .tap(Self.s)])
        #expect(r.lines == ["chord Ctrl+S", "command save"])
        // After the tap: latched; after the S press: spent.
        #expect(r.keys[1].state == .release && r.keys[1].stickyLatched == [.ctrl])
        #expect(r.keys[2].modifiers == [.ctrl] && r.keys[2].stickyLatched == [])
        #expect(r.keys[4].modifiers == [])
    }

    @Test func tappedTwiceLocksUntilTappedAgain() throws {
        let r = try Self.replay([.tap(Self.ctrl), .tap(Self.ctrl), .tap(Self.s), .tap(Self.c), .tap(Self.ctrl), .tap(Self.s)])
        #expect(r.lines == ["chord Ctrl+S", "command save", "chord Ctrl+C", "command copy"])
        #expect(r.keys[3].stickyLocked == [.ctrl] && r.keys[3].stickyLatched == [])
        #expect(r.keys.last!.stickyLocked == [] && r.keys.last!.modifiers == [])
    }

    @Test func aModifierHeldForAChordLatchesNothing() throws {
        let r = try Self.replay([.down(Self.ctrl), .tap(Self.s), .up(Self.ctrl), .tap(Self.s)])
        #expect(r.lines == ["chord Ctrl+S", "command save"])
        #expect(r.keys.allSatisfy { $0.stickyLatched.isEmpty && $0.stickyLocked.isEmpty })
    }

    @Test func twoTappedModifiersLatchTogether() throws {
        let r = try Self.replay([.tap(Self.ctrl), .tap(Self.shift), .tap(Self.t), .tap(Self.t)])
        #expect(r.lines == ["chord Ctrl+Shift+T", "command tab"])
    }

    @Test func aLatchedShiftTypesTheCapital() throws {
        let r = try Self.replay([.tap(Self.shift), .tap(Self.a), .tap(Self.a)])
        let presses = r.keys.filter { $0.code == Self.a && $0.state == .press }
        #expect(presses.map(\.keysym.name) == ["A", "a"])
    }

    @Test func offLatchesNothing() throws {
        let r = try Self.replay([.tap(Self.ctrl), .tap(Self.s), .tap(Self.ctrl), .tap(Self.ctrl), .tap(Self.c)], sticky: false)
        #expect(r.lines == [])
        #expect(r.keys.allSatisfy { $0.stickyLatched.isEmpty && $0.stickyLocked.isEmpty })
    }

    @Test func aSyntheticReleaseIsNoTap() throws {
        let mapper = try KeyMapper(keymap: try Keymaps.make("us"), options: KeyMapper.Options(stickyKeys: true))
        let device = DeviceID(1)
        try mapper.attach(device)
        let t = EventTime(seconds: 1, microseconds: 0)
        _ = mapper.handle(InputEvent(time: t, type: EventType.key, code: Self.ctrl, value: 1), device: device)
        // A SYN_DROPPED resync that finds no key down releases Ctrl: that is not the user tapping it.
        let released = mapper.synchronize(device, keysDown: [], at: t)
        #expect(released.count == 1)
        #expect(mapper.sticky(device) == ([], []))
        _ = mapper.handle(InputEvent(time: t, type: EventType.key, code: Self.ctrl, value: 1), device: device)
        _ = mapper.handle(InputEvent(time: t, type: EventType.key, code: Self.ctrl, value: 0), device: device)
        #expect(mapper.sticky(device) == ([.ctrl], []))
    }

    @Test func transitions() {
        let control: UInt32 = 1 << 2, shiftMask: UInt32 = 1 << 0
        var k = StickyKeys()
        k.modifierPressed(code: Self.ctrl, mask: control)
        let tapped = k.modifierReleased(code: Self.ctrl)
        #expect(tapped)
        #expect(k.latched == control && k.locked == 0)
        k.modifierPressed(code: Self.ctrl, mask: control)
        k.modifierReleased(code: Self.ctrl)
        #expect(k.latched == 0 && k.locked == control)
        k.otherKeyPressed()
        let cleared = k.clearLatch()
        #expect(!cleared)
        #expect(k.locked == control)
        k.modifierPressed(code: Self.ctrl, mask: control)
        k.modifierReleased(code: Self.ctrl)
        #expect(k.latched == 0 && k.locked == 0)
        // A lock key (Caps Lock sets no depressed modifier) is no tap.
        k.modifierPressed(code: 58, mask: 0)
        let capsTapped = k.modifierReleased(code: 58)
        #expect(!capsTapped)
        // Shift held while Ctrl is tapped: Shift was used, Ctrl was not.
        k.modifierPressed(code: Self.shift, mask: shiftMask)
        k.modifierPressed(code: Self.ctrl, mask: control)
        k.modifierReleased(code: Self.ctrl)
        let shiftTapped = k.modifierReleased(code: Self.shift)
        #expect(!shiftTapped)
        #expect(k.latched == control)
        let spent = k.clearLatch()
        #expect(spent && k.latched == 0)
    }

    @Test func theConfigKey() throws {
        #expect(try ConfigLoader.parse("", path: "a.toml").stickyKeys == false)
        #expect(try ConfigLoader.parse("[accessibility]\nsticky_keys = true\n", path: "a.toml").stickyKeys)
        do {
            _ = try ConfigLoader.parse("[accessibility]\nsticky_keys = \"yes\"\n", path: "a.toml")
            Issue.record("a string was accepted")
        } catch {
            #expect(error.description == "a.toml:2: accessibility.sticky_keys: expected true or false, found a string")
        }
        do {
            _ = try ConfigLoader.parse("[accessibility]\nsticky = true\n", path: "a.toml")
            Issue.record("an unknown key was accepted")
        } catch {
            #expect(error.description.hasPrefix("a.toml:2: unknown key 'accessibility.sticky'"))
        }
    }
}
