/// A little-endian bit set over byte storage, the layout of evdev's `EVIOCGBIT`
/// masks and of evemu's `B:`/`P:` lines.
public struct Bitmask: Sendable, Hashable {
    public private(set) var bytes: [UInt8]

    public init(bytes: [UInt8] = []) {
        self.bytes = bytes
        trim()
    }

    public init<S: Sequence>(codes: S) where S.Element: BinaryInteger {
        self.bytes = []
        for code in codes { insert(Int(code)) }
    }

    @inlinable
    public func contains(_ bit: Int) -> Bool {
        let byte = bit >> 3
        guard bit >= 0, byte < bytes.count else { return false }
        return bytes[byte] & (1 << UInt8(bit & 7)) != 0
    }

    public mutating func insert(_ bit: Int) {
        precondition(bit >= 0)
        let byte = bit >> 3
        if byte >= bytes.count { bytes.append(contentsOf: repeatElement(0, count: byte + 1 - bytes.count)) }
        bytes[byte] |= 1 << UInt8(bit & 7)
    }

    /// Appends eight bytes read from one evemu line at byte offset `offset`.
    package mutating func set(bytes chunk: [UInt8], at offset: Int) {
        if offset + chunk.count > bytes.count {
            bytes.append(contentsOf: repeatElement(0, count: offset + chunk.count - bytes.count))
        }
        for (i, b) in chunk.enumerated() { bytes[offset + i] = b }
        trim()
    }

    public var isEmpty: Bool { bytes.isEmpty }

    /// The set bits in ascending order.
    public var members: [Int] {
        var out: [Int] = []
        for (i, byte) in bytes.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (1 << UInt8(bit)) != 0 { out.append(i * 8 + bit) }
        }
        return out
    }

    public var count: Int { bytes.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// Byte `index`, zero past the stored end.
    public func byte(_ index: Int) -> UInt8 { index < bytes.count ? bytes[index] : 0 }

    private mutating func trim() {
        while let last = bytes.last, last == 0 { bytes.removeLast() }
    }
}
