public import KbdSystem
import KbdProcess
import KbdRecording
import KbdConfig
import KbdKeymap
import KbdCore

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
