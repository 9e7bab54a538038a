/// A JSON value together with its path, with typed accessors that throw
/// ``JSONDecodingError``s naming that path. Decoders walk a document with it:
///
/// ```swift
/// let root = try JSONNode(JSONValue.parse(text)).object()
/// try root.checkKeys(allowed: ["width", "height"])
/// let width = try root.required("width").number()   // "width: expected a number"
/// ```
public struct JSONNode: Sendable {
    /// The value.
    public let value: JSONValue
    /// Where the value is in its document.
    public let path: JSONPath

    /// A node for `value` at `path` (the root by default).
    public init(_ value: JSONValue, path: JSONPath = JSONPath()) {
        self.value = value
        self.path = path
    }

    /// An error about this value.
    public func error(_ message: String) -> JSONDecodingError {
        JSONDecodingError(path: path, message: message)
    }

    /// The number; else "expected a number".
    public func number() throws(JSONDecodingError) -> Double {
        guard case .number(let number) = value else { throw error("expected a number") }
        return number
    }

    /// A number ≥ 0; else "expected a number" or "expected a non-negative number".
    public func nonNegativeNumber() throws(JSONDecodingError) -> Double {
        let number = try number()
        guard number >= 0 else { throw error("expected a non-negative number") }
        return number
    }

    /// A number > 0; else "expected a number" or "expected a positive number".
    public func positiveNumber() throws(JSONDecodingError) -> Double {
        let number = try number()
        guard number > 0 else { throw error("expected a positive number") }
        return number
    }

    /// An integer that fits `Int`; else "expected an integer".
    public func integer() throws(JSONDecodingError) -> Int {
        guard case .number(let number) = value, let integer = Int(exactly: number) else {
            throw error("expected an integer")
        }
        return integer
    }

    /// An integer ≥ 0; else "expected an integer" or "expected a
    /// non-negative integer".
    public func nonNegativeInteger() throws(JSONDecodingError) -> Int {
        let integer = try integer()
        guard integer >= 0 else { throw error("expected a non-negative integer") }
        return integer
    }

    /// The string; else "expected a string".
    public func string() throws(JSONDecodingError) -> String {
        guard case .string(let string) = value else { throw error("expected a string") }
        return string
    }

    /// `true` or `false`; else "expected true or false".
    public func bool() throws(JSONDecodingError) -> Bool {
        guard case .bool(let bool) = value else { throw error("expected true or false") }
        return bool
    }

    /// The elements as nodes (paths `…[0]`, `…[1]`, …); else "expected an array".
    public func array() throws(JSONDecodingError) -> [JSONNode] {
        guard case .array(let elements) = value else { throw error("expected an array") }
        return elements.enumerated().map { JSONNode($1, path: path.appending(index: $0)) }
    }

    /// The object, for member access; else "expected an object".
    public func object() throws(JSONDecodingError) -> JSONObjectNode {
        guard case .object(let object) = value else { throw error("expected an object") }
        return JSONObjectNode(object, path: path)
    }

    /// The value that the string names, from `choices` in order; else
    /// `expected one of "a", "b"`.
    public func oneOf<Choice>(_ choices: [(String, Choice)]) throws(JSONDecodingError) -> Choice {
        if case .string(let string) = value, let match = choices.first(where: { $0.0 == string }) {
            return match.1
        }
        throw error("expected one of " + choices.map { JSONValue.quoted($0.0) }.joined(separator: ", "))
    }
}
