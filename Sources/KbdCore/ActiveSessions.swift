/// Who is at each keyboard: for every seat logind knows, the uid owning its active session
/// (nil: nobody, the greeter or a switch in progress). A plain value: `KbdSeats` reads it
/// from logind, the control session and the pipeline decide with it, tests build it.
public struct ActiveSessions: Sendable, Equatable {
    /// The seat of a keyboard udev did not assign one (`ID_SEAT` unset), and of replayed recordings.
    public static let defaultSeat = "seat0"

    /// Whether logind (or elogind) runs: without it nobody is known to be at a keyboard.
    public var available: Bool
    /// Seat name → uid of its active session (seats without an active session are absent).
    public var activeUID: [String: UInt32]

    public init(available: Bool, activeUID: [String: UInt32] = [:]) {
        self.available = available
        self.activeUID = activeUID
    }

    /// No logind: nobody is known to be at any keyboard.
    public static let unavailable = ActiveSessions(available: false)

    /// The seats where `uid` owns the active session.
    public func seats(of uid: UInt32) -> [String] { activeUID.filter { $0.value == uid }.map(\.key).sorted() }

    /// Whether `uid` owns the active session of some seat.
    public func isActive(_ uid: UInt32) -> Bool { activeUID.values.contains(uid) }

    /// What changed from `old` to this value: per seat, the uid that left and the one that came.
    public func changes(from old: ActiveSessions) -> [SeatChange] {
        let seats = Set(old.activeUID.keys).union(activeUID.keys).sorted()
        return seats.compactMap { seat in
            let before = old.activeUID[seat], after = activeUID[seat]
            return before == after ? nil : SeatChange(seat: seat, from: before, to: after)
        }
    }
}

/// A seat's active session changed owner (a user switch, a login, a logout, a lock screen
/// of another user).
public struct SeatChange: Sendable, Equatable {
    public var seat: String
    public var from: UInt32?
    public var to: UInt32?
    public init(seat: String, from: UInt32?, to: UInt32?) {
        self.seat = seat
        self.from = from
        self.to = to
    }
}
