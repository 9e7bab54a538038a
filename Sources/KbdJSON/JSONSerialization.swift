extension JSONValue {
    /// Integral numbers up to this magnitude (2^53) print without a fraction.
    public static let maximumExactInteger: Double = 9_007_199_254_740_992

    /// Compact JSON text: no whitespace (`{"a":1,"b":[true,null]}`), object
    /// keys in insertion order, strings escaped as ``appendEscaped(_:to:)``
    /// does, numbers as ``appendNumber(_:to:)`` writes them.
    public func serialized() -> String {
        var output = ""
        appendSerialized(to: &output)
        return output
    }

    /// Appends the compact JSON text of this value to `output`.
    public func appendSerialized(to output: inout String) {
        switch self {
        case .null:
            output += "null"
        case .bool(let value):
            output += value ? "true" : "false"
        case .number(let value):
            Self.appendNumber(value, to: &output)
        case .string(let value):
            Self.appendQuoted(value, to: &output)
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                element.appendSerialized(to: &output)
            }
            output += "]"
        case .object(let object):
            output += "{"
            var first = true
            for (key, value) in object {
                if !first { output += "," }
                first = false
                Self.appendQuoted(key, to: &output)
                output += ":"
                value.appendSerialized(to: &output)
            }
            output += "}"
        }
    }

    /// Appends `number` as JSON: integral values within ±2^53 as integers
    /// (`398`, and `0` for `-0.0`), other finite values in Swift's shortest
    /// round-trip form (`0.1`, `1e-05`, `1.5e+300`), and `null` for NaN and
    /// infinities, which JSON cannot represent.
    public static func appendNumber(_ number: Double, to output: inout String) {
        guard number.isFinite else {
            output += "null"
            return
        }
        if number.rounded(.towardZero) == number, abs(number) <= maximumExactInteger {
            output += String(Int64(number))
        } else {
            output += number.description
        }
    }

    /// `number` formatted as ``appendNumber(_:to:)`` does.
    public static func formatNumber(_ number: Double) -> String {
        var output = ""
        appendNumber(number, to: &output)
        return output
    }

    /// Appends `string` as a JSON string literal, with its quotes.
    ///
    /// Use it to write JSON lines without building a ``JSONValue`` tree:
    /// ```swift
    /// var line = #"{"event":"attach","device":"#
    /// JSONValue.appendQuoted(deviceName, to: &line)
    /// line += "}"
    /// ```
    public static func appendQuoted(_ string: String, to output: inout String) {
        output += "\""
        appendEscaped(string, to: &output)
        output += "\""
    }

    /// `string` as a JSON string literal, with its quotes.
    public static func quoted(_ string: String) -> String {
        var output = ""
        appendQuoted(string, to: &output)
        return output
    }

    /// Appends the escaped contents of `string`, without quotes: `"` becomes
    /// `\"`, `\` becomes `\\`, control characters U+0000–U+001F, DEL and the C1
    /// controls U+007F–U+009F become `\u00XX` (lower-case hex, so a line feed is
    /// `\u000a`), and the line and paragraph separators U+2028 and U+2029 become
    /// `\u2028` and `\u2029`: a JSON line printed on a terminal cannot move the
    /// cursor (U+009B is CSI on 8-bit terminals) or break the line for JavaScript.
    /// Everything else, non-ASCII text included, is copied as UTF-8 verbatim.
    public static func appendEscaped(_ string: String, to output: inout String) {
        guard needsEscaping(string) else {
            output += string
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar.value {
            case 0x22: output += "\\\""
            case 0x5C: output += "\\\\"
            case 0..<0x20, 0x7F...0x9F:
                output += "\\u00"
                if scalar.value < 0x10 { output += "0" }
                output += String(scalar.value, radix: 16)
            case 0x2028: output += "\\u2028"
            case 0x2029: output += "\\u2029"
            default: output.unicodeScalars.append(scalar)
            }
        }
    }

    /// Whether `string` holds anything ``appendEscaped(_:to:)`` escapes (one pass over the bytes).
    static func needsEscaping(_ string: String) -> Bool {
        var utf8 = string.utf8.makeIterator()
        var previous: UInt8 = 0
        var beforePrevious: UInt8 = 0
        while let byte = utf8.next() {
            switch byte {
            case 0..<0x20, UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x7F: return true
            // C1 controls: C2 80 … C2 9F; U+2028 and U+2029: E2 80 A8 and E2 80 A9.
            case 0x80...0x9F where previous == 0xC2: return true
            case 0xA8...0xA9 where previous == 0x80 && beforePrevious == 0xE2: return true
            default: break
            }
            beforePrevious = previous
            previous = byte
        }
        return false
    }
}
