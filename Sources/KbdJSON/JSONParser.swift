extension JSONValue {
    /// The nesting depth ``parse(_:maximumDepth:)`` accepts by default.
    public static let defaultMaximumDepth = 512

    /// Parses JSON text strictly, as RFC 8259 defines it.
    ///
    /// - Exactly one value, surrounded by optional whitespace (space, tab, LF,
    ///   CR); anything after it is an error. A leading byte order mark is skipped.
    /// - No comments, no trailing commas, no single quotes, no `NaN`, no
    ///   leading zeros or `+` signs; raw control characters inside strings are
    ///   errors; `\u` escapes must pair surrogates correctly.
    /// - Duplicate keys in one object are rejected (RFC 8259 leaves them
    ///   undefined; in a configuration they are almost always a mistake).
    /// - Numbers must fit a `Double` (`1e400` is rejected); integers beyond
    ///   ±2^53 are rounded to the nearest `Double`.
    /// - At most `maximumDepth` arrays and objects may be open at once. The
    ///   parser does not recurse, so hostile input cannot exhaust the stack
    ///   whatever the limit.
    ///
    /// - Throws: ``JSONParseError`` with the line, column and what was expected.
    public static func parse(
        _ text: String, maximumDepth: Int = JSONValue.defaultMaximumDepth
    ) throws(JSONParseError) -> JSONValue {
        var text = text
        let result: Result<JSONValue, JSONParseError> = text.withUTF8 { bytes in
            Result { () throws(JSONParseError) -> JSONValue in
                var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
                return try parser.parseDocument()
            }
        }
        return try result.get()
    }
}

/// The RFC 8259 parser behind ``JSONValue/parse(_:maximumDepth:)``: an
/// iterative recursive-descent parser over UTF-8 bytes with an explicit stack.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let maximumDepth: Int
    private var position = 0

    /// An array or object being parsed. The parser appends to the top frame in place
    /// (`stack[top].elements.append`) and moves a container out only when it closes: binding
    /// a popped container's payload and appending to it copied the whole container on every
    /// element (quadratic; issue 17, D4).
    private struct Frame {
        var isObject: Bool
        var elements: [JSONValue] = []
        var object = JSONObject()
        var pendingKey = ""
    }

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    // MARK: Document

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        if hasByteOrderMark {
            position = 3
        }
        var stack: [Frame] = []
        var expectation = "expected a JSON value"
        parsing: while true {
            skipWhitespace()
            guard position < bytes.count else { throw failure(expectation) }
            let start = position
            var value: JSONValue
            switch bytes[position] {
            case UInt8(ascii: "{"):
                try checkDepth(stack.count)
                position += 1
                skipWhitespace()
                if peek == UInt8(ascii: "}") {
                    position += 1
                    value = .object(JSONObject())
                } else {
                    var frame = Frame(isObject: true)
                    frame.pendingKey = try parseKey(in: frame.object, expectation: "expected a string key or '}'")
                    stack.append(frame)
                    expectation = "expected a JSON value after ':'"
                    continue parsing
                }
            case UInt8(ascii: "["):
                try checkDepth(stack.count)
                position += 1
                skipWhitespace()
                if peek == UInt8(ascii: "]") {
                    position += 1
                    value = .array([])
                } else {
                    stack.append(Frame(isObject: false))
                    expectation = "expected a JSON value or ']'"
                    continue parsing
                }
            case UInt8(ascii: "\""):
                value = .string(try parseString())
            case UInt8(ascii: "t"):
                try parseLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try parseLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try parseLiteral("null")
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = .number(try parseNumber())
            default:
                throw failure(expectation, at: start)
            }

            // A complete value: hand it to the enclosing containers.
            while let top = stack.indices.last {
                if !stack[top].isObject {
                    stack[top].elements.append(value)
                    skipWhitespace()
                    if peek == UInt8(ascii: ",") {
                        position += 1
                        expectation = "expected a JSON value after ','"
                        continue parsing
                    }
                    guard peek == UInt8(ascii: "]") else {
                        throw failure("expected ',' or ']' after an array element")
                    }
                    position += 1
                    value = .array(stack.removeLast().elements)
                } else {
                    stack[top].object.updateValue(value, forKey: stack[top].pendingKey)
                    skipWhitespace()
                    if peek == UInt8(ascii: ",") {
                        position += 1
                        skipWhitespace()
                        stack[top].pendingKey = try parseKey(in: stack[top].object, expectation: "expected a string key after ','")
                        expectation = "expected a JSON value after ':'"
                        continue parsing
                    }
                    guard peek == UInt8(ascii: "}") else {
                        throw failure("expected ',' or '}' after an object member")
                    }
                    position += 1
                    value = .object(stack.removeLast().object)
                }
            }
            skipWhitespace()
            guard position == bytes.count else {
                throw failure("expected end of input after the JSON value")
            }
            return value
        }
    }

    // MARK: Pieces

    private var peek: UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private func checkDepth(_ open: Int) throws(JSONParseError) {
        guard open < maximumDepth else {
            throw failure("expected at most \(maximumDepth) nested arrays and objects")
        }
    }

    /// Parses `"key"` and the `:` after it; the position is at the key's quote.
    private mutating func parseKey(in object: JSONObject, expectation: String) throws(JSONParseError) -> String {
        guard peek == UInt8(ascii: "\"") else { throw failure(expectation) }
        let start = position
        let key = try parseString()
        guard !object.contains(key: key) else {
            throw failure("expected unique keys; \(JSONValue.quoted(key)) appears twice in this object", at: start)
        }
        skipWhitespace()
        guard peek == UInt8(ascii: ":") else { throw failure("expected ':' after an object key") }
        position += 1
        return key
    }

    private mutating func parseLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = position
        let count = literal.utf8CodeUnitCount
        let expected = literal.withUTF8Buffer { Array($0) }
        guard position + count <= bytes.count,
              (0..<count).allSatisfy({ bytes[position + $0] == expected[$0] })
        else {
            throw failure("expected '\(literal)'", at: start)
        }
        position += count
    }

    private static func isDigit(_ byte: UInt8?) -> Bool {
        guard let byte else { return false }
        return byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipDigits() {
        while Self.isDigit(peek) { position += 1 }
    }

    private mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = position
        if peek == UInt8(ascii: "-") {
            position += 1
            guard Self.isDigit(peek) else { throw failure("expected a digit after '-'") }
        }
        if peek == UInt8(ascii: "0") {
            position += 1
            if Self.isDigit(peek) {
                throw failure("expected '.', 'e' or the end of the number after a leading '0'")
            }
        } else {
            skipDigits()
        }
        if peek == UInt8(ascii: ".") {
            position += 1
            guard Self.isDigit(peek) else { throw failure("expected a digit after '.'") }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            position += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { position += 1 }
            guard Self.isDigit(peek) else { throw failure("expected a digit in the exponent") }
            skipDigits()
        }
        // Integers of up to 15 digits are exact in a Double: no string to make and parse.
        let negative = bytes[start] == UInt8(ascii: "-")
        let digits = position - start - (negative ? 1 : 0)
        if digits <= 15, (start..<position).allSatisfy({ bytes[$0] != UInt8(ascii: ".") && bytes[$0] | 0x20 != UInt8(ascii: "e") }) {
            var magnitude = 0
            for index in (negative ? start + 1 : start)..<position { magnitude = magnitude * 10 + Int(bytes[index] - UInt8(ascii: "0")) }
            return negative ? -Double(magnitude) : Double(magnitude)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let number = Double(text), number.isFinite else {
            throw failure("expected a number within the range of a 64-bit float", at: start)
        }
        return number
    }

    /// Parses a string; the position is at its opening quote.
    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1
        let contentStart = position
        // Fast path: no escapes.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[contentStart..<position]), as: UTF8.self)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            position += 1
        }
        var buffer = Array(bytes[contentStart..<position])
        while true {
            guard position < bytes.count else { throw failure("expected '\"' to end the string") }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &buffer)
            case 0..<0x20:
                throw failure("expected control character U+\(Self.hex4(UInt32(byte))) to be escaped in a string")
            default:
                buffer.append(byte)
                position += 1
            }
        }
    }

    /// Parses one escape sequence; the position is at its backslash.
    private mutating func parseEscape(into buffer: inout [UInt8]) throws(JSONParseError) {
        let start = position
        position += 1
        guard let letter = peek else {
            throw failure("expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX) after '\\'", at: start)
        }
        position += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(letter)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var code = try parseHex4(escapeStart: start)
            if (0xDC00...0xDFFF).contains(code) {
                throw failure("expected a high surrogate (\\uD800-\\uDBFF) before the low surrogate \\u\(Self.hex4(code))", at: start)
            }
            if (0xD800...0xDBFF).contains(code) {
                let secondStart = position
                guard position + 1 < bytes.count,
                      bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                else {
                    throw failure("expected a low surrogate (\\uDC00-\\uDFFF) after the high surrogate \\u\(Self.hex4(code))")
                }
                position += 2
                let low = try parseHex4(escapeStart: secondStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw failure("expected a low surrogate (\\uDC00-\\uDFFF) after the high surrogate \\u\(Self.hex4(code))", at: secondStart)
                }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            // Surrogates were handled above, so this is a valid scalar.
            let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
            buffer.append(contentsOf: scalar.utf8)
        default:
            throw failure("expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX) after '\\'", at: start)
        }
    }

    private mutating func parseHex4(escapeStart: Int) throws(JSONParseError) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek else {
                throw failure("expected 4 hex digits after '\\u'", at: escapeStart)
            }
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("expected 4 hex digits after '\\u'", at: escapeStart)
            }
            code = code << 4 | digit
            position += 1
        }
        return code
    }

    static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    // MARK: Errors

    private func failure(_ message: String) -> JSONParseError {
        failure(message, at: position)
    }

    /// An error at byte `offset`, with its line and column worked out.
    private func failure(_ message: String, at offset: Int) -> JSONParseError {
        var line = 1
        var column = 1
        var index = 0
        let end = min(offset, bytes.count)
        while index < end {
            let byte = bytes[index]
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte == 0x0D {
                if index + 1 < bytes.count, bytes[index + 1] == 0x0A {
                    // CR LF: the LF ends the line.
                } else {
                    line += 1
                    column = 1
                }
            } else if byte & 0xC0 != 0x80, !(index == 0 && hasByteOrderMark) {
                column += 1
            }
            index += 1
        }
        return JSONParseError(line: line, column: column, offset: offset, message: message)
    }

    private var hasByteOrderMark: Bool {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
    }
}
