import ArgumentParser
import HardwareInput
import KbdService
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
        let environment = ProcessEnvironment.current()
        guard let path = socket ?? ControlSocketPath.forClient(environment: environment, exists: { access($0, F_OK) == 0 }) else {
            throw report(CLIFailure(message: "no control socket: \(ControlSocketPath.system) does not exist and XDG_RUNTIME_DIR is unset (use --socket)", code: ExitStatus.noInput))
        }
        let fd = try connectUnix(path)
        defer { close(fd) }
        if let refusal = WatchCommand.untrustedServer(fd, path: path) { throw report(CLIFailure(message: refusal, code: ExitStatus.failure)) }
        guard writeAll(fd, #"{"request":"reload"}"# + "\n") else {
            throw report(CLIFailure(message: "\(path.escapingControlCharacters): cannot send the request", code: ExitStatus.failure))
        }
        let lines = LineBuffer(maxLineBytes: WatchCommand.maxLineBytes)
        var reply: JSONObject?
        reading: while reply == nil {
            switch lines.read(from: fd, budget: 64 * 1024) {
            case .bytes, .again: break
            case .eof: break reading
            case .error(let e):
                throw report(CLIFailure(message: "\(path.escapingControlCharacters): read: \(SystemError(operation: "read", errno: e).message)", code: ExitStatus.failure))
            }
            if case .line(let bytes) = lines.nextLine() {
                guard case .object(let o)? = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)) else {
                    throw report(CLIFailure(message: "\(path.escapingControlCharacters): the server sent a line that is not a JSON object; not a kbd-commandd server", code: ExitStatus.failure))
                }
                reply = o
            }
        }
        guard let reply else {
            throw report(CLIFailure(message: "\(path.escapingControlCharacters): the service closed the connection without a reply", code: ExitStatus.failure))
        }
        let count = reply["commands"].flatMap { if case .number(let n) = $0 { Int(n) } else { nil } }
        if reply["ok"] == .bool(true) {
            let stdout = FileOutput.standardOutput()
            stdout.write("reloaded: \(count.map(String.init) ?? "?") commands\n")
            try stdout.flush()
            return
        }
        let reason = reply["error"]?.stringValue ?? "no reason given"
        let stderr = FileOutput.standardError()
        for line in reason.split(separator: "\n") { stderr.write("Error: \(String(line).escapingControlCharacters)\n") }
        stderr.write("The service keeps its previous config (\(count.map(String.init) ?? "?") commands).\n")
        // A refused config is a config problem (as in check); a refused request (not allowed) is not.
        throw ExitCode(reply["reply"]?.stringValue == "reload" ? ExitStatus.configError : ExitStatus.failure)
    }
}
