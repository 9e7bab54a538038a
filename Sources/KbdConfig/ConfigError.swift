public import KbdCore
/// Every problem found in a config file, each with its file and line.
/// Prints one `path:line: message` per line.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public var location: SourceLocation
        public var message: String
        public init(location: SourceLocation, message: String) {
            self.location = location
            self.message = message
        }
        public var description: String { "\(location): \(message)" }
    }

    public var problems: [Problem]
    public init(problems: [Problem]) { self.problems = problems }
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
