public import KbdSystem
import KbdRecording
import KbdConfig
import KbdKeymap
import KbdCore

/// Exit codes scripts can rely on (sysexits.h numbers), shared by `kbd-commandd`
/// and `kbd-commandd-daemon`.
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let dataError: Int32 = 65
    public static let noInput: Int32 = 66
    public static let configError: Int32 = 78
}

/// A runtime failure: printed as `Error: <message>` on stderr, then exit with `code`.
public struct CLIFailure: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var code: Int32
    public var description: String { message }

    public init(message: String, code: Int32) {
        self.message = message
        self.code = code
    }
}

/// Prints `Error: …` lines (one per problem) for a failure on `output` and returns the exit code:
/// 66 for a file that cannot be opened, 65 for a bad recording line, 78 for a bad
/// config or keymap, the failure's own code for a `CLIFailure`, else 1.
public func reportFailure(_ error: any Error, to output: some TextOutput = FileOutput.standardError()) -> Int32 {
    let (messages, code): ([String], Int32)
    switch error {
    case let e as CLIFailure: (messages, code) = ([e.message], e.code)
    case let e as RecordingError: (messages, code) = ([e.description], e.line == 0 ? ExitStatus.noInput : ExitStatus.dataError)
    case let e as ConfigError:
        let unreadable = e.problems.count == 1 && e.problems[0].location.line == 0
        (messages, code) = (e.problems.map(\.description), unreadable ? ExitStatus.noInput : ExitStatus.configError)
    case let e as KeymapError: (messages, code) = (e.description.split(separator: "\n").map(String.init), ExitStatus.configError)
    default: (messages, code) = ([String(describing: error)], ExitStatus.failure)
    }
    // Messages may quote a file's, a config's or a device's text: one line per problem, never
    // split at a line break inside it (a config's id with "\n" would forge an Error: line),
    // and no terminal escapes.
    for message in messages {
        output.write("Error: \(message.escapingControlCharacters)\n")
    }
    return code
}
