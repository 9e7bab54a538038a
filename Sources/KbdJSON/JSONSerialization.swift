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
    /// `\"`, `\` becomes `\\`, control characters U+0000–U+001F become
    /// `\u00XX` (lower-case hex, so a line feed is `\u000a`); everything else,
    /// including DEL and non-ASCII text, is copied as UTF-8 verbatim.
    public static func appendEscaped(_ string: String, to output: inout String) {
        let needsEscaping = string.utf8.contains { byte in
            byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
        }
        guard needsEscaping else {
            output += string
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar.value {
            case 0x22: output += "\\\""
            case 0x5C: output += "\\\\"
            case 0..<0x20:
                output += scalar.value < 0x10 ? "\\u000" : "\\u001"
                output += String(scalar.value & 0xF, radix: 16)
            default: output.unicodeScalars.append(scalar)
            }
        }
    }
}
