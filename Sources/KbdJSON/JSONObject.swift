/// A JSON object: members in insertion order, with lookup by key.
///
/// Order matters for our output contracts (`"event"` comes first in every
/// JSON line), so unlike `Dictionary` this keeps the order members were added
/// in. Keys are unique: setting an existing key replaces its value in place,
/// keeping its position. Two objects are equal when they have the same members
/// in the same order.
public struct JSONObject: Sendable, Equatable, Sequence {
    /// One member of an object.
    public typealias Member = (key: String, value: JSONValue)

    private var keyList: [String] = []
    private var valueList: [JSONValue] = []
    private var positions: [String: Int] = [:]

    /// An empty object.
    public init() {}

    /// An object with `members` in order; a repeated key keeps its first
    /// position and its last value.
    public init(_ members: some Sequence<(String, JSONValue)>) {
        for (key, value) in members {
            self[key] = value
        }
    }

    /// The number of members.
    public var count: Int { keyList.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { keyList.isEmpty }

    /// The keys, in order.
    public var keys: [String] { keyList }

    /// The values, in the order of their keys.
    public var values: [JSONValue] { valueList }

    /// The members, in order.
    public var members: [Member] {
        zip(keyList, valueList).map { (key: $0, value: $1) }
    }

    /// Whether the object has a member named `key`.
    public func contains(key: String) -> Bool {
        positions[key] != nil
    }

    /// The value of the member named `key`, or nil. Setting a value replaces
    /// an existing member in place or appends a new one; setting nil removes
    /// the member.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let position = positions[key] else { return nil }
            return valueList[position]
        }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Sets the member named `key`: in place when it exists, else appended.
    /// Returns the value it replaced, if any.
    @discardableResult
    public mutating func updateValue(_ value: JSONValue, forKey key: String) -> JSONValue? {
        if let position = positions[key] {
            let old = valueList[position]
            valueList[position] = value
            return old
        }
        positions[key] = keyList.count
        keyList.append(key)
        valueList.append(value)
        return nil
    }

    /// Removes the member named `key` and returns its value, if it was there.
    /// Costs O(n): the positions of later members are renumbered.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let position = positions.removeValue(forKey: key) else { return nil }
        keyList.remove(at: position)
        let old = valueList.remove(at: position)
        for index in position..<keyList.count {
            positions[keyList[index]] = index
        }
        return old
    }

    /// An iterator over the members in order.
    public func makeIterator() -> some IteratorProtocol<Member> {
        zip(keyList, valueList).lazy.map { (key: $0, value: $1) }.makeIterator()
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.keyList == rhs.keyList && lhs.valueList == rhs.valueList
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// An object with the literal's members in the literal's order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}
