/// The geometry model with memory: the state the daemon or a replay holds,
/// and the last report, so each change reports which rules it activated and
/// deactivated.
///
/// ```swift
/// var geometry = KeyboardGeometry(state)          // geometry.report: initial report
/// if let report = geometry.setHardwareKeyboard(true) {
///     emit(report.jsonLine(leading: ["event": "geometry", "time": .number(t)]))
/// }
/// ```
public struct KeyboardGeometry: Sendable {
    /// The current input.
    public private(set) var state: GeometryState
    /// The report for the current state (the first one lists every active
    /// rule as activated).
    public private(set) var report: GeometryReport

    /// Starts from `state`.
    public init(_ state: GeometryState) {
        self.state = state
        self.report = GeometryModel.report(for: state)
    }

    /// Replaces the whole state and returns the new report.
    @discardableResult
    public mutating func update(to newState: GeometryState) -> GeometryReport {
        state = newState
        report = GeometryModel.report(for: newState, previous: report)
        return report
    }

    /// Changes the state in place and returns the new report.
    @discardableResult
    public mutating func update(_ change: (inout GeometryState) -> Void) -> GeometryReport {
        var newState = state
        change(&newState)
        return update(to: newState)
    }

    /// Records whether a hardware keyboard is present. Returns the new report
    /// when that changes the geometry, nil when it doesn't (the same presence
    /// again, or a change while the software keyboard is hidden).
    public mutating func setHardwareKeyboard(_ present: Bool) -> GeometryReport? {
        guard present != state.hardwareKeyboard else { return nil }
        let old = report
        let new = update { $0.hardwareKeyboard = present }
        return new.hasSameGeometry(as: old) ? nil : new
    }

    /// Records a new software keyboard state (from the shell). Returns the
    /// new report when that changes the geometry, nil when it doesn't (for
    /// instance while the mini toolbar stands in for a shown keyboard).
    public mutating func setSoftwareKeyboard(_ keyboard: SoftwareKeyboard) -> GeometryReport? {
        guard keyboard != state.keyboard else { return nil }
        let old = report
        let new = update { $0.keyboard = keyboard }
        return new.hasSameGeometry(as: old) ? nil : new
    }
}
