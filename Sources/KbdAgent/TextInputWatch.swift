import CLinux
import KbdSystem
import KbdConfig
#if canImport(Glibc)
import Glibc
#endif

/// What AT-SPI says of an accessible object: whether text is typed into it. Numbers from
/// at-spi2-core's `AtspiRole` and `AtspiStateType` (the wire values of `GetRole` and
/// `GetState`, a bit set of two uint32 words).
package enum AccessibleText {
    package static let stateEditable: UInt32 = 7
    package static let stateReadOnly: UInt32 = 43
    package static let stateFocused: UInt32 = 12
    package static let stateActive: UInt32 = 1
    package static let stateShowing: UInt32 = 25

    /// Whether the state set (`GetState`'s words) has `state`.
    package static func has(_ state: UInt32, in states: [UInt32]) -> Bool {
        let word = Int(state / 32)
        return word < states.count && states[word] & (1 << (state % 32)) != 0
    }
    package static let roleTerminal: UInt32 = 60

    /// An editable text that is not read-only (a text field, a text view, a password field,
    /// a document being edited), or a terminal (VTE's, which is not "editable").
    package static func takesText(role: UInt32, states: [UInt32]) -> Bool {
        role == roleTerminal || (has(stateEditable, in: states) && !has(stateReadOnly, in: states))
    }

    /// What a focus claim (`object:state-changed:focused`, detail1 = 1) makes of text input,
    /// from the claimed object's answers (nil: it did not answer in time): nil when the claim
    /// is not believed (the object does not have the FOCUSED state now: a claim superseded
    /// or sent for an object that is not focused); true when an answer is missing (fail
    /// closed: shortcuts that would fire inside a text field stay off).
    package static func claim(role: UInt32?, states: [UInt32]?) -> Bool? {
        guard let states else { return true }
        guard has(stateFocused, in: states) else { return nil }
        guard let role else { return true }
        return takesText(role: role, states: states)
    }
}

/// Follows AT-SPI's focus events to one answer: does the focused object take text?
/// Objects are named by the application's bus name and the object path.
package struct AccessibleFocus: Equatable {
    package struct Object: Equatable {
        package var application: String
        package var path: String
        package init(application: String, path: String) {
            self.application = application
            self.path = path
        }
    }

    /// The focused object while it takes text (nil: no text field has the focus).
    package private(set) var textField: Object?
    package var textInput: Bool { textField != nil }

    package init() {}

    /// `object:state-changed:focused` with detail1 = 1.
    package mutating func focused(_ object: Object, takesText: Bool) {
        textField = takesText ? object : nil
    }

    /// `object:state-changed:focused` with detail1 = 0: the focus left `object`.
    package mutating func unfocused(_ object: Object) {
        if textField == object { textField = nil }
    }

    /// The application left the bus (it quit or crashed with a text field focused).
    package mutating func applicationGone(_ application: String) {
        if textField?.application == application { textField = nil }
    }
}

/// The desktop's answer to "does the focused widget take text?", read in a long-lived child
/// process of the agent (the agent itself never maps libsystemd: its memory stays as
/// measured, see DesktopProcess). The child writes one line per change on a pipe the
/// agent's epoll watches: no polling, no timer, and nothing wakes while nothing changes.
///
/// Lines: `source NAME` once (what it listens to), then `1` or `0` on every change, then
/// `error MESSAGE` before it exits. It ends when the agent does (PR_SET_PDEATHSIG and the
/// pipe). It never reads text or window titles: only whether the focused object is an
/// editable text.
final class TextInputWatch {
    let fd: Int32
    private let pid: pid_t
    private let lines = LineBuffer(maxLineBytes: 4096)

    enum Line: Equatable {
        case source(String)
        case textInput(Bool)
        case error(String)
        case warning(String)
    }

    /// Starts the child for `source` (not `.none`); `currentDesktop` (XDG_CURRENT_DESKTOP)
    /// decides what `auto` listens to.
    init(source: TextInputSource, currentDesktop: String?) throws(FocusSourceError) {
        var fds: [Int32] = [-1, -1]
        guard kbd_pipe2(&fds, Int32(O_CLOEXEC)) == 0 else { throw FocusSourceError(message: SystemError(operation: "pipe2", errno: errno).message) }
        let parent = getpid()
        let pid = fork()
        if pid == 0 {
            // Nothing of the agent's stays open here (its service connection, the focus
            // sockets, other children's pipes): only the pipe to the agent.
            let output = kbd_close_inherited(fds[1])
            _ = kbd_prctl_pdeathsig(SIGTERM)
            if getppid() != parent { _exit(0) }
            // The agent's signal mask (signalfd) is inherited: SIGTERM must end the child.
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGTERM)
            sigprocmask(SIG_UNBLOCK, &set, nil)
            signal(SIGPIPE, SIG_DFL)
            TextInputProducer(output: output, currentDesktop: currentDesktop).run(source: source)
            _exit(0)
        }
        close(fds[1])
        guard pid > 0 else {
            close(fds[0])
            throw FocusSourceError(message: SystemError(operation: "fork", errno: errno).message)
        }
        self.pid = pid
        fd = fds[0]
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(fd)
    }

    /// The lines that arrived; `ended` when the child closed the pipe (it exited).
    func read() -> (lines: [Line], ended: Bool) {
        var out: [Line] = []
        var ended = false
        switch lines.read(from: fd, budget: 65536) {
        case .bytes, .again: break
        case .eof, .error: ended = true
        }
        while case .line(let bytes) = lines.nextLine() {
            let text = String(decoding: bytes, as: UTF8.self)
            if text == "1" || text == "0" { out.append(.textInput(text == "1")) }
            else if text.hasPrefix("source ") { out.append(.source(String(text.dropFirst(7)))) }
            else if text.hasPrefix("error ") { out.append(.error(String(text.dropFirst(6)))) }
            else if text.hasPrefix("warning ") { out.append(.warning(String(text.dropFirst(8)))) }
        }
        return (out, ended)
    }
}

/// The child's side of TextInputWatch: connects, listens, writes lines.
package struct TextInputProducer {
    let output: Int32
    let currentDesktop: String?

    /// How long a focused object may take to say its role and states (then text input
    /// stays on: fail closed).
    static let answerMicroseconds: UInt64 = 250_000

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

    private func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(output, $0.baseAddress! + written, $0.count - written) }
            if n > 0 { written += n } else if n < 0 && errno == EINTR { continue } else { _exit(0) }  // the agent is gone
        }
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

    /// AT-SPI: the focused object's role and states, from the accessibility bus.
    private func accessibility(_ session: MessageBus) throws(MessageBus.Failure) {
        let address = try session.callString("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress")
        let bus = try MessageBus(address: address, callTimeoutMicroseconds: Self.answerMicroseconds)
        try bus.addMatch("type='signal',interface='org.a11y.atspi.Event.Object',member='StateChanged',arg0='focused'")
        try bus.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'")
        // Toolkits send only the events someone registered for (GTK 3 sends state changes
        // anyway; GTK 4 and Qt ask the registry).
        do {
            try bus.call("org.a11y.atspi.Registry", "/org/a11y/atspi/registry", "org.a11y.atspi.Registry", "RegisterEvent", string: "object:state-changed:focused")
        } catch {
            say("warning the accessibility registry did not take the event listener: \(error)")
        }
        say("source the accessibility bus (AT-SPI focus events)")
        var focus = AccessibleFocus()
        // What has the focus now (the agent may start after the user focused a text field).
        if let object = focusedNow(bus), let takes = claim(bus, object) {
            focus.focused(object, takesText: takes)
        }
        var said: Bool? = focus.textInput
        say(focus.textInput ? "1" : "0")
        while true {
            let signal = try bus.nextSignal()
            if signal.member == "NameOwnerChanged" {
                if signal.newOwner.isEmpty { focus.applicationGone(signal.detail) }
            } else if signal.member == "StateChanged", signal.detail == "focused" {
                let object = AccessibleFocus.Object(application: signal.sender, path: signal.path)
                if signal.detail1 != 0 {
                    // A claim the object does not back with its FOCUSED state is dropped.
                    if let takes = claim(bus, object) { focus.focused(object, takesText: takes) }
                } else {
                    focus.unfocused(object)
                }
            } else {
                continue
            }
            if focus.textInput != said { said = focus.textInput; say(focus.textInput ? "1" : "0") }
        }
    }

    /// The claimed object's states (FOCUSED re-checked) and role, each answer within
    /// `answerMicroseconds`; see `AccessibleText.claim`.
    private func claim(_ bus: MessageBus, _ object: AccessibleFocus.Object) -> Bool? {
        let states = try? bus.callUInt32Array(object.application, object.path, "org.a11y.atspi.Accessible", "GetState")
        guard let states, AccessibleText.has(AccessibleText.stateFocused, in: states) else { return AccessibleText.claim(role: nil, states: states) }
        let role = try? bus.callUInt32(object.application, object.path, "org.a11y.atspi.Accessible", "GetRole")
        return AccessibleText.claim(role: role, states: states)
    }

    /// The focused object of the desktop, found once at start: the registry's applications,
    /// their active window, and in it (depth first, through showing objects only, at most
    /// 2,000 objects) the one with the FOCUSED state. (GTK 3's application objects do not
    /// answer Collection.GetMatches, so the tree is walked.)
    private func focusedNow(_ bus: MessageBus) -> AccessibleFocus.Object? {
        let accessible = "org.a11y.atspi.Accessible"
        func states(_ o: MessageBus.ObjectReference) -> [UInt32] { (try? bus.callUInt32Array(o.name, o.path, accessible, "GetState")) ?? [] }
        func children(_ o: MessageBus.ObjectReference) -> [MessageBus.ObjectReference] { (try? bus.callObjects(o.name, o.path, accessible, "GetChildren")) ?? [] }
        var budget = 2_000
        for app in children(MessageBus.ObjectReference(name: "org.a11y.atspi.Registry", path: "/org/a11y/atspi/accessible/root")) {
            for window in children(app) where AccessibleText.has(AccessibleText.stateActive, in: states(window)) {
                var stack = children(window).reversed() as [MessageBus.ObjectReference]
                while let o = stack.popLast(), budget > 0 {
                    budget -= 1
                    let s = states(o)
                    if AccessibleText.has(AccessibleText.stateFocused, in: s) { return AccessibleFocus.Object(application: o.name, path: o.path) }
                    if AccessibleText.has(AccessibleText.stateShowing, in: s) { stack += children(o).reversed() }
                }
            }
        }
        return nil
    }

}
