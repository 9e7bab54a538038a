import KbdCore
import KbdProcess
import KbdSystem
import KbdControl
import KbdCommands
@testable import KbdAgent
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The desktop portal backend's pure parts: `preferred_trigger` read into the service's
/// chords and named for `trigger_description`, the sessions and their bindings under each
/// approval policy, conflicts, bounds, and the approvals file's format.
@Suite struct PortalTriggerTests {
    @Test(arguments: [
        ("CTRL+ALT+m", "Ctrl+Alt+M"), ("LOGO+Return", "Super+Return"), ("SHIFT+F9", "Shift+F9"),
        ("ctrl+alt+m", "Ctrl+Alt+M"), ("logo+return", "Super+Return"), ("<Control><Alt>m", "Ctrl+Alt+M"),
        ("<Primary><Shift>t", "Ctrl+Shift+T"), ("<Super>space", "Super+space"), ("F9", "F9"), ("Caps_Lock", "Caps_Lock"),
        ("LOGO", "Super"), ("Control_R", "Ctrl"), ("CTRL+ALT+Delete", "Ctrl+Alt+Delete"), (" CTRL + m ", "Ctrl+M"),
        ("CTRL++", "Ctrl+plus"), ("<Alt>F4", "Alt+F4"), ("<Control>", "Ctrl"),
        ("CAPS", "Caps_Lock"), ("CapsLock", "Caps_Lock"),
    ])
    func readsTheSpecificationsFormat(text: String, keys: String) {
        #expect(PortalTrigger(parsing: text)?.keys == keys)
    }

    @Test(arguments: ["", "CTRL+", "CTRL+ALT", "HYPERSPACE+m", "CTRL+m+n", "CTRL+CTRL+m", "NUM+m", "<Control><Alt>", "<Control m",
                      "SHIFT+Caps_Lock", "CTRL+LOGO", String(repeating: "CTRL+", count: 40) + "m", "CTRL+\tm", "CTRL+nosuchkey"])
    func refusesWhatIsNotATrigger(text: String) {
        #expect(PortalTrigger(parsing: text) == nil)
    }

    @Test func capsLockAndABareKeyAreChordsAModifierAloneIsATap() {
        // A chord: registered with run_on_release (Activated at the press, Deactivated at the release).
        for keys in ["Caps_Lock", "F9", "Ctrl+Alt+M"] { #expect(PortalTrigger(keys: keys).isChord && PortalTrigger(keys: keys).isRegistrable) }
        // A modifier alone: the service fires it at its tap.
        for keys in ["Super", "Ctrl", "Alt", "Shift", "AltGr"] { #expect(!PortalTrigger(keys: keys).isChord && PortalTrigger(keys: keys).isRegistrable) }
        #expect(!PortalTrigger(keys: "Shift_L").isRegistrable)
        #expect(!PortalTrigger(keys: "Num_Lock").isRegistrable)
    }

    @Test func descriptionsReadBackToTheSameChord() {
        for text in ["CTRL+ALT+m", "LOGO+Return", "SHIFT+F9", "<Control><Alt>t", "Caps_Lock", "LOGO", "ALT+1"] {
            let t = PortalTrigger(parsing: text)
            #expect(t != nil)
            #expect(PortalTrigger(parsing: t?.keys ?? "") == t)
        }
    }
}

@Suite struct PortalSessionsTests {
    let a = "/org/freedesktop/portal/desktop/session/1_10/a"
    let b = "/org/freedesktop/portal/desktop/session/1_11/b"
    func request(_ id: String, _ trigger: String?, _ description: String = "it") -> PortalShortcutRequest {
        PortalShortcutRequest(id: id, description: description, preferredTrigger: trigger)
    }
    func bound(_ s: inout PortalSessions, _ path: String, _ requests: [PortalShortcutRequest], policy: PortalApprovalPolicy = .always,
               approvals: PortalApprovals = PortalApprovals(), taken: [String: String] = [:]) throws -> [PortalSessions.Decision] {
        let decisions = try s.decide(requests, path: path, policy: policy, approvals: approvals, taken: taken)
        s.bind(path: path, zip(requests, decisions).compactMap { r, d in if case .bind(let t) = d { (r, t) } else { nil } })
        return decisions
    }

    @Test func alwaysBindsAFreePreferredTriggerAndNothingTwice() throws {
        var s = PortalSessions()
        try s.create(path: a, app: "org.example.Talk")
        try s.create(path: b, app: "org.example.Other")
        let taken = PortalSessions.taken([("Ctrl+Alt+T", "Terminal"), ("ctrl+x ctrl+s", "Save")])
        #expect(try bound(&s, a, [request("talk", "CTRL+ALT+m"), request("dup", "<Control><Alt>m"), request("none", nil)], taken: taken)
                == [.bind(PortalTrigger(keys: "Ctrl+Alt+M")), .refuse, .refuse])
        // Another app: the same trigger (A has it), the user's Ctrl+Alt+T and a sequence's first chord are refused.
        #expect(try bound(&s, b, [request("t2", "CTRL+ALT+m"), request("term", "<Control><Alt>t"), request("x", "CTRL+x"), request("rec", "SHIFT+F9")],
                          taken: taken) == [.refuse, .refuse, .refuse, .bind(PortalTrigger(keys: "Shift+F9"))])
        #expect(s.allBindings.map(\.binding.trigger.keys) == ["Ctrl+Alt+M", "Shift+F9"])
        #expect(s.conflictOf(PortalTrigger(keys: "Ctrl+Alt+M"), session: b, taken: taken) == "org.example.Talk's shortcuts")
        #expect(s.conflictOf(PortalTrigger(keys: "Ctrl+Alt+T"), session: b, taken: taken) == "your command Terminal")
        // Each binding is its own command, found back by its id; closing the session drops them.
        let id = try #require(s.session(a)?.bindings.first?.commandID)
        #expect(s.binding(commandID: id)?.binding.shortcutID == "talk")
        let hadBindings = s.close(path: a)
        #expect(hadBindings)
        #expect(s.binding(commandID: id) == nil)
        #expect(s.allBindings.map(\.binding.shortcutID) == ["rec"])
        // The service's own table has Shift+F9: the binding is dropped, its session stays.
        let rec = try #require(s.allBindings.first?.binding.commandID)
        let dropped = s.drop(commandID: rec)
        #expect(dropped?.path == b)
        #expect(s.allBindings.isEmpty && s.session(b) != nil)
    }

    @Test func neverBindsOnlyWhatWasApprovedAndAskAsks() throws {
        var s = PortalSessions()
        try s.create(path: a, app: "talk-app")
        var approvals = PortalApprovals()
        let ok1 = approvals.approve(.init(app: "talk-app", shortcutID: "talk", trigger: PortalTrigger(keys: "Super+T"), description: "Talk"))
        #expect(ok1)
        #expect(try bound(&s, a, [request("talk", "CTRL+ALT+m"), request("new", "CTRL+ALT+n")], policy: .never, approvals: approvals)
                == [.bind(PortalTrigger(keys: "Super+T")), .refuse])
        #expect(try s.decide([request("talk", nil), request("new", "CTRL+ALT+t")], path: a, policy: .ask, approvals: approvals,
                             taken: ["Ctrl+Alt+T": "your command Terminal"])
                == [.bind(PortalTrigger(keys: "Super+T")), .ask(proposed: PortalTrigger(keys: "Ctrl+Alt+T"), conflict: "your command Terminal")])
    }

    @Test func askPutsOneQuestionPerShortcutAndBindsOnlyAFreeAnswer() throws {
        var s = PortalSessions()
        try s.create(path: a, app: "org.example.Other")
        try s.create(path: b, app: "mumble")
        _ = try bound(&s, a, [request("rec", "SHIFT+F9")])
        let taken = PortalSessions.taken([("Ctrl+Alt+T", "Terminal")])
        let requests = [request("ptt", "CAPS", "Push to talk"), request("mute", "SHIFT+F9", "Mute"), request("deafen", nil, "Deafen"),
                        request("other", "CTRL+ALT+d", "Other")]
        let decided = try s.decide(requests, path: b, policy: .ask, approvals: PortalApprovals(), taken: taken)
        #expect(decided == [.ask(proposed: PortalTrigger(keys: "Caps_Lock"), conflict: nil),
                            .ask(proposed: PortalTrigger(keys: "Shift+F9"), conflict: "org.example.Other's shortcuts"),
                            .ask(proposed: nil, conflict: nil), .ask(proposed: PortalTrigger(keys: "Ctrl+Alt+D"), conflict: nil)])
        // The person accepts Caps Lock, presses the taken Shift+F9 for "mute", Ctrl+Alt+m for
        // "deafen", Ctrl+Alt+m again for "other" (taken by then) — and is asked four times.
        let answers: [String: String] = ["ptt": "accept Caps_Lock", "mute": "accept Shift+F9", "deafen": "accept Ctrl+Alt+m",
                                         "other": "accept Ctrl+Alt+m"]
        let asked = Asked()
        let answered = s.answer(decided, for: requests, path: b, taken: taken) { p in
            asked.proposals.append(p)
            let id = requests.first { $0.description == p.description }?.id ?? ""
            // The dialog's line: `accept CHORD` in the service's names, or `refuse`.
            let line = answers[id] ?? "refuse"
            return line.hasPrefix("accept ") ? PortalTrigger(parsing: String(line.dropFirst(7))) : nil
        }
        #expect(answered == [.bind(PortalTrigger(keys: "Caps_Lock")), .refuse, .bind(PortalTrigger(keys: "Ctrl+Alt+M")), .refuse])
        #expect(asked.proposals.map(\.app) == ["mumble", "mumble", "mumble", "mumble"])
        #expect(asked.proposals[1].conflict == "org.example.Other's shortcuts")
        // No dialog (the default): nothing new.
        #expect(s.answer(decided, for: requests, path: b, taken: taken, consent: PortalConsentDialog.none) == [.refuse, .refuse, .refuse, .refuse])
    }

    final class Asked: @unchecked Sendable { var proposals: [PortalConsentProposal] = [] }

    @Test func theDialogsChordsReadAsTriggers() {
        // What the dialog accepts, in the service's names, is a trigger as the app's would be.
        #expect(PortalTrigger(parsing: "Ctrl+Alt+m") == PortalTrigger(keys: "Ctrl+Alt+M"))
        #expect(PortalTrigger(parsing: "Super") == PortalTrigger(keys: "Super"))
        #expect(PortalTrigger(parsing: "Caps_Lock") == PortalTrigger(keys: "Caps_Lock"))
        for chord in ["Ctrl+Nothing", "Shift+Caps_Lock", "Ctrl+M N", ""] { #expect(PortalTrigger(parsing: chord) == nil) }
    }

    @Test func hostileRequestsAreBounded() throws {
        var s = PortalSessions()
        for i in 0..<PortalSessions.maxSessionsPerApp { try s.create(path: a + "\(i)", app: "greedy") }
        #expect(throws: PortalSessions.Refusal.tooManySessions) { try s.create(path: a + "x", app: "greedy") }
        #expect(throws: PortalSessions.Refusal.duplicate) { try s.create(path: a + "0", app: "other") }
        let many = (0...PortalSessions.maxShortcuts).map { request("s\($0)", nil) }
        #expect(throws: PortalSessions.Refusal.tooManyShortcuts) { try s.decide(many, path: a + "0", policy: .always, approvals: PortalApprovals(), taken: [:]) }
        #expect(throws: PortalSessions.Refusal.invalid) {
            try s.decide([request("a\tb", nil)], path: a + "0", policy: .always, approvals: PortalApprovals(), taken: [:])
        }
        #expect(throws: PortalSessions.Refusal.invalid) {
            try s.decide([request("same", nil), request("same", nil)], path: a + "0", policy: .always, approvals: PortalApprovals(), taken: [:])
        }
        #expect(throws: PortalSessions.Refusal.unknownSession) { try s.decide([], path: b, policy: .always, approvals: PortalApprovals(), taken: [:]) }
        #expect(!PortalBackend.isSessionPath("/org/freedesktop/portal/desktop/session/1_2/x/../y"))
        #expect(PortalBackend.isSessionPath(a))
    }

    /// The log line of a BindShortcuts that bound less than asked: under "ask" the consent
    /// dialog answered (it exists now), so the line does not say there is no dialog.
    @Test func saysWhyShortcutsWereNotBound() {
        let ask = PortalBackend.notBoundReason(.ask)
        #expect(ask.contains("consent dialog") && !ask.contains("no dialog yet"))
        #expect(PortalBackend.notBoundReason(.never) == "approve = \"never\"")
        #expect(PortalBackend.notBoundReason(.always) == "taken or not a chord")
    }
}

@Suite struct PortalWatchLineTests {
    @Test func phasesBecomeActivatedAndDeactivated() {
        #expect(PortalWatch.lines(for: .press) == ["press"])
        #expect(PortalWatch.lines(for: .release) == ["release"])
        // A modifier alone (its tap) and the bar's tap (no phase): both, in order.
        #expect(PortalWatch.lines(for: .tap) == ["press", "release"])
        #expect(PortalWatch.lines(for: nil) == ["press", "release"])
        #expect(PortalWatch.lines(for: .hold).isEmpty && PortalWatch.lines(for: .repeat).isEmpty)
    }

    @Test func aChordIsRegisteredWithItsReleaseAModifierAloneWithout() {
        func spec(_ keys: String) -> ControlRequest.CommandSpec {
            PortalWatch.spec(PortalWatch.Binding(commandID: "portal:1", keys: keys, app: "mumble", description: "Push to talk"))
        }
        #expect(spec("Caps_Lock").phases.runOnRelease == [])
        #expect(spec("Ctrl+Alt+M").phases.runOnRelease == [])
        #expect(spec("Super").phases.runOnRelease == nil)
        #expect(spec("F9").group == "mumble" && spec("F9").title == "Push to talk")
        #expect(PortalWatch.binding("portal:7 Caps_Lock 6 mumble Push to talk".utf8[...])?.keys == "Caps_Lock")
        #expect(PortalWatch.binding("portal:8 Super 6 mumble Push to talk".utf8[...])?.keys == "Super")
    }

    @Test func aBindingLineReadsBackWithSpacesInItsFields() {
        #expect(PortalWatch.binding("portal:3 Ctrl+Alt+M 8 Talk App Push to talk".utf8[...])
                == PortalWatch.Binding(commandID: "portal:3", keys: "Ctrl+Alt+M", app: "Talk App", description: "Push to talk"))
        #expect(PortalWatch.binding("portal:3 Ctrl+Alt+M 9 Talk App Push".utf8[...]) == nil)
        #expect(PortalWatch.binding("portal:4 F9 3 obs ".utf8[...])?.description == "")
        #expect(PortalWatch.binding("portal:4 F9 3 obs".utf8[...])?.app == "obs")
        // Not a chord of the service, not one of the backend's ids, a length past the line.
        #expect(PortalWatch.binding("portal:5 Ctrl+Nothing 3 obs x".utf8[...]) == nil)
        #expect(PortalWatch.binding("save Ctrl+S 3 obs x".utf8[...]) == nil)
        #expect(PortalWatch.binding("portal:6 F9 30 obs x".utf8[...]) == nil)
    }
}

@Suite struct PortalApprovalsTests {
    let dir = EndToEndDirectory()

    @Test func roundTripsThroughItsFile() throws {
        var approvals = PortalApprovals()
        let ok2 = approvals.approve(.init(app: "com.obsproject.Studio", shortcutID: "record", trigger: PortalTrigger(keys: "Shift+F9"), description: "Start/stop recording"))
        #expect(ok2)
        let ok3 = approvals.approve(.init(app: "mumble", shortcutID: "ptt", trigger: PortalTrigger(keys: "Caps_Lock"), description: "Push to talk"))
        #expect(ok3)
        let ok4 = approvals.approve(.init(app: "", shortcutID: "x", trigger: PortalTrigger(keys: "F1"), description: ""))
        #expect(!ok4)
        let ok5 = approvals.approve(.init(app: "bad\napp", shortcutID: "x", trigger: PortalTrigger(keys: "F1"), description: ""))
        #expect(!ok5)
        let path = dir.path + "/portal-approvals"
        #expect(PortalApprovalsFile.write(approvals.encoded, to: path) == nil)
        let read = try PortalApprovals(decoding: String(decoding: try readWholeFile(path: path, limit: 1 << 20), as: UTF8.self))
        #expect(read == approvals)
        #expect(read.trigger(app: "mumble", shortcutID: "ptt") == PortalTrigger(keys: "Caps_Lock"))
        #expect(read.apps == ["com.obsproject.Studio", "mumble"])
        var revoked = read
        let count = revoked.revoke(app: "mumble")
        #expect(count == 1)
        #expect(revoked.trigger(app: "mumble", shortcutID: "ptt") == nil)
        #expect(revoked.entries.count == 1)
    }

    @Test func aBrokenLineIsSaidWithItsNumber() {
        #expect(throws: PortalApprovals.DecodeError(line: 3, message: "expected 4 tab-separated fields (app, shortcut id, chord, description), found 2")) {
            try PortalApprovals(decoding: "# header\napp\tid\tF1\tdesc\napp\tonly\n")
        }
        #expect(throws: PortalApprovals.DecodeError(line: 1, message: "'Ctrl+Nothing' is not a chord")) {
            try PortalApprovals(decoding: "app\tid\tCtrl+Nothing\tdesc\n")
        }
    }

    @Test func theStateDirectoryComesFromTheEnvironment() {
        #expect(PortalApprovals.path(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/kbd-commandd/portal-approvals")
        #expect(PortalApprovals.path(environment: ["HOME": "/h"]) == "/h/.local/state/kbd-commandd/portal-approvals")
        #expect(PortalApprovals.path(environment: ["XDG_STATE_HOME": "relative"]) == nil)
    }
}

/// approve = "ask" through a real child: `PortalConsentDialog.bar` runs the dialog's binary
/// (here a script that answers as `kbd-commandd-bar --consent` does) with the proposal's
/// arguments, reads its line and its exit status, and a dialog that hangs is killed.
@Suite(.serialized) struct PortalConsentChildTests {
    /// A stand-in dialog: records its argv, prints `answer`, exits with `status`.
    static func dialog(_ name: String, answer: String, status: Int32, sleep: Int = 0) throws -> (path: String, argv: String) {
        let dir = "/tmp/kbd-consent-\(getpid())"
        mkdir(dir, 0o700)
        let path = dir + "/" + name, argv = path + ".argv"
        // A hanging dialog is `exec sleep`: the kill reaches it, no orphan is left.
        let hang = sleep > 0 ? "exec sleep \(sleep)\n" : ""
        let script = "#!/bin/sh\nprintf '%s\\n' \"$@\" > '\(argv)'\n\(hang)printf '\(answer)\\n'\nexit \(status)\n"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o700)
        try #require(fd >= 0)
        _ = script.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
        return (path, argv)
    }

    /// Removes the stand-ins and their argv files.
    static func clean() {
        let dir = "/tmp/kbd-consent-\(getpid())"
        for name in ["accepts", "refuses", "no-display", "hangs", "slow"] { unlink(dir + "/" + name); unlink(dir + "/" + name + ".argv") }
        rmdir(dir)
    }

    static func read(_ path: String) -> String {
        (try? String(decoding: readWholeFile(path: path, limit: 1 << 16), as: UTF8.self)) ?? ""
    }

    final class Notes: @unchecked Sendable { var lines: [String] = [] }

    @Test func anAcceptedChordIsTheTriggerAndTheDialogIsToldTheProposal() throws {
        defer { Self.clean() }
        let d = try Self.dialog("accepts", answer: "accept Ctrl+Shift+F9", status: 0)
        let notes = Notes()
        let consent = PortalConsentDialog.bar(path: d.path, note: { notes.lines.append($0) })
        let proposal = PortalConsentProposal(app: "org.example.Talk", description: "Push to talk",
                                             chord: PortalTrigger(parsing: "CTRL+ALT+m"), conflict: "Mute (your table)")
        #expect(consent(proposal)?.keys == "Ctrl+Shift+F9")
        #expect(Self.read(d.argv) == "--consent\n--app=org.example.Talk\n--description=Push to talk\n--chord=Ctrl+Alt+M\n--conflict=Mute (your table)\n")
        #expect(notes.lines.isEmpty)
    }

    @Test func aRefusalAndAFailureBindNothingAndAFailureIsSaid() throws {
        defer { Self.clean() }
        let notes = Notes()
        let refuses = try Self.dialog("refuses", answer: "refuse", status: 1)
        let proposal = PortalConsentProposal(app: "a", description: "d", chord: nil, conflict: nil)
        #expect(PortalConsentDialog.bar(path: refuses.path, note: { notes.lines.append($0) })(proposal) == nil)
        #expect(notes.lines.isEmpty)
        let noDisplay = try Self.dialog("no-display", answer: "refuse", status: 69)
        #expect(PortalConsentDialog.bar(path: noDisplay.path, note: { notes.lines.append($0) })(proposal) == nil)
        #expect(notes.lines == ["consent dialog: the dialog could not be shown (no display)"])
        #expect(PortalConsentDialog.bar(path: "/nonexistent/kbd-commandd-bar", note: { notes.lines.append($0) })(proposal) == nil)
        #expect(notes.lines.count == 2)
    }

    /// While the dialog is open (0.8 s here) the agent's lines are still read: a push-to-talk
    /// pressed meanwhile reaches its app at the press, not when the dialog is answered.
    @Test func theAgentsLinesAreReadWhileTheDialogIsOpen() throws {
        defer { Self.clean() }
        let dir = "/tmp/kbd-consent-\(getpid())"
        mkdir(dir, 0o700)
        let path = dir + "/slow"
        let script = "#!/bin/sh\nsleep 0.8\nprintf 'accept Ctrl+Alt+m\\n'\n"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o700)
        try #require(fd >= 0)
        _ = script.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let meanwhile = PortalConsentMeanwhile()
        let lines = LineBuffer(maxLineBytes: 64)
        var heard: [(String, Int64)] = []
        meanwhile.fd = ends[0]
        meanwhile.readable = {
            _ = lines.read(from: ends[0], budget: 4096)
            while case .line(let bytes) = lines.nextLine() { heard.append((String(decoding: bytes, as: UTF8.self), monotonicNow().microseconds)) }
            return true
        }
        _ = "press portal:1\n".utf8CString.withUnsafeBufferPointer { write(ends[1], $0.baseAddress, $0.count - 1) }
        let consent = PortalConsentDialog.bar(path: path, meanwhile: meanwhile, note: { _ in })
        let proposal = PortalConsentProposal(app: "a", description: "d", chord: PortalTrigger(parsing: "CTRL+ALT+m"), conflict: nil)
        #expect(consent(proposal)?.keys == "Ctrl+Alt+M")
        let answered = monotonicNow().microseconds
        #expect(heard.map(\.0) == ["press portal:1"])
        #expect(heard.allSatisfy { answered - $0.1 > 400_000 })
    }

    @Test func aChildThatOutlivesItsTimeoutIsKilledAndCountsAsNoAnswer() throws {
        defer { Self.clean() }
        let d = try Self.dialog("hangs", answer: "accept Ctrl+Alt+m", status: 0, sleep: 30)
        let started = monotonicNow()
        let ran = try ChildProgram.output(d.path, arguments: [d.path], timeoutMilliseconds: 300)
        #expect(ran.status == nil)
        #expect(ran.output.isEmpty)
        #expect(monotonicNow().microseconds - started.microseconds < 10_000_000)
        let quick = try ChildProgram.output("/bin/sh", arguments: ["/bin/sh", "-c", "echo one; echo two; exit 3"], timeoutMilliseconds: 5000)
        #expect(quick.output == "one\ntwo\n" && quick.status == 3)
    }
}
