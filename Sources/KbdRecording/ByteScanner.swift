/// A cursor over one line's bytes for the small fixed grammars of evemu lines.
struct ByteScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { index >= bytes.count }

    /// Skips spaces and tabs; returns whether any were skipped.
    @discardableResult
    mutating func skipBlanks() -> Bool {
        let s = index
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        return index > s
    }

    /// True when only blanks, or blanks then a `#` comment, remain.
    mutating func atEndOrComment() -> Bool {
        skipBlanks()
        return atEnd || bytes[index] == UInt8(ascii: "#")
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// An unsigned hexadecimal number of 1...16 digits (an optional `0x` is accepted).
    mutating func hex() -> UInt64? {
        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "0"), bytes[index + 1] | 0x20 == UInt8(ascii: "x") {
            index += 2
        }
        var value: UInt64 = 0
        var digits = 0
        while index < bytes.count {
            let c = bytes[index]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: d = 0xFF
            }
            if d == 0xFF { break }
            digits += 1
            if digits > 16 { return nil }
            value = value << 4 | UInt64(d)
            index += 1
        }
        return digits > 0 ? value : nil
    }

    /// A decimal number with an optional sign; nil when there are no digits or it overflows 64 bits.
    mutating func decimal() -> Int64? {
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        let (value, digits) = unsignedDigits(limit: 19)
        guard digits > 0, let value else { return nil }
        return negative ? -value : value
    }

    /// Decimal digits only; returns the value and how many digits were read.
    mutating func unsignedDigits(limit: Int) -> (Int64?, Int) {
        var value: Int64 = 0
        var digits = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            digits += 1
            if digits > limit { return (nil, digits) }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int64(bytes[index] - UInt8(ascii: "0")))
            if o1 || o2 { return (nil, digits) }
            value = sum
            index += 1
        }
        return (value, digits)
    }

    /// The rest of the line as text (lossy UTF-8), trimmed of trailing blanks.
    func rest() -> String {
        var end = bytes.count
        while end > index, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self)
    }
}
