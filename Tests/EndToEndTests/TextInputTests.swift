import KbdTOML
import KbdCore
import KbdGeometry
import KbdCommands
import KbdConfig
import KbdControl
import KbdProcess
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

/// Issue 25 item 6: focus claims count only from the application that owns the focused
/// window; every question is asked without waiting; fail closed.
@Suite struct FocusClaimCheckTests {
    typealias Object = AccessibleFocus.Object
    static let app = ":1.2"        // the focused window's application, pid 100
    static let spoofer = ":1.9"    // another client of the accessibility bus, pid 200
    static let entry = Object(application: app, path: "/org/a11y/atspi/accessible/3")
    static let button = Object(application: app, path: "/org/a11y/atspi/accessible/4")
    static let fake = Object(application: spoofer, path: "/org/a11y/atspi/accessible/spoof")
    static let pids: [String: UInt32] = [app: 100, spoofer: 200]

    static func bits(_ states: UInt32...) -> [UInt32] {
        var words: [UInt32] = [0, 0]
        for s in states { words[Int(s / 32)] |= 1 << (s % 32) }
        return words
    }
    static let focusedText = bits(AccessibleText.stateFocused, AccessibleText.stateEditable)
    static let focusedButton = bits(AccessibleText.stateFocused)

    /// What each object answers: its states and role (a push button unless it is an entry).
    static func answer(_ question: FocusClaims.Question) -> FocusClaims.Answer {
        switch question {
        case .pid(let name): return pids[name].map { .number($0) } ?? .missing
        case .states(let o): return .words(o == entry ? focusedText : focusedButton)
        case .role(let o): return .number(o == entry ? 61 : 43)
        }
    }

    /// Answers every ask (and the asks those answers lead to) at once; returns what was asked.
    @discardableResult
    static func answerAll(_ claims: inout FocusClaims, _ asks: [FocusClaims.Ask]) -> [FocusClaims.Question] {
        var queue = asks
        var asked: [FocusClaims.Question] = []
        while !queue.isEmpty {
            let a = queue.removeFirst()
            asked.append(a.question)
            queue += claims.answered(a.tag, answer(a.question))
        }
        return asked
    }

    @Test func windowLinesRoundTrip() {
        for w in [FocusedApplication.unknown, .none, .pid(4242)] { #expect(FocusedApplication(line: w.line) == w) }
        #expect(FocusedApplication(line: "window 0") == nil)
        #expect(FocusedApplication(line: "window -3") == nil)
        #expect(FocusedApplication(line: "windows 12") == nil)
    }

    /// The red team's attack: another client claims the focus for a button of its own while
    /// the user types into the focused window's text field. Its claim is dropped on its pid,
    /// without asking the object anything; later ones are dropped without asking at all.
    @Test func aClaimFromAnotherApplicationIsDropped() {
        var claims = FocusClaims(window: .pid(100))
        Self.answerAll(&claims, claims.claimed(Self.entry))
        #expect(claims.textInput)
        let asked = Self.answerAll(&claims, claims.claimed(Self.fake))
        #expect(asked == [.pid(Self.spoofer)])
        #expect(claims.textInput)
        #expect(claims.claimed(Self.fake).isEmpty)
        #expect(claims.textInput)
        // The focused application's own button: believed.
        Self.answerAll(&claims, claims.claimed(Self.button))
        #expect(!claims.textInput)
    }

    /// The questions go out together and the claim stays open until both answers came: text
    /// input is on meanwhile, and when they never come.
    @Test func aClaimBeingCheckedAndOneNeverAnsweredKeepTextInputOn() {
        var claims = FocusClaims(window: .pid(100))
        Self.answerAll(&claims, claims.claimed(Self.button))
        #expect(!claims.textInput)
        let asks = claims.claimed(Self.button)
        #expect(asks.map(\.question) == [.states(Self.button), .role(Self.button)])
        #expect(claims.textInput)  // being checked
        #expect(claims.answered(asks[0].tag, .words(Self.focusedButton)).isEmpty)
        #expect(claims.textInput)
        #expect(claims.answered(asks[1].tag, .missing).isEmpty)  // the role came too late
        #expect(claims.textInput)
        // The states never came either.
        let again = claims.claimed(Self.button)
        _ = claims.answered(again[0].tag, .missing)
        _ = claims.answered(again[1].tag, .missing)
        #expect(claims.textInput)
    }

    /// A newer claim supersedes the one being checked: the old one's late answers are ignored.
    @Test func aNewerClaimSupersedesTheOneBeingChecked() {
        var claims = FocusClaims(window: .pid(100))
        Self.answerAll(&claims, claims.claimed(Self.button))
        let first = claims.claimed(Self.entry)
        let second = claims.claimed(Self.button)
        for a in first { _ = claims.answered(a.tag, Self.answer(a.question)) }
        #expect(claims.textInput)  // still checking the button
        for a in second { _ = claims.answered(a.tag, Self.answer(a.question)) }
        #expect(!claims.textInput)
    }

    /// An object that is not FOCUSED when asked: the claim is dropped, text input unchanged.
    @Test func aClaimForAnObjectWithoutTheFocusIsDropped() {
        var claims = FocusClaims(window: .pid(100))
        Self.answerAll(&claims, claims.claimed(Self.entry))
        let asks = claims.claimed(Self.button)
        _ = claims.answered(asks[0].tag, .words(Self.bits(AccessibleText.stateShowing)))
        #expect(claims.textInput)  // decided without waiting for the role
        _ = claims.answered(asks[1].tag, .number(43))
        #expect(claims.textInput)
    }

    /// The claim came before the window manager's focus event (or before the agent relayed
    /// it): checked again when the window's application gains the focus.
    @Test func aClaimBeforeItsWindowWasFocusedIsCheckedWhenItIs() {
        var claims = FocusClaims(window: .pid(300))
        Self.answerAll(&claims, claims.claimed(Self.entry))
        #expect(!claims.textInput)
        let asked = Self.answerAll(&claims, claims.windowChanged(.pid(100)))
        #expect(asked == [.states(Self.entry), .role(Self.entry)])
        #expect(claims.textInput)
        // Another application's window: the text field no longer has the focus.
        #expect(Self.answerAll(&claims, claims.windowChanged(.pid(300))).isEmpty)
        #expect(!claims.textInput)
        // No window at all: nobody's claim counts.
        #expect(Self.answerAll(&claims, claims.windowChanged(.none)).isEmpty)
        Self.answerAll(&claims, claims.claimed(Self.entry))
        #expect(!claims.textInput)
    }

    /// Without a focus source that names the window's process, every claim is checked on its
    /// object (role, FOCUSED), with no pid asked.
    @Test func anUnknownWindowChecksEveryClaimOnItsObject() {
        var claims = FocusClaims(window: .unknown)
        let asked = Self.answerAll(&claims, claims.claimed(Self.entry))
        #expect(asked == [.states(Self.entry), .role(Self.entry)])
        #expect(claims.textInput)
        Self.answerAll(&claims, claims.claimed(Self.fake))
        #expect(!claims.textInput)
    }

    /// The bus did not say whose the claim is: text input on (fail closed).
    @Test func aMissingPidFailsClosed() {
        var claims = FocusClaims(window: .pid(100))
        let asks = claims.claimed(Self.button)
        #expect(asks.map(\.question) == [.pid(Self.app)])
        _ = claims.answered(asks[0].tag, .missing)
        #expect(claims.textInput)
    }

    /// The application left the bus while its claim was checked, or with its field focused.
    @Test func anApplicationLeavingTakesItsClaimsWithIt() {
        var claims = FocusClaims(window: .pid(100))
        Self.answerAll(&claims, claims.claimed(Self.entry))
        #expect(claims.textInput)
        claims.applicationGone(Self.app)
        #expect(!claims.textInput)
        let asks = claims.claimed(Self.entry)  // its pid is asked again: the name is gone
        #expect(asks.map(\.question) == [.pid(Self.app)])
        _ = claims.answered(asks[0].tag, .number(100))
        #expect(claims.textInput)
        claims.applicationGone(Self.app)
        #expect(!claims.textInput)
    }

    /// The walk at start ran out of time: text input on until a claim is decided or the
    /// window changes.
    @Test func nothingSaidInTimeFailsClosed() {
        var claims = FocusClaims(window: .pid(100))
        claims.undecided()
        #expect(claims.textInput)
        Self.answerAll(&claims, claims.claimed(Self.fake))  // another application's: no
        #expect(claims.textInput)
        Self.answerAll(&claims, claims.claimed(Self.button))
        #expect(!claims.textInput)
        claims.undecided()
        #expect(Self.answerAll(&claims, claims.windowChanged(.pid(300))).isEmpty)
        #expect(!claims.textInput)
    }

    /// KDE: the KWin script's calls name the active window's process; a call from any other
    /// client of the session bus (which may call the same method) does not count.
    @Test func kwinsScriptNamesTheFocusedProcess() {
        let path = "/org/kbd_commandd/Focus", interface = "org.kbd_commandd.Focus"
        #expect(KWinActiveWindow.window(owner: ":1.0", sender: ":1.0", path: path, interface: interface, member: "Window", value: 4242) == .pid(4242))
        #expect(KWinActiveWindow.window(owner: ":1.0", sender: ":1.0", path: path, interface: interface, member: "Window", value: 0) == FocusedApplication.none)
        #expect(KWinActiveWindow.window(owner: ":1.0", sender: ":1.9", path: path, interface: interface, member: "Window", value: 4242) == nil)
        #expect(KWinActiveWindow.window(owner: ":1.0", sender: ":1.0", path: path, interface: interface, member: "Window", value: nil) == nil)
        #expect(KWinActiveWindow.window(owner: ":1.0", sender: ":1.0", path: "/", interface: interface, member: "Window", value: 1) == nil)
        // Both KWin 5's and KWin 6's names, and the watch's own connection as the destination.
        let script = KWinActiveWindow.script(destination: ":1.42")
        for word in ["clientActivated", "activeClient", "windowActivated", "activeWindow", "callDBus(\":1.42\""] { #expect(script.contains(word)) }
    }

    /// The focused application says its object lost the focus while it was being checked.
    @Test func anUnfocusWhileCheckedEndsTheCheck() {
        var claims = FocusClaims(window: .pid(100))
        Self.answerAll(&claims, claims.claimed(Self.button))
        let asks = claims.claimed(Self.entry)
        claims.unfocused(Self.entry)
        #expect(!claims.textInput)
        for a in asks { _ = claims.answered(a.tag, Self.answer(a.question)) }
        #expect(!claims.textInput)
    }
}
