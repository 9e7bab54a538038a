/// A file and a 1-based line.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var line: Int
    public init(path: String, line: Int) {
        self.path = path
        self.line = line
    }
    public var description: String { "\(path):\(line)" }
}
