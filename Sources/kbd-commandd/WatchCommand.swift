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
    var events = "attach,detach,presence,chord,command,geometry,dropped"

    @Option(help: ArgumentHelp("Output format: text or json.", valueName: "format"))
    var format: OutputFormat = .text

    @Option(help: ArgumentHelp("Keep trying to connect for this many seconds (the daemon may still be starting).", valueName: "seconds"))
    var retry: Double = 0

    @Option(help: ArgumentHelp("Send one request line (e.g. '{\"request\":\"list_devices\"}'), print the reply, exit.", valueName: "json"))
    var request: String?

    func run() throws {
        let environment = ProcessEnvironment.current()
        let path = socket ?? (geteuid() == 0 ? "/run/kbd-commandd/socket" : (environment["XDG_RUNTIME_DIR"] ?? "/tmp") + "/kbd-commandd.socket")
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

/// Connects to a Unix stream socket. The corresponding C function is `connect(2)`.
func connectUnix(_ path: String, quiet: Bool = false) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw report(CLIFailure(message: "socket: \(SystemError(operation: "socket", errno: errno).message)", code: ExitStatus.failure)) }
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
        close(fd)
        throw report(CLIFailure(message: "\(path): socket path too long", code: ExitStatus.usage))
    }
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
    let rc = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard rc == 0 else {
        let e = SystemError(operation: "connect", path: path, errno: errno)
        close(fd)
        if quiet { throw e }
        throw report(CLIFailure(message: "\(path): cannot connect to the daemon: \(e.message) (is 'kbd-commandd run' running? --socket?)", code: ExitStatus.noInput))
    }
    return fd
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
