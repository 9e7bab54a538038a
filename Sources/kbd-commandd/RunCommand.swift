import ArgumentParser
import KbdProcess
import CLinux
import KbdService
import KbdSystem
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
        discussion: "Executes kbd-commandd-daemon (beside kbd-commandd in a build, in /usr/libexec/kbd-commandd when installed) with the same options; 'kbd-commandd run --help' lists them.",
        helpNames: []
    )

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Options of the service; see 'kbd-commandd run --help'.", valueName: "options"))
    var arguments: [String] = []

    func run() throws {
        try execSibling("kbd-commandd-daemon", arguments, what: "the service")
    }
}

/// `kbd-commandd agent …` executes `kbd-commandd-agent …` (the session agent) the same way.
struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Run the session agent: your own shortcuts in your desktop session; the on-screen keyboard follows the hardware keyboard.",
        discussion: "Executes kbd-commandd-agent (beside kbd-commandd in a build, in /usr/libexec/kbd-commandd when installed) with the same options; 'kbd-commandd agent --help' lists them.",
        helpNames: []
    )

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Options of the agent; see 'kbd-commandd agent --help'.", valueName: "options"))
    var arguments: [String] = []

    func run() throws {
        try execSibling("kbd-commandd-agent", arguments, what: "the session agent")
    }
}

/// `kbd-commandd bar …` executes `kbd-commandd-bar …` (the shortcuts bar and HUD) the same way.
struct BarCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bar",
        abstract: "Run the shortcuts bar and HUD in your Wayland session (the session agent starts it when [bar] enabled).",
        discussion: "Executes kbd-commandd-bar (beside kbd-commandd in a build, in /usr/libexec/kbd-commandd when installed) with the same options; 'kbd-commandd bar --help' lists them.",
        helpNames: []
    )

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Options of the bar; see 'kbd-commandd bar --help'.", valueName: "options"))
    var arguments: [String] = []

    func run() throws {
        try execSibling("kbd-commandd-bar", arguments, what: "the shortcuts bar",
                        advice: "install the package kbd-commandd-bar (sudo apt install kbd-commandd-bar), or install kbd-commandd-bar in one of them")
    }
}

/// Where `kbd-commandd run`, `agent` and `bar` look for the binaries they execute, in order: beside
/// this executable (the build tree, `.build/release/`), then `../libexec/kbd-commandd/` (the
/// installed layout: `/usr/bin/kbd-commandd` and `/usr/libexec/kbd-commandd/kbd-commandd-daemon`).
func siblingCandidates(_ name: String, executableDirectory directory: String) -> [String] {
    let parent = directory.hasSuffix("/bin") ? String(directory.dropLast(4)) : directory + "/.."
    return [directory + "/" + name, parent + "/libexec/kbd-commandd/" + name]
}

/// Replaces this process with `name` (see `siblingCandidates`; same PID, so systemd's
/// notify socket and signals reach it).
func execSibling(_ name: String, _ arguments: [String], what: String, advice: String? = nil) throws {
    guard let directory = ProcessEnvironment.executableDirectory() else {
        throw report(CLIFailure(message: "/proc/self/exe: cannot find this executable to locate \(name)", code: ExitStatus.failure))
    }
    let candidates = siblingCandidates(name, executableDirectory: directory)
    guard let path = candidates.first(where: { access($0, X_OK) == 0 }) else {
        throw report(CLIFailure(message: "\(candidates.joined(separator: ", ")): \(what) is missing; \(advice ?? "install \(name) in one of them")",
                                code: ExitStatus.failure))
    }
    let argv = [path] + arguments
    var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
    cArgs.append(nil)
    execv(path, &cArgs)
    throw report(CLIFailure(message: "\(path): cannot execute \(what): \(SystemError(operation: "execv", errno: errno).message)", code: ExitStatus.failure))
}
