import KbdCore
import KbdKeymap
import KbdCommands
import KbdConfig
import Testing

/// Issue 36: the key phases' state machine (KeyPhases, run by ChordRouter) on a manual clock:
/// the router reads no clock, it says when it next needs one (`nextDeadline`) and the caller
/// calls `expire(at:)` then, as the service's loop does with its timer.
struct KeyPhasesTests {
    final class Clocked {
        var router: ChordRouter
        let mapper: KeyMapper
        var out: [ChordRouter.Output] = []
        init(_ config: String) throws {
            router = ChordRouter(table: try ConfigLoader.parse(config, path: "p.toml").table)
            mapper = try KeyMapper(keymap: try Keymaps.make("us"))
            try mapper.attach(DeviceID(0))
        }
        /// The key `code` changes to `value` at `ms` on the manual clock, typed on `device`
        /// (nil: a keyboard the router does not know, as `handle(_:into:)`).
        func key(_ code: UInt16, _ value: Int32, at ms: Int, on device: DeviceIdentity? = nil) throws {
            let time = EventTime(microseconds: Int64(ms) * 1000)
            let key = try #require(mapper.handle(InputEvent(time: time, type: EventType.key, code: code, value: value), device: DeviceID(0)))
            router.handle(key, on: device, into: &out)
        }
        func tick(_ ms: Int) { router.expire(at: EventTime(microseconds: Int64(ms) * 1000), into: &out) }
        var fired: [String] {
            out.compactMap { if case .command(let t, _, let c, _, let p) = $0 { "\(c.id) \(p.rawValue) \(t.microseconds / 1000)" } else { nil } }
        }
    }

    static let ctrl: UInt16 = 29, alt: UInt16 = 56, r: UInt16 = 19, meta: UInt16 = 125, s: UInt16 = 31, caps: UInt16 = 58, x: UInt16 = 45

    @Test func aHoldIsATimerTheCallerFiresAtTheRoutersDeadline() throws {
        let c = try Clocked("""
            [[command]]
            id = "short"
            keys = "Ctrl+Alt+R"
            [[command]]
            id = "long"
            keys = "Ctrl+Alt+R"
            hold_ms = 500
            """)
        try c.key(Self.ctrl, 1, at: 0)
        try c.key(Self.alt, 1, at: 10)
        #expect(c.router.nextDeadline == nil)
        try c.key(Self.r, 1, at: 100)
        #expect(c.router.nextDeadline == EventTime(microseconds: 600_000))
        c.tick(599)
        #expect(c.fired.isEmpty)
        c.tick(600)
        #expect(c.fired == ["long hold 600"])
        #expect(c.router.nextDeadline == nil)
        try c.key(Self.r, 0, at: 900)
        #expect(c.fired == ["long hold 600"])
        // Again, released early: the plain command, at the release; the timer is gone.
        try c.key(Self.r, 1, at: 1000)
        try c.key(Self.r, 0, at: 1200)
        #expect(c.fired == ["long hold 600", "short press 1200"])
        #expect(c.router.nextDeadline == nil)
        c.tick(5000)
        #expect(c.fired.count == 2)
    }

    @Test func aTableWithoutPhasesNeverHasADeadlineOrAReleaseEvent() throws {
        let c = try Clocked("[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\nrepeat = true\n")
        #expect(!c.router.table.hasPhases)
        try c.key(Self.ctrl, 1, at: 0)
        try c.key(Self.s, 1, at: 10)
        try c.key(Self.s, 2, at: 260)
        try c.key(Self.s, 0, at: 300)
        try c.key(Self.meta, 1, at: 400)
        try c.key(Self.meta, 0, at: 450)
        #expect(c.router.nextDeadline == nil)
        #expect(c.fired == ["save press 10", "save repeat 260"])
    }

    @Test func theHudsHoldAndATapShareTheLoneModifierTracker() throws {
        // The HUD's hold, fed the same keys, shows only past its delay; the tap fires only before tap_ms.
        let c = try Clocked("[[command]]\nid = \"launcher\"\nkeys = \"Super\"\ntap_ms = 300\n")
        var hud = HudState(settings: HudSettings(delayMilliseconds: 700))
        var shown: [HudState.Output] = []
        for (value, ms) in [(Int32(1), 0), (0, 200), (1, 1000), (0, 1800)] {
            let time = EventTime(microseconds: Int64(ms) * 1000)
            let key = try #require(c.mapper.handle(InputEvent(time: time, type: EventType.key, code: Self.meta, value: value), device: DeviceID(0)))
            hud.handle(key, othersHeld: false, into: &shown)
            c.router.handle(key, into: &c.out)
        }
        #expect(c.fired == ["launcher tap 200"])
        #expect(shown == [.show(time: EventTime(microseconds: 1_700_000), trigger: .hold, pending: nil),
                          .hide(time: EventTime(microseconds: 1_800_000), trigger: .hold)])
    }

    @Test func capsLockIsACommandKeyAtItsPressAndRelease() throws {
        // An app's push-to-talk on Caps Lock through the portal: registered with run_on_release.
        let c = try Clocked("[[command]]\nid = \"talk\"\nkeys = \"Caps_Lock\"\nrun_on_release = [\"/bin/true\"]\n")
        try c.key(Self.caps, 1, at: 0)
        try c.key(Self.caps, 0, at: 800)
        #expect(c.fired == ["talk press 0", "talk release 800"])
        // Without phases: at the press only.
        let plain = try Clocked("[[command]]\nid = \"caps\"\nkeys = \"Caps_Lock\"\n")
        try plain.key(Self.caps, 1, at: 0)
        try plain.key(Self.caps, 0, at: 100)
        #expect(plain.fired == ["caps press 0"])
    }

    @Test func capsLockStaysAModifierKeyForATableThatDoesNotBindIt() throws {
        // A sequence waits through a Caps Lock press as through Shift.
        let c = try Clocked("[[command]]\nid = \"seq\"\nkeys = \"Ctrl+X S\"\n")
        try c.key(Self.ctrl, 1, at: 0)
        try c.key(Self.x, 1, at: 10)
        try c.key(Self.x, 0, at: 20)
        try c.key(Self.ctrl, 0, at: 30)
        try c.key(Self.caps, 1, at: 40)
        try c.key(Self.caps, 0, at: 50)
        try c.key(Self.s, 1, at: 60)
        #expect(c.fired == ["seq press 60"])
        #expect(throws: ChordParseError.self) { try ChordKey.parseSequence("Shift_L") }
        #expect(try ChordKey.parseSequence("Caps_Lock").map(\.keysym.isCommandLock) == [true])
    }
}
