/// Walks hand-parsed command-line arguments (the service's and the agent's, which link
/// no argument parser): `--name value` and `--name=value`, with usage errors (exit 64)
/// that name the option.
public struct ArgumentScanner {
    private let arguments: [String]
    private var index = 0
    /// The argument last taken, as given.
    public private(set) var argument = ""
    /// Its option name (`--socket` of `--socket=/x`).
    public private(set) var name = ""
    private var inlineValue: String?
    /// The value's name in "Missing value for '--name <value>'".
    private let valueName: (String) -> String

    public init(_ arguments: [String], valueName: @escaping (String) -> String = { String($0.drop { $0 == "-" }) }) {
        self.arguments = arguments
        self.valueName = valueName
    }

    /// Takes the next argument; false at the end.
    public mutating func next() -> Bool {
        guard index < arguments.count else { return false }
        argument = arguments[index]
        index += 1
        name = argument
        inlineValue = nil
        if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
            name = String(argument[..<eq])
            inlineValue = String(argument[argument.index(after: eq)...])
        }
        return true
    }

    /// The option's value: after `=`, or the next argument.
    public mutating func value() throws(CLIFailure) -> String {
        if let inlineValue { return inlineValue }
        guard index < arguments.count else { throw Self.usage("Missing value for '\(name) <\(valueName(name))>'") }
        index += 1
        return arguments[index - 1]
    }

    /// Fails when a flag was given a value (`--no-socket=1`).
    public func noValue() throws(CLIFailure) {
        if inlineValue != nil { throw Self.usage("'\(name)' takes no value") }
    }

    /// The error for an argument nothing matched.
    public func unknown() -> CLIFailure {
        Self.usage(argument.hasPrefix("-") ? "Unknown option '\(name)'" : "Unexpected argument '\(argument)'")
    }

    public static func usage(_ message: String) -> CLIFailure { CLIFailure(message: message, code: ExitStatus.usage) }
}
