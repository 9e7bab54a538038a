public import KbdCore

/// Where the service learns who is at each seat: logind's files through sd-login
/// (`SystemdLogin`), or a fake in tests. The daemon watches `changeDescriptors` in its
/// event loop and calls `read()` after `acknowledgeChange()`: no polling.
public protocol LoginSource: AnyObject {
    /// The active session's uid of every seat now (`.unavailable` without logind).
    func read() -> ActiveSessions
    /// Readable when logind changed its seats' or sessions' files (empty: nothing to watch).
    var changeDescriptors: [Int32] { get }
    /// Clears the descriptor's readiness after it woke the loop.
    func acknowledgeChange()
}

/// Why logind cannot be followed, for the refusal a user's agent reads and the log.
public struct SeatsUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Who is active, kept current: reads the source again when its descriptor fires and says
/// which seats changed hands.
public final class SeatTracker {
    public let source: any LoginSource
    public private(set) var current: ActiveSessions

    public init(source: any LoginSource) {
        self.source = source
        self.current = source.read()
    }

    /// After the change descriptor was readable: the seats whose active user changed.
    public func refresh() -> [SeatChange] {
        source.acknowledgeChange()
        let next = source.read()
        let changes = next.changes(from: current)
        current = next
        return changes
    }
}
