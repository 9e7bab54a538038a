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
    /// Where each key is in `entries`, once there are more than `KeyIndex.linearLimit`: lookups
    /// cost the same in a table of thousands of keys, and small tables (a command's) hash nothing.
    private var positions = KeyIndex()
    /// The line of the table's header (`[name]`), or of its first key for the root.
    public var line: Int
    /// Defined by a header or a dotted key (true) or only implied as a parent (false).
    var explicitlyDefined = false
    /// Inline tables and arrays are closed: no later header may extend them.
    var closed = false

    public init(line: Int) { self.line = line }

    public subscript(key: String) -> TOMLValue? { index(of: key).map { entries[$0].value } }
    public func entry(_ key: String) -> Entry? { index(of: key).map { entries[$0] } }
    public var keys: [String] { entries.map(\.key) }

    func index(of key: String) -> Int? {
        positions.index(of: key) { entries.firstIndex { $0.key == key } }
    }

    mutating func set(_ key: String, _ value: TOMLValue, line: Int) {
        if let i = index(of: key) {
            entries[i] = Entry(key: key, value: value, line: line)
        } else {
            entries.append(Entry(key: key, value: value, line: line))
            positions.added(key, count: entries.count) { entries.map(\.key) }
        }
    }

    /// Appends a key known to be new (a finished table's, in order).
    mutating func append(unique key: String, _ value: TOMLValue, line: Int) {
        entries.append(Entry(key: key, value: value, line: line))
        positions.added(key, count: entries.count) { entries.map(\.key) }
    }

    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
    }
}

/// Key to position for a growing list of unique keys: nothing while the list is short (a linear
/// scan of a few keys is cheaper than hashing), a dictionary from `linearLimit + 1` keys on.
struct KeyIndex: Sendable, Equatable {
    static let linearLimit = 8
    private var positions: [String: Int] = [:]

    /// The position of `key`; `scan` looks it up while the list is short.
    func index(of key: String, scan: () -> Int?) -> Int? {
        positions.isEmpty ? scan() : positions[key]
    }

    /// `key` was appended, making the list `count` long; `keys` lists them all, for the first index.
    mutating func added(_ key: String, count: Int, keys: () -> [String]) {
        guard count > Self.linearLimit else { return }
        if positions.isEmpty {
            for (i, k) in keys().enumerated() { positions[k] = i }
        } else {
            positions[key] = count - 1
        }
    }
}

/// A syntax error in a TOML file: `path:line: message`.
public struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var line: Int
    public var message: String
    public var description: String { "\(path):\(line): \(message)" }
}
