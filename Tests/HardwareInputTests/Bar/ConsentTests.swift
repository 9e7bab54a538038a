import KbdBar
import KbdControl
import KbdKeymap
import Testing

/// Issue 36: `kbd-commandd-bar --consent …`, the dialog that asks the person at the keyboard
/// about an app's global shortcut (`[portal] approve = "ask"`).
@Suite struct ConsentOptionsTests {
    @Test func parsesTheDialogsArguments() {
        let m = ConsentChord(parsing: "Ctrl+Alt+M")
        #expect(BarOptions.parse(["--consent", "--app", "org.example.Rec", "--description", "Start recording", "--chord", "Ctrl+Alt+m"])
            == .consent(.run(ConsentOptions(app: "org.example.Rec", description: "Start recording", chord: m))))
        #expect(BarOptions.parse(["--consent", "--app=a", "--description=", "--chord=Ctrl+Alt+m", "--conflict=Mark (system)", "--timeout=5"])
            == .consent(.run(ConsentOptions(app: "a", description: "", chord: m, conflict: "Mark (system)", timeoutSeconds: 5))))
        #expect(BarOptions.parse(["--consent", "--app", "", "--description", "d"]) == .consent(.run(ConsentOptions(app: "", description: "d", chord: nil))))
        #expect(BarOptions.parse(["--consent", "--help"]) == .consent(.help))
        // Without --consent the bar's options are unchanged.
        #expect(BarOptions.parse(["--socket", "/s"]) == .run(BarOptions(socket: "/s")))
    }

    /// Each usage error names the bad argument.
    @Test func usageErrorsNameTheArgument() {
        let cases: [([String], String)] = [
            (["--consent", "--description", "d"], "--app"),
            (["--consent", "--app", "a"], "--description"),
            (["--consent", "--app", "a", "--description", "d", "--chord", "Ctrl+Sprocket"], "Ctrl+Sprocket"),
            (["--consent", "--app", "a", "--description", "d", "--chord", "Ctrl+"], "--chord"),
            (["--consent", "--app", "a", "--description", "d", "--timeout", "0"], "--timeout '0'"),
            (["--consent", "--app", "a", "--description", "d", "--timeout", "soon"], "--timeout 'soon'"),
            (["--consent", "--app", "a", "--description", "d", "--socket", "/s"], "--socket"),
            (["--consent", "--app", "a", "--app", "b", "--description", "d"], "--app given twice"),
            (["--consent", "--app", "a", "--description"], "--description needs a value"),
            (["--consent", "--app", "a\nb", "--description", "d"], "--app: the value must be one line"),
        ]
        for (arguments, needle) in cases {
            guard case .consent(.usage(let message)) = BarOptions.parse(arguments) else {
                Issue.record("accepted \(arguments)")
                continue
            }
            #expect(message.contains(needle), "\(arguments): \(message)")
        }
    }

    @Test func helpDocumentsTheDialogWithAnExample() {
        for needle in ["--consent", "--app", "--description", "--chord", "--conflict", "--timeout", "accept CHORD", "refuse",
                       "exit 0", "exit 1", "exits 2", "Use another chord", "Escape",
                       "kbd-commandd-bar --consent --app org.example.Recorder --description \"Start recording\" --chord Ctrl+Alt+m"] {
            #expect(BarOptions.help.contains(needle), "--help does not mention \(needle)")
        }
    }

    @Test func headingAndConflictLine() {
        let o = ConsentOptions(app: "org.example.Rec", description: "d", chord: nil, conflict: "Mark (the system's table)")
        #expect(o.heading == "org.example.Rec asks for a global shortcut")
        #expect(o.conflictLine == "Already in use: Mark (the system's table)")
        #expect(ConsentOptions(app: "", description: "d", chord: nil).heading == "An application asks for a global shortcut")
        #expect(ConsentOptions(app: "a", description: "d", chord: nil).conflictLine == nil)
    }
}

/// The chord names: shown as the service names chords, answered in the config's notation.
@Suite struct ConsentChordTests {
    @Test func readsAndSpellsChordsWithTheServicesNames() throws {
        let cases: [(String, String, String)] = [
            ("Ctrl+Alt+m", "Ctrl+Alt+M", "Ctrl+Alt+m"), ("ctrl+alt+M", "Ctrl+Alt+M", "Ctrl+Alt+m"),
            ("Super+Return", "Super+Return", "Super+Return"), ("Shift+F9", "Shift+F9", "Shift+F9"),
            ("Alt+Ctrl+1", "Ctrl+Alt+1", "Ctrl+Alt+1"), ("Super", "Super", "Super"), ("win", "Super", "Super"),
            ("F9", "F9", "F9"), ("Ctrl+plus", "Ctrl+plus", "Ctrl+plus"),
        ]
        for (text, shown, keys) in cases {
            let chord = try #require(ConsentChord(parsing: text), "\(text)")
            #expect(chord.description == shown, "\(text)")
            #expect(chord.keys == keys, "\(text)")
            // What `accept` prints is a chord the service reads back as the same chord.
            if chord.key != nil { #expect(try ChordKey(parsing: chord.keys).description == shown) }
        }
        for bad in ["", "Ctrl+", "Ctrl+Sprocket", "Ctrl-Alt-Del", "Ctrl+Shift_L", "CapsLock", "Ctrl+Ctrl+a"] {
            #expect(ConsentChord(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func gdkStateToModifiers() {
        #expect(GdkKeys.modifiers(state: 0) == [])
        #expect(GdkKeys.modifiers(state: 1 << 2 | 1 << 3) == [.ctrl, .alt])  // Control, Mod1
        #expect(GdkKeys.modifiers(state: 1 << 0) == [.shift])
        #expect(GdkKeys.modifiers(state: 1 << 6) == [.super])  // Mod4
        #expect(GdkKeys.modifiers(state: 1 << 26 | 1 << 6) == [.super])  // Super and Mod4
        #expect(GdkKeys.modifiers(state: 1 << 28) == [.alt])  // Meta
        #expect(GdkKeys.modifiers(state: 1 << 7) == [.altGr])  // Mod5
        // Caps Lock (Lock) and Num Lock (Mod2) are no chord modifiers.
        #expect(GdkKeys.modifiers(state: 1 << 1 | 1 << 4) == [])
        #expect(GdkKeys.modifier(ofKey: 0xFFE3) == .ctrl)  // Control_L
        #expect(GdkKeys.modifier(ofKey: 0xFFEC) == .super)  // Super_R
        #expect(GdkKeys.modifier(ofKey: 0xFE03) == .altGr)  // ISO_Level3_Shift
        #expect(GdkKeys.modifier(ofKey: 0xFFE5) == nil)  // Caps_Lock
        #expect(GdkKeys.modifier(ofKey: 0x6D) == nil)  // m
    }
}

/// "Use another chord…": the next chord pressed becomes the proposed one.
@Suite struct ConsentCaptureTests {
    static let ctrl: UInt32 = 1 << 2, alt: UInt32 = 1 << 3, shift: UInt32 = 1 << 0, mod4: UInt32 = 1 << 6
    static let controlL: UInt32 = 0xFFE3, altL: UInt32 = 0xFFE9, superL: UInt32 = 0xFFEB, shiftL: UInt32 = 0xFFE1

    @Test func allowAnswersTheProposedChord() {
        let c = ConsentCapture(proposed: ConsentChord(parsing: "Ctrl+Alt+M"))
        #expect(c.canAllow)
        #expect(c.allowReply == .accept("Ctrl+Alt+m"))
        #expect(c.chordText == "Ctrl+Alt+M")
        let none = ConsentCapture(proposed: nil)
        #expect(!none.canAllow && none.allowReply == nil)
        #expect(none.chordText == "No chord proposed")
    }

    @Test func keysPassToTheButtonsUntilTheCaptureStarts() {
        var c = ConsentCapture(proposed: ConsentChord(parsing: "Ctrl+Alt+M"))
        #expect(c.keyPressed(keyval: 0xFF0D, state: 0) == .passed)  // Return on a button
        #expect(c.keyReleased(keyval: 0xFF0D) == .passed)
        #expect(c.keyPressed(keyval: 0xFF1B, state: Self.ctrl) == .passed)  // Ctrl+Escape
        #expect(c.allowReply == .accept("Ctrl+Alt+m"))
        // Escape alone closes the dialog: a refusal.
        #expect(c.keyPressed(keyval: 0xFF1B, state: 0) == .refused)
    }

    @Test func capturesAKeyWithItsHeldModifiers() {
        var c = ConsentCapture(proposed: ConsentChord(parsing: "Ctrl+Alt+M"))
        c.startCapture()
        #expect(!c.canAllow && c.allowReply == nil)
        #expect(c.hint.contains("Escape cancels"))
        #expect(c.keyPressed(keyval: Self.superL, state: 0) == .held)
        #expect(c.keyPressed(keyval: Self.shiftL, state: Self.mod4) == .held)
        #expect(c.keyPressed(keyval: 0x74, state: Self.mod4 | Self.shift) == .captured)  // t
        #expect(c.chordText == "Shift+Super+T")
        #expect(c.allowReply == .accept("Shift+Super+t"))
        // The capture is over: the releases are the toolkit's again.
        #expect(c.keyReleased(keyval: 0x74) == .passed)
        var f = ConsentCapture(proposed: nil)
        f.startCapture()
        #expect(f.keyPressed(keyval: 0xFFC6, state: Self.shift) == .captured)  // F9
        #expect(f.allowReply == .accept("Shift+F9"))
    }

    @Test func capturesAModifierTappedAlone() {
        var c = ConsentCapture(proposed: ConsentChord(parsing: "Ctrl+Alt+M"))
        c.startCapture()
        #expect(c.keyPressed(keyval: Self.superL, state: 0) == .held)
        #expect(c.keyReleased(keyval: Self.superL) == .captured)
        #expect(c.allowReply == .accept("Super"))
        #expect(c.chordText == "Super")
    }

    /// A modifier pressed while another is held, or with a key between, is no tap.
    @Test func aModifierWithAnotherIsNoTap() {
        var c = ConsentCapture(proposed: ConsentChord(parsing: "Ctrl+Alt+M"))
        c.startCapture()
        #expect(c.keyPressed(keyval: Self.controlL, state: 0) == .held)
        #expect(c.keyPressed(keyval: Self.altL, state: Self.ctrl) == .held)
        #expect(c.keyReleased(keyval: Self.altL) == .held)
        #expect(c.keyReleased(keyval: Self.controlL) == .held)
        #expect(c.capturing)
        // Caps Lock never forms a chord: still capturing.
        #expect(c.keyPressed(keyval: 0xFFE5, state: 0) == .held)
        #expect(c.keyPressed(keyval: Self.controlL, state: 0) == .held)
        #expect(c.keyPressed(keyval: 0xFFE5, state: Self.ctrl) == .held)
        #expect(c.keyReleased(keyval: Self.controlL) == .held)
        #expect(c.capturing && c.allowReply == nil)
        #expect(c.keyPressed(keyval: 0xFF0D, state: Self.ctrl) == .captured)  // Return
        #expect(c.allowReply == .accept("Ctrl+Return"))
    }

    @Test func escapeCancelsAndKeepsTheChordProposedBefore() {
        var c = ConsentCapture(proposed: ConsentChord(parsing: "Ctrl+Alt+M"))
        c.startCapture()
        #expect(c.keyPressed(keyval: 0xFF1B, state: 0) == .cancelled)
        #expect(!c.capturing)
        #expect(c.allowReply == .accept("Ctrl+Alt+m"))
        // Escape with a modifier is a chord like any other.
        c.startCapture()
        #expect(c.keyPressed(keyval: 0xFF1B, state: Self.ctrl) == .captured)
        #expect(c.allowReply == .accept("Ctrl+Escape"))
    }
}

/// What the agent calls: the dialog's argv, and its answer read back.
@Suite struct ConsentDialogCallTests {
    @Test func buildsTheArguments() {
        #expect(ConsentDialog.arguments(binary: "/usr/bin/kbd-commandd-bar", app: "org.example.Rec", description: "-x starts",
                                        chord: "Ctrl+Alt+M", conflict: "Mark (the system's table)")
            == ["/usr/bin/kbd-commandd-bar", "--consent", "--app=org.example.Rec", "--description=-x starts", "--chord=Ctrl+Alt+M",
                "--conflict=Mark (the system's table)"])
        #expect(ConsentDialog.arguments(binary: "b", app: "", description: "", chord: nil, conflict: nil, timeoutSeconds: 5)
            == ["b", "--consent", "--app=", "--description=", "--timeout=5"])
    }

    /// The bar reads what the agent builds: the same options, whatever the texts start with.
    @Test func theBarReadsWhatTheAgentBuilds() {
        let argv = ConsentDialog.arguments(binary: "b", app: "--app", description: "--chord=Super", chord: "Ctrl+Alt+M",
                                           conflict: "-c", timeoutSeconds: 9)
        #expect(BarOptions.parse(Array(argv.dropFirst())) == .consent(.run(ConsentOptions(
            app: "--app", description: "--chord=Super", chord: ConsentChord(parsing: "Ctrl+Alt+M"), conflict: "-c", timeoutSeconds: 9))))
    }

    @Test func readsTheAnswer() {
        #expect(ConsentDialog.reply(output: "accept Ctrl+Alt+m\n", status: 0) == .accept("Ctrl+Alt+m"))
        #expect(ConsentDialog.reply(output: "accept Super", status: 0) == .accept("Super"))
        #expect(ConsentDialog.reply(output: "refuse\n", status: 1) == .refuse)
        #expect(ConsentDialog.Reply.accept("Ctrl+Alt+m").line == "accept Ctrl+Alt+m")
        #expect(ConsentDialog.Reply.refuse.line == "refuse")
        // The status decides: an accept line with status 1 is no accept.
        #expect(ConsentDialog.reply(output: "accept Ctrl+Alt+m\n", status: 1) == .refuse)
        // Status 0 without a well-formed accept of a chord is no answer.
        for output in ["accept \n", "accept a b\n", "", "refuse\n", "accept Ctrl+Sprocket\n", "accept Ctrl+\n"] {
            guard case .failed = ConsentDialog.reply(output: output, status: 0) else {
                Issue.record("'\(output)' with status 0 read as an answer")
                continue
            }
        }
        guard case .failed(let why) = ConsentDialog.reply(output: "refuse\n", status: 69) else { Issue.record("69"); return }
        #expect(why.contains("could not be shown"))
        guard case .failed = ConsentDialog.reply(output: "accept Ctrl+Alt+m\n", status: nil) else { Issue.record("signal"); return }
    }
}
