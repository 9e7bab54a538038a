import ArgumentParser
import CLinux
import HardwareInput
import KbdService
#if canImport(Glibc)
import Glibc
#endif

/// `kbd-commandd run …` executes `kbd-commandd-daemon …` from the same directory
/// (same process, so systemd's notify and signals reach it): the service binary
/// links neither this argument parser nor Foundation and stays small in memory.
/// Its own parser owns the options; `run --help` shows its help.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the service: watch every keyboard, run commands, serve the control socket.",
        discussion: "Executes kbd-commandd-daemon (installed beside kbd-commandd) with the same options; 'kbd-commandd run --help' lists them.",
        helpNames: []
    )

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Options of the service; see 'kbd-commandd run --help'.", valueName: "options"))
    var arguments: [String] = []

    func run() throws {
        let path = try Self.daemonPath()
        let argv = [path] + arguments
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
        cArgs.append(nil)
        execv(path, &cArgs)
        throw report(CLIFailure(message: "\(path): cannot execute the service: \(SystemError(operation: "execv", errno: errno).message)", code: ExitStatus.failure))
    }

    /// `kbd-commandd-daemon` in the directory of this executable (`/proc/self/exe`).
    static func daemonPath() throws -> String {
        guard let directory = ProcessEnvironment.executableDirectory() else {
            throw report(CLIFailure(message: "/proc/self/exe: cannot find this executable to locate kbd-commandd-daemon", code: ExitStatus.failure))
        }
        let path = directory + "/kbd-commandd-daemon"
        guard access(path, X_OK) == 0 else {
            throw report(CLIFailure(message: "\(path): the service binary is missing; install kbd-commandd-daemon beside kbd-commandd", code: ExitStatus.failure))
        }
        return path
    }
}
