/// A token bucket on the clock of event times: `perSecond` units a second, holding at most
/// one second's worth. Credit is kept in millionths of a unit, so a caller that keeps
/// asking (50 requests a second against 20 allowed) still earns its share: nothing is lost
/// to rounding, and a refusal does not restart the refill.
public struct RateBudget: Sendable, Equatable {
    public let perSecond: Int
    /// Credit in millionths of a unit (a full bucket holds `perSecond * 1_000_000`).
    private var credit: Int64
    private var at: EventTime

    public init(perSecond: Int, now: EventTime) {
        self.perSecond = perSecond
        credit = Int64(perSecond) * 1_000_000
        at = now
    }

    /// The whole units left now.
    public mutating func left(now: EventTime) -> Int {
        refill(now)
        return Int(credit / 1_000_000)
    }

    /// Takes `cost` units when the bucket holds them (true); otherwise takes nothing.
    public mutating func take(_ cost: Int, now: EventTime) -> Bool {
        refill(now)
        let needed = Int64(cost) * 1_000_000
        guard needed <= credit else { return false }
        credit -= needed
        return true
    }

    /// Milliseconds until `cost` units are there (0: now).
    public mutating func wait(for cost: Int, now: EventTime) -> Int {
        refill(now)
        let missing = Int64(cost) * 1_000_000 - credit
        guard missing > 0, perSecond > 0 else { return 0 }
        // A unit a second is a million millionths per 1,000 ms.
        return Int((missing / Int64(perSecond) + 999) / 1000)
    }

    private mutating func refill(_ now: EventTime) {
        let elapsed = now.microseconds - at.microseconds
        at = now
        guard elapsed > 0 else { return }
        let full = Int64(perSecond) * 1_000_000
        // Beyond a second the bucket is full anyway (and the product cannot overflow).
        credit = min(full, credit + min(elapsed, 1_000_000) * Int64(perSecond))
    }
}
