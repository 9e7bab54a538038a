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
