import KbdCore
import KbdKeymap
import KbdCommands
import KbdConfig
import Testing

/// Issues 36 and 37 together: key phases on commands limited to keyboards (`devices`) and on
/// grabbed keyboards, through the router on a manual clock.
struct PhasesDevicesTests {
    typealias Routed = KeyPhasesTests.Clocked

    static let ctrl: UInt16 = 29, alt: UInt16 = 56, r: UInt16 = 19, meta: UInt16 = 125
    static let pad = DeviceIdentity(name: "Macro Pad", id: InputID(bustype: 3, vendor: 0x1234, product: 0x5678, version: 1))
    static let other = DeviceIdentity(name: "AT Translated Set 2 keyboard", id: InputID(bustype: 17, vendor: 1, product: 1, version: 1))

    static let config = """
        [[command]]
        id = "short"
        keys = "Ctrl+Alt+R"
        [[command]]
        id = "long"
        keys = "Ctrl+Alt+R"
        hold_ms = 500
        [[command]]
        id = "pad-talk"
        keys = "Ctrl+Alt+R"
        devices = ["1234:5678"]
        run_on_release = []
        [[command]]
        id = "launcher"
        keys = "Super"
        [[command]]
        id = "pad-launcher"
        keys = "Super"
        devices = ["Macro*"]
        """

    @Test func aCommandLimitedToAKeyboardWinsOverTheHoldAndKeepsItsPhases() throws {
        let c = try Routed(Self.config)
        try c.key(Self.ctrl, 1, at: 0, on: Self.pad)
        try c.key(Self.alt, 1, at: 10, on: Self.pad)
        try c.key(Self.r, 1, at: 100, on: Self.pad)
        #expect(c.router.nextDeadline == nil)
        try c.key(Self.r, 0, at: 900, on: Self.pad)
        #expect(c.fired == ["pad-talk press 100", "pad-talk release 900"])
        // Another keyboard: the hold and the plain command for every keyboard.
        c.out.removeAll()
        try c.key(Self.r, 1, at: 1000, on: Self.other)
        c.tick(1500)
        try c.key(Self.r, 0, at: 1700, on: Self.other)
        try c.key(Self.r, 1, at: 2000, on: Self.other)
        try c.key(Self.r, 0, at: 2100, on: Self.other)
        #expect(c.fired == ["long hold 1500", "short press 2100"])
    }

    @Test func aTapLimitedToAKeyboardWinsThereAndAGrabbedKeyboardFiresOnlyItsOwn() throws {
        let c = try Routed(Self.config)
        try c.key(Self.meta, 1, at: 0, on: Self.pad)
        try c.key(Self.meta, 0, at: 100, on: Self.pad)
        try c.key(Self.meta, 1, at: 200, on: Self.other)
        try c.key(Self.meta, 0, at: 300, on: Self.other)
        let grabbed = DeviceIdentity(name: "Numpad", id: InputID(bustype: 3, vendor: 9, product: 9, version: 1), grabbed: true)
        try c.key(Self.meta, 1, at: 400, on: grabbed)
        try c.key(Self.meta, 0, at: 500, on: grabbed)
        try c.key(Self.ctrl, 1, at: 600, on: grabbed)
        try c.key(Self.alt, 1, at: 610, on: grabbed)
        try c.key(Self.r, 1, at: 700, on: grabbed)
        c.tick(1300)
        try c.key(Self.r, 0, at: 1400, on: grabbed)
        #expect(c.fired == ["pad-launcher tap 100", "launcher tap 300"])
    }

    @Test func twoCommandsWithPhasesOnTheSameKeyboardsConflictWithFileAndLine() throws {
        let config = """
            [[command]]
            id = "a"
            keys = "Super"
            devices = ["1234:5678"]
            [[command]]
            id = "b"
            keys = "Super"
            devices = ["1234:5678"]
            """
        #expect(throws: (any Error).self) { try ConfigLoader.parse(config, path: "p.toml") }
        do {
            _ = try ConfigLoader.parse(config, path: "p.toml")
        } catch {
            #expect("\(error)".contains("p.toml:5"))
            #expect("\(error)".contains("for the keyboards \"1234:5678\""))
        }
    }
}
