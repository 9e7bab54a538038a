public import KbdCore

/// Named one-shot timers on one clock (libinput's `timer.h`): each subsystem arms the
/// timers it owns by name, and the loop waits until the earliest. Arming a name again
/// moves it; a cancelled timer never fires. Pure: no descriptor, no clock of its own.
public struct TimerSet<Name: Hashable & Sendable>: Sendable {
    private struct Entry: Sendable {
        var deadline: EventTime
        /// Orders timers due at the same time: the one armed first fires first.
        var sequence: Int
    }

    private var entries: [Name: Entry] = [:]
    private var sequence = 0

    public init() {}

    /// Fires `name` once at `deadline` (at the next turn if that has passed); nil cancels it.
    public mutating func arm(_ name: Name, at deadline: EventTime?) {
        guard let deadline else { return cancel(name) }
        sequence += 1
        entries[name] = Entry(deadline: deadline, sequence: sequence)
    }

    public mutating func cancel(_ name: Name) {
        entries[name] = nil
    }

    /// When `name` fires; nil when it is not armed.
    public func deadline(of name: Name) -> EventTime? { entries[name]?.deadline }

    public var isEmpty: Bool { entries.isEmpty }

    /// The earliest deadline; nil: nothing armed, the loop may sleep until input.
    public var nextDeadline: EventTime? { entries.values.lazy.map(\.deadline).min() }

    /// Removes and returns the timers due at `now`, earliest first.
    public mutating func takeDue(at now: EventTime) -> [Name] {
        let due = entries.filter { $0.value.deadline <= now }
            .sorted { ($0.value.deadline, $0.value.sequence) < ($1.value.deadline, $1.value.sequence) }
        for (name, _) in due { entries[name] = nil }
        return due.map(\.key)
    }
}
