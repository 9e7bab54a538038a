/// A TOML value with the line it was written on, so config errors can point at it.
public indirect enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    case array([TOMLValue], line: Int)
    case table(TOMLTable)

    /// A word for error messages: "a string", "an integer"…
    public var kindDescription: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .float: return "a float"
        case .boolean: return "a boolean"
        case .array: return "an array"
        case .table: return "a table"
        }
    }
}

/// A TOML table: keys in the order written, each with the line of its definition.
public struct TOMLTable: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var key: String
        public var value: TOMLValue
        public var line: Int
    }

    public private(set) var entries: [Entry] = []
    /// The line of the table's header (`[name]`), or of its first key for the root.
    public var line: Int
    /// Defined by a header or a dotted key (true) or only implied as a parent (false).
    var explicitlyDefined = false
    /// Inline tables and arrays are closed: no later header may extend them.
    var closed = false

    public init(line: Int) { self.line = line }

    public subscript(key: String) -> TOMLValue? { entries.first { $0.key == key }?.value }
    public func entry(_ key: String) -> Entry? { entries.first { $0.key == key } }
    public var keys: [String] { entries.map(\.key) }

    mutating func set(_ key: String, _ value: TOMLValue, line: Int) {
        if let i = entries.firstIndex(where: { $0.key == key }) {
            entries[i] = Entry(key: key, value: value, line: line)
        } else {
            entries.append(Entry(key: key, value: value, line: line))
        }
    }

    func index(of key: String) -> Int? { entries.firstIndex { $0.key == key } }

    mutating func update(at index: Int, _ body: (inout TOMLValue) throws(TOMLError) -> Void) throws(TOMLError) {
        try body(&entries[index].value)
    }
}

/// A syntax error in a TOML file: `path:line: message`.
public struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var line: Int
    public var message: String
    public var description: String { "\(path):\(line): \(message)" }
}
