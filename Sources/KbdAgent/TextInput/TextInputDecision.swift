// The text-input watch's decision logic, without a bus: what AT-SPI's roles and states mean,
// and which focus event wins. The bus client (TextInputBusClient.swift) feeds it.

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

/// The application of the window that has the keyboard focus, as the agent's focus source
/// names it (sway's and i3's `pid`, X11's `_NET_WM_PID`).
package enum FocusedApplication: Equatable, Sendable {
    /// No focus source, or one that does not say whose window it is (Hyprland, KWin): focus
    /// claims from any application are checked (role and state), as the only evidence there is.
    case unknown
    /// No window has the focus: no application's claim is believed.
    case none
    /// The focused window belongs to this process.
    case pid(Int32)

    /// The line the agent writes to the watch (`window 1234`, `window none`, `window unknown`).
    package var line: String {
        switch self {
        case .unknown: "window unknown"
        case .none: "window none"
        case .pid(let pid): "window \(pid)"
        }
    }

    package init?(line: String) {
        guard line.hasPrefix("window ") else { return nil }
        switch line.dropFirst(7) {
        case "unknown": self = .unknown
        case "none": self = .none
        case let word:
            guard let pid = Int32(word), pid > 0 else { return nil }
            self = .pid(pid)
        }
    }
}

/// Which focus claims on the accessibility bus are believed, and what they make of text input
/// (issue 25). Any client of the accessibility bus may send `object:state-changed:focused`;
/// a claim counts only when
/// - its sender is the application that owns the focused window (its process id, which the
///   bus itself says: `GetConnectionUnixProcessID`; unknown when the focus source does not
///   name the window's process: then every claim is checked as below),
/// - the claimed object has the FOCUSED state when asked, and its role and states say whether
///   text is typed into it.
///
/// Every question is asked without waiting (the bus client sends `asks` and feeds the answers
/// back by tag, or `.missing` when none came within its timeout). A newer claim supersedes
/// the one being checked. While a claim of the focused application is being checked, and when
/// an answer is late or missing, text input is on: shortcuts that would fire inside a text
/// field stay off (fail closed). Pure: no bus, no clock.
package struct FocusClaims {
    package typealias Object = AccessibleFocus.Object

    package enum Question: Equatable, Sendable {
        /// `org.freedesktop.DBus.GetConnectionUnixProcessID(name)`.
        case pid(String)
        /// `org.a11y.atspi.Accessible.GetState` of the object.
        case states(Object)
        /// `org.a11y.atspi.Accessible.GetRole` of the object.
        case role(Object)
    }

    package struct Ask: Equatable, Sendable {
        package var tag: UInt64
        package var question: Question
    }

    package enum Answer: Equatable, Sendable {
        /// A uint32 (a process id, a role).
        case number(UInt32)
        /// An array of uint32 (a state set).
        case words([UInt32])
        /// An error, or no answer within the timeout.
        case missing
    }

    /// At most this many applications are remembered (process ids and last claims); past it
    /// the memory is cleared and their next claims ask again.
    package static let maxApplications = 512

    package private(set) var focus = AccessibleFocus()
    package private(set) var window: FocusedApplication

    /// The claim being checked: its object and the tags of its two questions.
    private struct Check {
        var object: Object
        var sequence: UInt64
        var statesTag: UInt64
        var roleTag: UInt64
        var states: [UInt32]?
        var statesAnswered = false
        var role: UInt32?
        var roleAnswered = false
    }
    private var check: Check?
    /// Process ids of the applications (bus names are never reused on one bus).
    private var pids: [String: Int32] = [:]
    /// Process ids asked for: tag -> application.
    private var asked: [UInt64: String] = [:]
    /// Each application's newest claim (it waits there for its process id, and is checked again
    /// when that application's window gains the focus).
    private var latest: [String: (object: Object, sequence: UInt64)] = [:]
    private var nextTag: UInt64 = 1
    private var sequence: UInt64 = 0

    package init(window: FocusedApplication) { self.window = window }

    /// The desktop did not say in time what has the focus (the walk at start ran out of time):
    /// text input is on until a claim is decided or the focused window changes.
    private var undecidedFocus = false

    /// Whether text input is on: a text field has the focus, a claim of the focused
    /// application is being checked, or nothing said in time what has the focus (fail closed).
    package var textInput: Bool { check != nil || undecidedFocus || focus.textInput }

    /// Nothing answered in time what has the focus now.
    package mutating func undecided() { undecidedFocus = true }

    /// Whether `application` owns the focused window, as far as is known (nil: its process id
    /// is not known yet).
    private func ownsFocusedWindow(_ application: String) -> Bool? {
        switch window {
        case .unknown: return true
        case .none: return false
        case .pid(let focused):
            guard let pid = pids[application] else { return nil }
            return pid == focused
        }
    }

    private mutating func tag() -> UInt64 {
        defer { nextTag &+= 1 }
        return nextTag
    }

    private mutating func startCheck(_ object: Object, _ sequence: UInt64) -> [Ask] {
        let states = tag(), role = tag()
        check = Check(object: object, sequence: sequence, statesTag: states, roleTag: role)
        return [Ask(tag: states, question: .states(object)), Ask(tag: role, question: .role(object))]
    }

    private mutating func askPid(_ application: String) -> [Ask] {
        guard !asked.values.contains(application) else { return [] }
        let t = tag()
        asked[t] = application
        return [Ask(tag: t, question: .pid(application))]
    }

    /// `object:state-changed:focused` with detail1 = 1.
    package mutating func claimed(_ object: Object) -> [Ask] {
        if latest.count >= Self.maxApplications, latest[object.application] == nil { latest.removeAll(); pids.removeAll() }
        sequence &+= 1
        latest[object.application] = (object, sequence)
        switch ownsFocusedWindow(object.application) {
        case true?: return startCheck(object, sequence)
        case false?: return []  // not the focused window's application: dropped
        case nil: return askPid(object.application)
        }
    }

    /// `object:state-changed:focused` with detail1 = 0 (only the application itself sends it
    /// for its objects: the bus sets the sender).
    package mutating func unfocused(_ object: Object) {
        focus.unfocused(object)
        if check?.object == object { check = nil }
    }

    /// The application left the bus.
    package mutating func applicationGone(_ application: String) {
        focus.applicationGone(application)
        pids[application] = nil
        latest[application] = nil
        asked = asked.filter { $0.value != application }
        if check?.object.application == application { check = nil }
    }

    /// The agent says whose window has the focus now. A text field of another application no
    /// longer has it; the newest claim of the window's application is checked again (it may
    /// have come before the window's focus event).
    package mutating func windowChanged(_ now: FocusedApplication) -> [Ask] {
        guard now != window else { return [] }
        window = now
        undecidedFocus = false
        guard now != .unknown else { return [] }
        if let field = focus.textField, ownsFocusedWindow(field.application) != true { focus.applicationGone(field.application) }
        if let c = check, ownsFocusedWindow(c.object.application) != true { check = nil }
        var asks: [Ask] = []
        var newest: (object: Object, sequence: UInt64)?
        for (application, claim) in latest {
            switch ownsFocusedWindow(application) {
            case true?: if newest == nil || claim.sequence > newest!.sequence { newest = claim }
            case false?: break
            case nil: asks += askPid(application)
            }
        }
        if let newest, newest.sequence > check?.sequence ?? 0 { asks += startCheck(newest.object, newest.sequence) }
        return asks
    }

    /// An answer (or `.missing`) to the ask tagged `tag`; answers to superseded asks are ignored.
    package mutating func answered(_ tag: UInt64, _ answer: Answer) -> [Ask] {
        if let application = asked.removeValue(forKey: tag) {
            guard case .number(let pid) = answer else {
                // The bus did not say who sent it: believed as far as text input goes (on).
                if let claim = latest[application] { check = nil; focus.focused(claim.object, takesText: true) }
                return []
            }
            pids[application] = Int32(bitPattern: pid)
            guard let claim = latest[application], ownsFocusedWindow(application) == true else { return [] }
            if let c = check, c.sequence > claim.sequence { return [] }  // a newer claim is being checked
            return startCheck(claim.object, claim.sequence)
        }
        guard var c = check else { return [] }
        if tag == c.statesTag {
            if case .words(let w) = answer { c.states = w }
            c.statesAnswered = true
        } else if tag == c.roleTag {
            if case .number(let r) = answer { c.role = r }
            c.roleAnswered = true
        } else {
            return []
        }
        check = c
        // Not focused when asked: dropped at once. Otherwise both answers decide.
        let notFocused = c.states.map { !AccessibleText.has(AccessibleText.stateFocused, in: $0) } ?? false
        guard notFocused || (c.statesAnswered && c.roleAnswered) else { return [] }
        check = nil
        if let takes = AccessibleText.claim(role: c.role, states: c.statesAnswered ? c.states : nil) {
            focus.focused(c.object, takesText: takes)
            undecidedFocus = false
        }
        return []
    }
}
