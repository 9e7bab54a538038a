import ArgumentParser
import KbdProcess
import KbdService
import KbdDaemon
import KbdSystem
import KbdControl
#if canImport(Glibc)
import Glibc
#endif

/// `kbd-commandd reload`: asks the running service to load its config again, over the
/// control socket, and says what happened: the new command count, or why the service
/// refused the new config (it keeps the previous one).
struct ReloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Make the running service load its config again; print why when it refuses it.",
        discussion: """
            Sends a reload request over the control socket (root, the kbd-commandd user or \
            members of group kbd-commandd may). The service reads the same files it started \
            with (by default /etc/kbd-commandd/config.toml and config.d/*.toml). Prints \
            'reloaded: N commands' and exits 0, or prints each problem of the refused config \
            as 'Error: FILE:LINE: message' and exits 78; the service keeps the previous config. \
            'systemctl reload kbd-commandd' runs this.

            Examples:
              kbd-commandd reload
            """
    )

    @Option(help: ArgumentHelp("Control socket path (default as for run).", valueName: "path"))
    var socket: String?

    func run() throws {
        let reply = try askService(.reload, socket: socket)
        var count: Int?
        if case .reload(let commands, _) = reply { count = commands }
        if reply.ok {
            let stdout = FileOutput.standardOutput()
            stdout.write("reloaded: \(count.map(String.init) ?? "?") commands\n")
            try stdout.flush()
            return
        }
        let reason = reply.error ?? "no reason given"
        let stderr = FileOutput.standardError()
        for line in reason.split(separator: "\n") { stderr.write("Error: \(String(line).escapingControlCharacters)\n") }
        stderr.write("The service keeps its previous config (\(count.map(String.init) ?? "?") commands).\n")
        // A refused config is a config problem (as in check); a refused request (not allowed) is not.
        throw ExitCode(reply.name == "reload" ? ExitStatus.configError : ExitStatus.failure)
    }
}
