import ArgumentParser
import HardwareInput

/// Exit codes scripts can rely on (sysexits.h numbers).
enum ExitStatus {
    static let failure: Int32 = 1
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let configError: Int32 = 78
}

/// A runtime failure: printed as `Error: <message>` on stderr, then exit with `code`.
struct CLIFailure: Error, CustomStringConvertible {
    var message: String
    var code: Int32
    var description: String { message }
}

/// Prints `Error: …` lines for a failure and returns the exit code to use.
func report(_ error: any Error) -> ExitCode {
    let stderr = FileOutput.standardError()
    let (message, code): (String, Int32)
    switch error {
    case let e as CLIFailure: (message, code) = (e.message, e.code)
    case let e as RecordingError: (message, code) = (e.description, e.line == 0 ? ExitStatus.noInput : ExitStatus.dataError)
    case let e as ConfigError:
        let unreadable = e.problems.count == 1 && e.problems[0].location.line == 0
        (message, code) = (e.description, unreadable ? ExitStatus.noInput : ExitStatus.configError)
    case let e as KeymapError: (message, code) = (e.description, ExitStatus.configError)
    default: (message, code) = (String(describing: error), ExitStatus.failure)
    }
    for line in message.split(separator: "\n", omittingEmptySubsequences: false) {
        stderr.write("Error: \(line)\n")
    }
    return ExitCode(code)
}

/// Runs `body`, turning thrown errors into `Error:` messages and exit codes.
func withErrorReporting(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let e as ExitCode {
        throw e
    } catch {
        throw report(error)
    }
}
