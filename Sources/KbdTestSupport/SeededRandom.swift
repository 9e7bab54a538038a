/// SplitMix64: a small seeded generator for reproducible test data (generated
/// recordings, randomised property tests). Not for anything security related.
public struct SeededRandom: Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<n`.
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    public mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }
    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) < p * 1_000_000 }
}
