/// A TOML 1.0 parser for configuration files: tables, arrays of tables, dotted
/// and quoted keys, basic/literal/multi-line strings, integers (decimal, hex,
/// octal, binary), floats, booleans, arrays and inline tables. Dates and times
/// are rejected with a clear message (no config key takes one). Every value
/// keeps its line so that config errors can name it.
public struct TOMLParser {
    private let bytes: [UInt8]
    private let path: String
    private var i = 0
    private var line = 1

    public static func parse(_ text: String, path: String) throws(TOMLError) -> TOMLTable {
        var p = TOMLParser(bytes: Array(text.utf8), path: path)
        return try p.document()
    }

    private init(bytes: [UInt8], path: String) {
        self.bytes = bytes
        self.path = path
    }

    private func fail(_ message: String) -> TOMLError { TOMLError(path: path, line: line, message: message) }
    /// An error on the line of a header or key, found after the parser has read past its end.
    private func fail(_ message: String, line: Int) -> TOMLError { TOMLError(path: path, line: line, message: message) }

    private var current: UInt8? { i < bytes.count ? bytes[i] : nil }
    private func peek(_ offset: Int) -> UInt8? { i + offset < bytes.count ? bytes[i + offset] : nil }

    // MARK: - Document

    private mutating func document() throws(TOMLError) -> TOMLTable {
        let root = TableNode(line: 1, explicitlyDefined: true)
        // The table that key lines go to: the last header's, or the root.
        var table = root
        var currentPath: [String] = []
        while true {
            skipWhitespaceAndComments(newlines: true)
            guard let c = current else { break }
            if c == UInt8(ascii: "[") {
                let headerLine = line
                let isArray = peek(1) == UInt8(ascii: "[")
                i += isArray ? 2 : 1
                skipBlanks()
                let keyPath = try key()
                skipBlanks()
                guard current == UInt8(ascii: "]"), !isArray || peek(1) == UInt8(ascii: "]") else {
                    throw fail(isArray ? "expected ']]' to close the array-of-tables header" : "expected ']' to close the table header")
                }
                i += isArray ? 2 : 1
                try endOfLine()
                if isArray {
                    table = try appendArrayTable(root, keyPath, line: headerLine)
                } else {
                    table = try defineTable(root, keyPath, line: headerLine)
                }
                currentPath = keyPath
            } else {
                let keyLine = line
                let keyPath = try key()
                skipBlanks()
                guard current == UInt8(ascii: "=") else { throw fail("expected '=' after the key '\(keyPath.joined(separator: "."))'") }
                i += 1
                skipBlanks()
                let value = try self.value()
                try endOfLine()
                try insertDotted(table, keyPath, value: value, line: keyLine, prefix: currentPath)
            }
        }
        return root.table()
    }

    private mutating func endOfLine() throws(TOMLError) {
        skipBlanks()
        if current == UInt8(ascii: "#") { skipComment() }
        guard let c = current else { return }
        if c == UInt8(ascii: "\n") {
            i += 1
            line += 1
            return
        }
        if c == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") {
            i += 2
            line += 1
            return
        }
        throw fail("expected the end of the line, found '\(Character(Unicode.Scalar(c)))'")
    }

    // MARK: - Tables

    /// Walks from `table` down `path` (creating implicit tables) to the table a header names:
    /// the last element of an array of tables, never an inline table or a static array.
    private func walk(_ table: TableNode, _ path: ArraySlice<String>, line: Int, fullPath: [String]) throws(TOMLError) -> TableNode {
        var node = table
        for head in path {
            guard let index = node.index(of: head) else {
                let child = TableNode(line: line)
                node.append(head, .table(child), line: line)
                node = child
                continue
            }
            switch node.slots[index] {
            case .table(let child):
                node = child
            case .tables(let array):
                node = array.tables[array.tables.count - 1]
            case .value(.table):
                throw fail("'\(fullPath.joined(separator: "."))' extends an inline table, which is closed", line: line)
            case .value(.array(let elements, _)):
                guard case .table? = elements.last else { throw fail("'\(head)' is an array, not a table", line: line) }
                throw fail("'\(head)' is a static array; it cannot be extended with a table header", line: line)
            case .value(let value):
                throw fail("'\(head)' is already \(value.kindDescription), not a table", line: line)
            }
        }
        return node
    }

    /// `[path]`: the table it names, now defined.
    private func defineTable(_ root: TableNode, _ path: [String], line: Int) throws(TOMLError) -> TableNode {
        let table = try walk(root, path[...], line: line, fullPath: path)
        if table.explicitlyDefined { throw fail("table [\(path.joined(separator: "."))] is defined twice (first at line \(table.line))", line: line) }
        table.explicitlyDefined = true
        table.line = line
        return table
    }

    /// `[[path]]`: a new table appended to the array of tables (created by the first such header).
    /// Only such an array can be extended: a static one, even empty (`a = []`), cannot (TOML 1.0).
    private func appendArrayTable(_ root: TableNode, _ path: [String], line: Int) throws(TOMLError) -> TableNode {
        let parent = try walk(root, path.dropLast(), line: line, fullPath: path)
        let name = path[path.count - 1]
        let element = TableNode(line: line, explicitlyDefined: true)
        if let index = parent.index(of: name) {
            guard case .tables(let array) = parent.slots[index] else {
                throw fail("'\(path.joined(separator: "."))' is already \(parent.slots[index].kindDescription), not an array of tables", line: line)
            }
            array.tables.append(element)
        } else {
            parent.append(name, .tables(ArrayOfTables(element, line: line)), line: line)
        }
        return element
    }

    /// `a.b.c = value` in `table` (a header's table, the root, or an inline table being read):
    /// the dotted parts are tables, created as needed; `prefix` is the header's path, for messages.
    private func insertDotted(_ table: TableNode, _ key: [String], value: TOMLValue, line: Int, prefix: [String]) throws(TOMLError) {
        var node = table
        for (n, head) in key.enumerated() {
            let isLast = n == key.count - 1
            if let index = node.index(of: head) {
                let full = (prefix + key).joined(separator: ".")
                if isLast { throw fail("key '\(full)' is defined twice (first at line \(node.lines[index]))", line: line) }
                guard case .table(let child) = node.slots[index] else {
                    throw fail("key '\(full)': '\(head)' is already \(node.slots[index].kindDescription)", line: line)
                }
                node = child
            } else if isLast {
                node.append(head, .value(value), line: line)
            } else {
                let child = TableNode(line: line, explicitlyDefined: true)
                node.append(head, .table(child), line: line)
                node = child
            }
        }
    }

    // MARK: - Keys

    /// At most this many parts in a dotted key (`a.b.c` has 3).
    static let maximumKeyParts = 64

    private mutating func key() throws(TOMLError) -> [String] {
        var parts: [String] = []
        while true {
            skipBlanks()
            guard let c = current else { throw fail("expected a key") }
            if c == UInt8(ascii: "\"") {
                parts.append(try basicString())
            } else if c == UInt8(ascii: "'") {
                parts.append(try literalString())
            } else {
                let start = i
                while let c = current, isBareKeyByte(c) { i += 1 }
                guard i > start else {
                    throw fail("expected a key (letters, digits, '-', '_', or a quoted string), found '\(Character(Unicode.Scalar(c)))'")
                }
                parts.append(String(decoding: bytes[start..<i], as: UTF8.self))
            }
            skipBlanks()
            if current == UInt8(ascii: ".") {
                // Tables are walked recursively, one level per part: bound the depth
                // (a header of thousands of parts overflowed the stack; found by fuzzing).
                guard parts.count < Self.maximumKeyParts else { throw fail("dotted key nested too deeply (limit \(Self.maximumKeyParts) parts)") }
                i += 1
                continue
            }
            return parts
        }
    }

    private func isBareKeyByte(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
            || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
    }

    // MARK: - Values

    private mutating func value(depth: Int = 0) throws(TOMLError) -> TOMLValue {
        guard depth < 64 else { throw fail("arrays or inline tables nested too deeply (limit 64)") }
        guard let c = current else { throw fail("expected a value after '='") }
        switch c {
        case UInt8(ascii: "\""):
            if peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") { return .string(try multilineBasicString()) }
            return .string(try basicString())
        case UInt8(ascii: "'"):
            if peek(1) == UInt8(ascii: "'"), peek(2) == UInt8(ascii: "'") { return .string(try multilineLiteralString()) }
            return .string(try literalString())
        case UInt8(ascii: "["):
            return try array(depth: depth)
        case UInt8(ascii: "{"):
            return try inlineTable(depth: depth)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            if matchWord("true") { return .boolean(true) }
            if matchWord("false") { return .boolean(false) }
            throw fail("expected a value (a string in quotes, a number, true, false, an array or an inline table)")
        default:
            return try number()
        }
    }

    private mutating func matchWord(_ word: String) -> Bool {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<i + w.count]) == w else { return false }
        if let next = peek(w.count), isBareKeyByte(next) { return false }
        i += w.count
        return true
    }

    private mutating func number() throws(TOMLError) -> TOMLValue {
        let start = i
        while let c = current, c != UInt8(ascii: ","), c != UInt8(ascii: "]"), c != UInt8(ascii: "}"),
            c != UInt8(ascii: " "), c != UInt8(ascii: "\t"), c != UInt8(ascii: "\n"), c != UInt8(ascii: "\r"),
            c != UInt8(ascii: "#")
        {
            i += 1
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        guard !text.isEmpty else { throw fail("expected a value (a string in quotes, a number, true, false, an array or an inline table)") }
        if text.contains(":" as Character) || (text.count >= 10 && text.dropFirst(4).first == "-" && text.first?.isNumber == true) {
            throw fail("dates and times are not supported here; expected a string, number or boolean, found '\(text)'")
        }
        if let v = Self.integer(text) { return .integer(v) }
        if let v = Self.float(text) { return .float(v) }
        throw fail("expected a value (a string in quotes, a number, true, false, an array or an inline table), found '\(text)'")
    }

    static func integer(_ text: String) -> Int64? {
        var t = Substring(text)
        var negative = false
        if t.first == "+" || t.first == "-" {
            negative = t.first == "-"
            t = t.dropFirst()
        }
        var radix = 10
        if t.hasPrefix("0x") { radix = 16 } else if t.hasPrefix("0o") { radix = 8 } else if t.hasPrefix("0b") { radix = 2 }
        if radix != 10 {
            if negative || text.first == "+" { return nil }
            t = t.dropFirst(2)
        } else if t.count > 1, t.first == "0" {
            return nil  // no leading zeros
        }
        guard !t.isEmpty, t.first != "_", t.last != "_", !hasDoubleUnderscore(t) else { return nil }
        let digits = t.replacingOccurrences("_", "")
        guard let magnitude = Int64(digits, radix: radix) else { return nil }
        return negative ? -magnitude : magnitude
    }

    static func float(_ text: String) -> Double? {
        switch text {
        case "inf", "+inf": return .infinity
        case "-inf": return -.infinity
        case "nan", "+nan", "-nan": return .nan
        default: break
        }
        guard !hasDoubleUnderscore(text), text.last != "_", text.first != "_" else { return nil }
        let cleaned = text.replacingOccurrences("_", "")
        guard cleaned.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else { return nil }
        // TOML requires digits on both sides of '.'.
        if let dot = cleaned.firstIndex(of: ".") {
            let before = cleaned[cleaned.startIndex..<dot].last
            let after = cleaned[cleaned.index(after: dot)...].first
            guard before?.isNumber == true, after?.isNumber == true else { return nil }
        }
        return Double(cleaned)
    }

    private mutating func array(depth: Int) throws(TOMLError) -> TOMLValue {
        let startLine = line
        i += 1
        var elements: [TOMLValue] = []
        while true {
            skipWhitespaceAndComments(newlines: true)
            guard let c = current else { throw fail("unterminated array (opened at line \(startLine)); expected ']'") }
            if c == UInt8(ascii: "]") {
                i += 1
                return .array(elements, line: startLine)
            }
            elements.append(try value(depth: depth + 1))
            skipWhitespaceAndComments(newlines: true)
            if current == nil { throw fail("unterminated array (opened at line \(startLine)); expected ']'") }
            if current == UInt8(ascii: ",") {
                i += 1
            } else if current != UInt8(ascii: "]") {
                throw fail("expected ',' or ']' in the array opened at line \(startLine)")
            }
        }
    }

    private mutating func inlineTable(depth: Int) throws(TOMLError) -> TOMLValue {
        let startLine = line
        i += 1
        let table = TableNode(line: startLine, explicitlyDefined: true)
        skipBlanks()
        if current == UInt8(ascii: "}") {
            i += 1
            return .table(table.table(closed: true))
        }
        while true {
            skipBlanks()
            let keyLine = line
            let k = try key()
            skipBlanks()
            guard current == UInt8(ascii: "=") else { throw fail("expected '=' after the key '\(k.joined(separator: "."))'") }
            i += 1
            skipBlanks()
            let v = try value(depth: depth + 1)
            try insertDotted(table, k, value: v, line: keyLine, prefix: [])
            skipBlanks()
            if current == UInt8(ascii: ",") {
                i += 1
                continue
            }
            guard current == UInt8(ascii: "}") else { throw fail("expected ',' or '}' in the inline table (inline tables stay on one line)") }
            i += 1
            return .table(table.table(closed: true))
        }
    }

    // MARK: - Strings

    private mutating func basicString() throws(TOMLError) -> String {
        i += 1
        var out: [UInt8] = []
        while true {
            guard let c = current, c != UInt8(ascii: "\n") else { throw fail("unterminated string; expected a closing '\"' on the same line") }
            i += 1
            if c == UInt8(ascii: "\"") { break }
            if c == UInt8(ascii: "\\") {
                try escape(into: &out)
            } else {
                if c < 0x20 && c != 0x09 || c == 0x7F { throw fail("control character in a string; use an escape such as \\t") }
                out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private mutating func escape(into out: inout [UInt8]) throws(TOMLError) {
        guard let e = current else { throw fail("unterminated escape sequence") }
        i += 1
        switch e {
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "e"): out.append(0x1B)
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = e == UInt8(ascii: "u") ? 4 : 8
            guard i + count <= bytes.count,
                let v = UInt32(String(decoding: bytes[i..<i + count], as: UTF8.self), radix: 16),
                let scalar = Unicode.Scalar(v)
            else { throw fail("expected \(count) hexadecimal digits of a Unicode scalar after '\\\(Character(Unicode.Scalar(e)))'") }
            i += count
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
        default:
            throw fail("unknown escape '\\\(Character(Unicode.Scalar(e)))'; expected one of \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX")
        }
    }

    private mutating func literalString() throws(TOMLError) -> String {
        i += 1
        let start = i
        while let c = current, c != UInt8(ascii: "'") {
            if c == UInt8(ascii: "\n") { break }
            i += 1
        }
        guard current == UInt8(ascii: "'") else { throw fail("unterminated literal string; expected a closing \"'\" on the same line") }
        let s = String(decoding: bytes[start..<i], as: UTF8.self)
        i += 1
        return s
    }

    private mutating func multilineBasicString() throws(TOMLError) -> String {
        let startLine = line
        i += 3
        if current == UInt8(ascii: "\n") { i += 1; line += 1 } else if current == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") { i += 2; line += 1 }
        var out: [UInt8] = []
        while true {
            guard let c = current else { throw fail("unterminated multi-line string opened at line \(startLine); expected '\"\"\"'") }
            if c == UInt8(ascii: "\""), peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") {
                i += 3
                // Up to two extra quotes belong to the content.
                var extra = 0
                while current == UInt8(ascii: "\""), extra < 2 { out.append(c); i += 1; extra += 1 }
                return String(decoding: out, as: UTF8.self)
            }
            i += 1
            if c == UInt8(ascii: "\n") { line += 1 }
            if c == UInt8(ascii: "\\") {
                // Line-ending backslash: trim whitespace and newlines.
                var j = i
                while j < bytes.count, bytes[j] == 0x20 || bytes[j] == 0x09 { j += 1 }
                if j < bytes.count, bytes[j] == 0x0A || bytes[j] == 0x0D {
                    i = j
                    while let w = current, w == 0x20 || w == 0x09 || w == 0x0A || w == 0x0D {
                        if w == 0x0A { line += 1 }
                        i += 1
                    }
                    continue
                }
                try escape(into: &out)
            } else {
                out.append(c)
            }
        }
    }

    private mutating func multilineLiteralString() throws(TOMLError) -> String {
        let startLine = line
        i += 3
        if current == UInt8(ascii: "\n") { i += 1; line += 1 } else if current == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") { i += 2; line += 1 }
        var out: [UInt8] = []
        while true {
            guard let c = current else { throw fail("unterminated multi-line literal string opened at line \(startLine); expected \"'''\"") }
            if c == UInt8(ascii: "'"), peek(1) == UInt8(ascii: "'"), peek(2) == UInt8(ascii: "'") {
                i += 3
                var extra = 0
                while current == UInt8(ascii: "'"), extra < 2 { out.append(c); i += 1; extra += 1 }
                return String(decoding: out, as: UTF8.self)
            }
            if c == UInt8(ascii: "\n") { line += 1 }
            out.append(c)
            i += 1
        }
    }

    // MARK: - Whitespace

    private mutating func skipBlanks() {
        while let c = current, c == 0x20 || c == 0x09 { i += 1 }
    }

    private mutating func skipComment() {
        while let c = current, c != UInt8(ascii: "\n") { i += 1 }
    }

    private mutating func skipWhitespaceAndComments(newlines: Bool) {
        while let c = current {
            if c == 0x20 || c == 0x09 || c == 0x0D {
                i += 1
            } else if c == 0x0A && newlines {
                i += 1
                line += 1
            } else if c == UInt8(ascii: "#") {
                skipComment()
            } else {
                return
            }
        }
    }
}

extension StringProtocol {
    /// Replaces every occurrence of a one-character string (Foundation-free).
    func replacingOccurrences(_ target: Character, _ replacement: String) -> String {
        var out = ""
        for ch in self {
            if ch == target { out += replacement } else { out.append(ch) }
        }
        return out
    }
}

/// Whether `text` has "__" (a TOML number may not). Written out: `contains("__")` is
/// _StringProcessing's, which the service's static link would bring in for this alone.
func hasDoubleUnderscore(_ text: some StringProtocol) -> Bool {
    var previous: UInt8 = 0
    for b in text.utf8 {
        if b == UInt8(ascii: "_") && previous == b { return true }
        previous = b
    }
    return false
}

/// The document while it is read. Headers and key lines reach their table through references,
/// so adding to the 100,000th `[[command]]` costs what adding to the first does: mutating the
/// nested value types in place copied the whole `command` array on every header and every key
/// line (quadratic: 20,000 commands took 11.6 s; issue 17, D13). Turned into `TOMLTable`
/// values once, at the end.
private final class TableNode {
    enum Slot {
        /// A value written after `=`: a scalar, a static array or an inline table (closed).
        case value(TOMLValue)
        /// A table made by a header, a dotted key or as a header's parent.
        case table(TableNode)
        /// An array of tables, made by `[[…]]` headers.
        case tables(ArrayOfTables)

        var kindDescription: String {
            switch self {
            case .value(let value): value.kindDescription
            case .table: "a table"
            case .tables: "an array"
            }
        }
    }

    private(set) var keys: [String] = []
    private(set) var slots: [Slot] = []
    private(set) var lines: [Int] = []
    private var positions = KeyIndex()
    var line: Int
    var explicitlyDefined: Bool

    init(line: Int, explicitlyDefined: Bool = false) {
        self.line = line
        self.explicitlyDefined = explicitlyDefined
    }

    func index(of key: String) -> Int? {
        positions.index(of: key) { keys.firstIndex(of: key) }
    }

    func append(_ key: String, _ slot: Slot, line: Int) {
        keys.append(key)
        slots.append(slot)
        lines.append(line)
        positions.added(key, count: keys.count) { keys }
    }

    /// The finished table (recursion as deep as the nesting of tables: at most two dotted keys of 64 parts).
    func table(closed: Bool = false) -> TOMLTable {
        var table = TOMLTable(line: line)
        table.explicitlyDefined = explicitlyDefined
        table.closed = closed
        table.reserveCapacity(keys.count)
        for index in keys.indices {
            let value: TOMLValue
            switch slots[index] {
            case .value(let v): value = v
            case .table(let node): value = .table(node.table())
            case .tables(let array): value = .array(array.tables.map { .table($0.table()) }, line: array.line)
            }
            table.append(unique: keys[index], value, line: lines[index])
        }
        return table
    }
}

/// The tables of `[[name]]` headers, in order; never empty.
private final class ArrayOfTables {
    var tables: [TableNode]
    let line: Int

    init(_ first: TableNode, line: Int) {
        tables = [first]
        self.line = line
    }
}
