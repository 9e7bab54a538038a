/// A problem in a recording, with the place it was found and what was expected.
/// Prints as `path:line: message`.
public struct RecordingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    /// 1-based; 0 when the problem is not tied to a line (open or read failures).
    public var line: Int
    public var message: String

    public init(path: String, line: Int, message: String) {
        self.path = path
        self.line = line
        self.message = message
    }

    public var description: String {
        line > 0 ? "\(path):\(line): \(message)" : "\(path): \(message)"
    }
}
