import CLinux
import KbdCore
import KbdSystem
import KbdConfig
import KbdProcess
#if canImport(Glibc)
import Glibc
#endif

// The text-input watch's bus client: KWin's property and AT-SPI's focus events, read in the
// watch's child process (TextInputWatch.swift); what they mean is decided in
// TextInputDecision.swift.

/// The child's side of TextInputWatch: connects, listens, writes lines.
package struct TextInputProducer {
    let output: Int32
    /// The agent's lines (`window PID`, `window none`, `window unknown`: FocusedApplication),
    /// -1 for none.
    let input: Int32
    let currentDesktop: String?
    /// The focused window's application when the child started.
    let window: FocusedApplication

    /// How long a focused object may take to say its role and states (then text input
    /// stays on: fail closed).
    static let answerMicroseconds: UInt64 = 250_000
    /// How long the registration of the focus listener may take: the registry may be started
    /// on demand first (D-Bus activation; dbus-daemon allows a start 25 s).
    static let registrationMicroseconds: UInt64 = 25_000_000

    /// `auto` listens to KWin on KDE only: the desktop says so (XDG_CURRENT_DESKTOP), not a
    /// bus name any session client may own; elsewhere the accessibility bus.
    package static func usesKWin(currentDesktop: String?) -> Bool {
        (currentDesktop ?? "").split(separator: ":").contains { $0.uppercased() == "KDE" }
    }

    static let kwinName = "org.kde.KWin"
    static let kwinPath = "/VirtualKeyboard"
    static let kwinInterface = "org.kde.kwin.VirtualKeyboard"
    static let kwinProperty = "activeClientSupportsTextInput"

    func run(source: TextInputSource) {
        do {
            let session = try MessageBus()
            switch source {
            case .none: return
            case .kwin: try kwin(session)
            case .accessibility: try accessibility(session)
            case .auto:
                if Self.usesKWin(currentDesktop: currentDesktop), (try? kwinValue(session)) != nil {
                    try kwin(session)
                } else {
                    try accessibility(session)
                }
            }
        } catch {
            say("error \(error)")
        }
    }

    /// One line to the agent (ChildLine: one line whatever the message holds; exits when the agent is gone).
    private func say(_ line: String) {
        ChildLine(decoding: line).write(to: output)
    }

    private func kwinValue(_ bus: MessageBus) throws(MessageBus.Failure) -> Bool {
        try bus.getBool(Self.kwinName, Self.kwinPath, Self.kwinInterface, Self.kwinProperty)
    }

    /// KWin tells whether the focused Wayland client uses text input (text-input v2/v3).
    private func kwin(_ bus: MessageBus) throws(MessageBus.Failure) {
        try bus.addMatch("type='signal',sender='\(Self.kwinName)',path='\(Self.kwinPath)',interface='\(Self.kwinInterface)',member='\(Self.kwinProperty)Changed'")
        try bus.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.kwinName)'")
        var value = try kwinValue(bus)
        say("source KWin's \(Self.kwinProperty)")
        say(value ? "1" : "0")
        while true {
            let signal = try bus.nextSignal()
            if signal.member == "NameOwnerChanged" {
                if signal.newOwner.isEmpty { say("0"); throw MessageBus.Failure(operation: "KWin", message: "left the session bus") }
                continue
            }
            let now = try kwinValue(bus)
            if now != value { value = now; say(now ? "1" : "0") }
        }
    }

    /// AT-SPI: focus claims on the accessibility bus, believed as FocusClaims decides (the
    /// sender owns the focused window; the object is FOCUSED; its role and states); every
    /// question asked without waiting, with `answerMicroseconds` for its answer.
    private func accessibility(_ session: MessageBus) throws(MessageBus.Failure) {
        let bus = try accessibilityBus(session)
        // On KDE without a focus source, KWin names the focused window's process (a script).
        var kwinWindow: KWinActiveWindow?
        var start = window
        if window == .unknown, Self.usesKWin(currentDesktop: currentDesktop), let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }),
           runtime.hasPrefix("/") {
            do {
                kwinWindow = try KWinActiveWindow(session: session, runtimeDirectory: runtime)
                start = .none  // until KWin says
            } catch {
                say("warning KWin does not say whose window has the focus (\(error)); every focus claim is checked on its object only")
            }
        }
        say("source the accessibility bus (AT-SPI focus events\(kwinWindow != nil ? "; the focused window's process from KWin" : ""))")
        var watch = AccessibilityWatch(bus: bus, claims: FocusClaims(window: start))
        // What has the focus now (the agent may start after the user focused a text field).
        switch focusedNow(bus) {
        case .object(let object): watch.send(watch.claims.claimed(object))
        case .nothing: break
        case .unanswered:
            say("warning the accessibility tree did not answer within \(Self.walkMilliseconds) ms; text input is on until an application claims the focus")
            watch.claims.undecided()
        }
        let lines = LineBuffer(maxLineBytes: 256)
        while true {
            if kwinWindow != nil {
                for call in try session.step().calls {
                    if let now = kwinWindow?.window(call) { watch.send(watch.claims.windowChanged(now)) }
                }
            }
            try watch.step()
            sayTextInput(&watch)
            let ready = try bus.wait(orReadable: [input, kwinWindow != nil ? session.fd : -1])
            guard ready[0] else { continue }
            // The agent: whose window has the focus (KWin's word wins over the agent's "unknown").
            for window in readFocusedApplications(lines) where kwinWindow == nil {
                watch.send(watch.claims.windowChanged(window))
            }
            sayTextInput(&watch)
        }
    }

    /// The accessibility bus (its address from the session bus), listening to focus changes
    /// and to applications leaving it.
    private func accessibilityBus(_ session: MessageBus) throws(MessageBus.Failure) -> MessageBus {
        let address = try session.callString("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress")
        let bus = try MessageBus(address: address, callTimeoutMicroseconds: Self.answerMicroseconds)
        try bus.addMatch("type='signal',interface='org.a11y.atspi.Event.Object',member='StateChanged',arg0='focused'")
        try bus.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'")
        // Toolkits send only the events someone registered for (GTK 3 sends state changes
        // anyway; GTK 4 and Qt ask the registry). The registry (at-spi2-registryd) is started on
        // demand by the accessibility bus, which the GetAddress above may just have started:
        // at login, on a busy machine, that takes longer than a focused object's answer may
        // (`answerMicroseconds`), so the registration waits as long as a start may take. With
        // the answer's 250 ms, it failed with "Connection timed out" while the registry,
        // once up, took the registration all the same.
        do {
            try bus.call("org.a11y.atspi.Registry", "/org/a11y/atspi/registry", "org.a11y.atspi.Registry", "RegisterEvent", string: "object:state-changed:focused",
                         timeoutMicroseconds: Self.registrationMicroseconds)
        } catch {
            say("warning the accessibility registry did not take the event listener: \(error)")
        }
        return bus
    }

    /// Says "1" or "0" when FocusClaims' decision changed since it last said.
    private func sayTextInput(_ watch: inout AccessibilityWatch) {
        if watch.claims.textInput != watch.said {
            watch.said = watch.claims.textInput
            say(watch.claims.textInput ? "1" : "0")
        }
    }

    /// The agent's lines that came (FocusedApplication each); exits when the agent is gone.
    private func readFocusedApplications(_ lines: LineBuffer) -> [FocusedApplication] {
        switch lines.read(from: input, budget: 4096) {
        case .eof, .error: _exit(0)  // the agent is gone
        case .bytes, .again: break
        }
        var windows: [FocusedApplication] = []
        while case .line(let bytes) = lines.nextLine() {
            if let window = FocusedApplication(line: String(decoding: bytes, as: UTF8.self)) { windows.append(window) }
        }
        return windows
    }

    /// How long the walk at start may take in all (an application that answers slowly or
    /// never cannot hold the watch up longer).
    static let walkMilliseconds: Int64 = 1_000

    enum FoundFocus { case object(AccessibleFocus.Object), nothing, unanswered }

    /// The focused object of the desktop, found once at start: the registry's applications
    /// (only the focused window's, when its process is known), their active window, and in it
    /// (depth first, through showing objects only, at most 2,000 objects) the one with the
    /// FOCUSED state, all within `walkMilliseconds`. (GTK 3's application objects do not
    /// answer Collection.GetMatches, so the tree is walked.) The object found is a claim like
    /// any other (FocusClaims checks it).
    private func focusedNow(_ bus: MessageBus) -> FoundFocus {
        let accessible = "org.a11y.atspi.Accessible"
        let deadline = monotonicNow().microseconds + Self.walkMilliseconds * 1000
        var late = false
        func due() -> Bool {
            if !late, monotonicNow().microseconds > deadline { late = true }
            return late
        }
        func states(_ o: MessageBus.ObjectReference) -> [UInt32] { due() ? [] : (try? bus.callUInt32Array(o.name, o.path, accessible, "GetState")) ?? [] }
        func children(_ o: MessageBus.ObjectReference) -> [MessageBus.ObjectReference] { due() ? [] : (try? bus.callObjects(o.name, o.path, accessible, "GetChildren")) ?? [] }
        func pid(_ name: String) -> UInt32? {
            try? bus.callUInt32("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID", string: name)
        }
        var budget = 2_000
        for app in children(MessageBus.ObjectReference(name: "org.a11y.atspi.Registry", path: "/org/a11y/atspi/accessible/root")) {
            if case .pid(let focused) = window, pid(app.name) != UInt32(bitPattern: focused) { continue }
            for frame in children(app) where AccessibleText.has(AccessibleText.stateActive, in: states(frame)) {
                var stack = children(frame).reversed() as [MessageBus.ObjectReference]
                while let o = stack.popLast(), budget > 0 {
                    budget -= 1
                    let s = states(o)
                    if AccessibleText.has(AccessibleText.stateFocused, in: s) { return .object(AccessibleFocus.Object(application: o.name, path: o.path)) }
                    if AccessibleText.has(AccessibleText.stateShowing, in: s) { stack += children(o).reversed() }
                }
            }
        }
        return late ? .unanswered : .nothing
    }

}

/// The accessibility bus's questions and answers: FocusClaims asks (a sender's pid, an
/// object's states or role), the questions go out without waiting, and each answer comes
/// back to FocusClaims by its tag.
private struct AccessibilityWatch {
    let bus: MessageBus
    var claims: FocusClaims
    var kinds: [UInt64: FocusClaims.Question] = [:]
    /// What was last said to the agent (nil: nothing yet).
    var said: Bool?

    init(bus: MessageBus, claims: FocusClaims) {
        self.bus = bus
        self.claims = claims
    }

    mutating func send(_ asks: [FocusClaims.Ask]) {
        for a in asks {
            do throws(MessageBus.Failure) {
                switch a.question {
                case .pid(let name):
                    try bus.ask(tag: a.tag, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                                argument: name, words: false)
                case .states(let o): try bus.ask(tag: a.tag, o.application, o.path, "org.a11y.atspi.Accessible", "GetState", words: true)
                case .role(let o): try bus.ask(tag: a.tag, o.application, o.path, "org.a11y.atspi.Accessible", "GetRole", words: false)
                }
                kinds[a.tag] = a.question
            } catch {
                send(claims.answered(a.tag, .missing))  // not even sent: no answer (fail closed)
            }
        }
    }

    /// The bus's signals (focus changes, applications gone) and answers that came.
    mutating func step() throws(MessageBus.Failure) {
        let (signals, answers, _) = try bus.step()
        for signal in signals {
            if signal.member == "NameOwnerChanged" {
                if signal.newOwner.isEmpty { claims.applicationGone(signal.detail) }
            } else if signal.member == "StateChanged", signal.detail == "focused" {
                let object = AccessibleFocus.Object(application: signal.sender, path: signal.path)
                if signal.detail1 != 0 { send(claims.claimed(object)) } else { claims.unfocused(object) }
            }
        }
        for answer in answers {
            guard let question = kinds.removeValue(forKey: answer.tag) else { continue }
            let value: FocusClaims.Answer
            switch question {
            case .states: value = answer.words.map { .words($0) } ?? .missing
            case .pid, .role: value = answer.value.map { .number($0) } ?? .missing
            }
            send(claims.answered(answer.tag, value))
        }
    }
}
