import HardwareInput
import KbdAgent
import Testing

/// What the agent makes of AT-SPI's answers: the role and state words below were read from
/// a GTK 3 window (tests-desktop/text-field.py) on the accessibility bus with GetRole and
/// GetState (at-spi2-core 2.46, Debian 12).
@Suite struct AccessibleTextTests {
    @Test(arguments: [
        // GtkEntry (ATSPI_ROLE_TEXT), focused and not: editable.
        (61 as UInt32, [0x4700_1980, 0] as [UInt32], true),
        (61, [0x4700_0980, 0], true),
        // GtkButton (ATSPI_ROLE_PUSH_BUTTON), focused: not a text.
        (43, [0x4300_0900, 0], false),
        // The window (ATSPI_ROLE_FRAME) and a filler: no.
        (23, [0x4320_0102, 0], false),
        (20, [0x6300_0100, 0], false),
        // An editable text that is read-only (ATSPI_STATE_READ_ONLY, 43: word 1, bit 11): no.
        (61, [0x4700_1980, 1 << 11], false),
        // A terminal (ATSPI_ROLE_TERMINAL, as VTE reports it) is typed into, editable or not.
        (60, [0x4300_1900, 0], true),
        // A password field (ATSPI_ROLE_PASSWORD_TEXT), editable.
        (40, [0x4700_1980, 0], true),
        // No state words (the object went away): no.
        (61, [], false),
    ] as [(UInt32, [UInt32], Bool)])
    func takesText(_ role: UInt32, _ states: [UInt32], _ expected: Bool) {
        #expect(AccessibleText.takesText(role: role, states: states) == expected)
    }

    @Test func stateBits() {
        #expect(AccessibleText.has(AccessibleText.stateFocused, in: [0x4700_1980, 0]))
        #expect(!AccessibleText.has(AccessibleText.stateFocused, in: [0x4700_0980, 0]))
        #expect(AccessibleText.has(AccessibleText.stateActive, in: [0x4320_0102, 0]))
        #expect(!AccessibleText.has(AccessibleText.stateReadOnly, in: [0xFFFF_FFFF]))
    }

    typealias Object = AccessibleFocus.Object
    static let entry = Object(application: ":1.2", path: "/org/a11y/atspi/accessible/3")
    static let button = Object(application: ":1.2", path: "/org/a11y/atspi/accessible/4")
    static let otherEntry = Object(application: ":1.7", path: "/org/a11y/atspi/accessible/12")

    enum Event { case focused(Object, Bool), unfocused(Object), gone(String) }

    @Test(arguments: [
        // The order GTK 3 sends: the old widget loses the focus, the new one gains it (twice).
        ([.unfocused(button), .focused(entry, true), .focused(entry, true)], true),
        ([.focused(entry, true), .unfocused(entry), .focused(button, false), .focused(button, false)], false),
        // The window deactivated (another app's window focused): the entry loses the focus.
        ([.focused(entry, true), .unfocused(entry)], false),
        // A late "unfocused" of the old widget after the new one gained it changes nothing.
        ([.focused(button, false), .focused(entry, true), .unfocused(button)], true),
        // Another app's text field gains the focus before ours says it lost it.
        ([.focused(entry, true), .focused(otherEntry, true), .unfocused(entry)], true),
        // The app quit (or crashed) with its text field focused.
        ([.focused(entry, true), .gone(":1.2")], false),
        ([.focused(otherEntry, true), .gone(":1.2")], true),
    ] as [([Event], Bool)])
    func focusFollowsEvents(_ events: [Event], _ textInput: Bool) {
        var focus = AccessibleFocus()
        for e in events {
            switch e {
            case .focused(let o, let text): focus.focused(o, takesText: text)
            case .unfocused(let o): focus.unfocused(o)
            case .gone(let app): focus.applicationGone(app)
            }
        }
        #expect(focus.textInput == textInput)
    }
}

/// Issue 25 item 6 (in part): what a focus claim on the accessibility bus is worth.
@Suite struct FocusClaimTests {
    static func bits(_ states: UInt32...) -> [UInt32] {
        var words: [UInt32] = [0, 0]
        for s in states { words[Int(s / 32)] |= 1 << (s % 32) }
        return words
    }

    /// An application claimed the focus for an object that does not have it (a spoof, or a
    /// claim a later focus change superseded): dropped, text input unchanged.
    @Test func aClaimWithoutTheFocusedStateIsDropped() {
        #expect(AccessibleText.claim(role: 61, states: Self.bits(AccessibleText.stateEditable)) == nil)
    }

    /// A claimed object that does not answer in time (or is gone): text input stays on, so
    /// shortcuts that would fire inside a password field stay off (before: off, fail open).
    @Test func noAnswerFailsClosed() {
        #expect(AccessibleText.claim(role: nil, states: nil) == true)
        #expect(AccessibleText.claim(role: nil, states: Self.bits(AccessibleText.stateFocused)) == true)
    }

    @Test func aFocusedObjectSaysWhatItIs() {
        #expect(AccessibleText.claim(role: 61, states: Self.bits(AccessibleText.stateFocused, AccessibleText.stateEditable)) == true)
        #expect(AccessibleText.claim(role: 29, states: Self.bits(AccessibleText.stateFocused)) == false)
        #expect(AccessibleText.claim(role: AccessibleText.roleTerminal, states: Self.bits(AccessibleText.stateFocused)) == true)
    }

    /// `auto` follows KWin on KDE only, never because some client owns `org.kde.KWin`.
    @Test func autoListensToKWinOnKDEOnly() {
        #expect(TextInputProducer.usesKWin(currentDesktop: "KDE"))
        #expect(TextInputProducer.usesKWin(currentDesktop: "plasma:KDE"))
        #expect(!TextInputProducer.usesKWin(currentDesktop: "GNOME"))
        #expect(!TextInputProducer.usesKWin(currentDesktop: "sway"))
        #expect(!TextInputProducer.usesKWin(currentDesktop: nil))
    }
}
