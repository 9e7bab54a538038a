import ArgumentParser
import CLinux
import HardwareInput
import KbdService
#if canImport(Glibc)
import Glibc
#endif

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the daemon's events as they happen (a control-socket client).",
        discussion: """
            Subscribes to event kinds and prints each event: attach, detach, presence, chord, \
            command, geometry, dropped (default: all of these). `key` carries typed text and works \
            only when the daemon runs with --allow-key-events.

            Example:
              kbd-commandd watch --events attach,detach,presence --format json
            """
    )

    @Option(help: ArgumentHelp("Control socket path (default as for run).", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp("Event kinds, comma-separated.", valueName: "kinds"))
    var events = ControlRequest.defaultSubscription.joined(separator: ",")

    @Option(help: ArgumentHelp("Output format: text or json.", valueName: "format"))
    var format: OutputFormat = .text

    @Option(help: ArgumentHelp("Keep trying to connect for this many seconds (the daemon may still be starting).", valueName: "seconds"))
    var retry: Double = 0

    @Option(help: ArgumentHelp("Send one request line (e.g. '{\"request\":\"list_devices\"}'), print the reply, exit.", valueName: "json"))
    var request: String?

    func run() throws {
        let environment = ProcessEnvironment.current()
        guard let path = socket ?? ControlSocketPath.forClient(environment: environment, exists: { access($0, F_OK) == 0 }) else {
            throw report(CLIFailure(message: "no control socket: \(ControlSocketPath.system) does not exist and XDG_RUNTIME_DIR is unset (use --socket)", code: ExitStatus.noInput))
        }
        var attempts = Int(retry * 10)
        var fd: Int32 = -1
        while fd < 0 {
            do { fd = try connectUnix(path, quiet: attempts > 0) } catch {
                guard attempts > 0 else { throw error }
                attempts -= 1
                usleep(100_000)
            }
        }
        defer { close(fd) }
        let first: String
        if let request { first = request } else {
            let kinds = splitList(events).map { JSONValue.quoted($0) }.joined(separator: ",")
            first = #"{"request":"subscribe","events":["# + kinds + "]}"
        }
        guard writeAll(fd, first + "\n") else { throw report(CLIFailure(message: "\(path): cannot send the request", code: ExitStatus.failure)) }
        let stdout = FileOutput(fd: 1, path: "<stdout>", capacity: 0)
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var sawReply = false
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            pending.append(contentsOf: buffer[0..<n])
            while let nl = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                if !sawReply {
                    sawReply = true
                    if request != nil || line.contains(#""ok":false"#) {
                        stdout.write(line + "\n")
                        if line.contains(#""ok":false"#) { throw ExitCode(ExitStatus.failure) }
                        return
                    }
                    continue
                }
                stdout.write((format == .json ? line : Self.text(line)) + "\n")
            }
        }
    }

    /// A JSON event line as `TIME EVENT key=value …`.
    static func text(_ line: String) -> String {
        guard case .object(let o)? = try? JSONValue.parse(line) else { return line }
        var parts: [String] = []
        if let t = o["time"] { parts.append(t.serialized()) }
        if let e = o["event"]?.stringValue { parts.append(e) }
        for (k, v) in o.members where k != "time" && k != "event" {
            parts.append("\(k)=\(v.stringValue ?? v.serialized())")
        }
        // Names come from devices and clients: keep them on this line, away from the terminal.
        return parts.joined(separator: " ").escapingControlCharacters
    }
}

/// Connects to the control socket.
func connectUnix(_ path: String, quiet: Bool = false) throws -> Int32 {
    do {
        return try UnixSocketAddress(path: path).connect()
    } catch {
        if quiet { throw error }
        if error.errno == ENAMETOOLONG { throw report(CLIFailure(message: "\(path): socket path too long", code: ExitStatus.usage)) }
        throw report(CLIFailure(message: "\(path): cannot connect to the daemon: \(error.message) (is 'kbd-commandd run' running? --socket?)", code: ExitStatus.noInput))
    }
}

func writeAll(_ fd: Int32, _ text: String) -> Bool {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        bytes = bytes.dropFirst(n)
    }
    return true
}
