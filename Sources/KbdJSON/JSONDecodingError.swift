/// A JSON document that parsed but does not have the expected shape, with the
/// path of the offending value: `windows[1].frame.width: expected a number`.
public struct JSONDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path of the offending value (empty for the document itself).
    public var path: JSONPath
    /// What is wrong, usually phrased as what was expected
    /// ("expected a number", "missing required key \"id\"").
    public var message: String

    /// An error about the value at `path`.
    public init(path: JSONPath, message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, or just the message for the document itself.
    public var description: String {
        let location = path.description
        return location.isEmpty ? message : "\(location): \(message)"
    }
}
