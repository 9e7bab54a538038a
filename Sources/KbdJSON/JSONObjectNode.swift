/// A JSON object together with its path: member lookup that builds member
/// paths, required keys, and a check that rejects unknown keys.
public struct JSONObjectNode: Sendable {
    /// The object.
    public let object: JSONObject
    /// Where the object is in its document.
    public let path: JSONPath

    /// A node for `object` at `path`.
    public init(_ object: JSONObject, path: JSONPath = JSONPath()) {
        self.object = object
        self.path = path
    }

    /// An error about this object.
    public func error(_ message: String) -> JSONDecodingError {
        JSONDecodingError(path: path, message: message)
    }

    /// The member named `key`, or nil when the object has none. A member whose
    /// value is `null` is present: typed accessors then report the wrong type.
    public subscript(key: String) -> JSONNode? {
        object[key].map { JSONNode($0, path: path.appending(key: key)) }
    }

    /// The member named `key`; else `missing required key "key"` at this
    /// object's path.
    public func required(_ key: String) throws(JSONDecodingError) -> JSONNode {
        guard let node = self[key] else {
            throw error("missing required key \(JSONValue.quoted(key))")
        }
        return node
    }

    /// Rejects the first member (in document order) whose key is not in
    /// `allowed`: `path.key: unknown key; expected one of a, b, c`, or
    /// `unknown key for <context>; …` when `context` is given.
    public func checkKeys(allowed: [String], context: String? = nil) throws(JSONDecodingError) {
        for key in object.keys where !allowed.contains(key) {
            let what = context.map { "unknown key for \($0)" } ?? "unknown key"
            throw JSONDecodingError(
                path: path.appending(key: key),
                message: "\(what); expected one of \(allowed.joined(separator: ", "))"
            )
        }
    }
}
