import ArgumentParser
import KbdService

/// Prints `Error: …` lines for a failure and returns the exit code to use.
func report(_ error: any Error) -> ExitCode {
    ExitCode(reportFailure(error))
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
