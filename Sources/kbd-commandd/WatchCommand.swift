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

            After subscribing, and after every reconnect, it prints the state the service reports \
            at that moment as events marked "current": true (presence with its reason, and the \
            geometry when one is configured), then each change as it happens.

            Examples:
              kbd-commandd watch --events attach,detach,presence --format json
              kbd-commandd watch --events presence --reconnect
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

    @Flag(help: ArgumentHelp("Wait for the service, and subscribe again whenever it restarts (without it, watch ends when the service closes the connection)."))
    var reconnect = false

    func run() throws {
        let environment = ProcessEnvironment.current()
        guard let path = socket ?? ControlSocketPath.forClient(environment: environment, exists: { access($0, F_OK) == 0 }) else {
            throw report(CLIFailure(message: "no control socket: \(ControlSocketPath.system) does not exist and XDG_RUNTIME_DIR is unset (use --socket)", code: ExitStatus.noInput))
        }
        if request != nil && reconnect {
            throw report(CLIFailure(message: "--reconnect is for watching events; a --request is sent once", code: ExitStatus.usage))
        }
        let stdout = FileOutput(fd: 1, path: "<stdout>", capacity: 0)
        var connectedBefore = false
        while true {
            let fd = try connect(path, waitForever: reconnect)
            if connectedBefore { FileOutput.standardError().write("kbd-commandd watch: reconnected to \(path.escapingControlCharacters)\n") }
            connectedBefore = true
            defer { close(fd) }
            try watch(fd, path: path, stdout: stdout)
            guard reconnect else { return }
            FileOutput.standardError().write("kbd-commandd watch: the service closed the connection; waiting for it\n")
        }
    }

    /// Connects, retrying for `--retry` seconds, or (with `--reconnect`) until the service
    /// answers, backing off from 0.1 s to 2 s between attempts.
    private func connect(_ path: String, waitForever: Bool) throws -> Int32 {
        var attempts = Int(retry * 10)
        var delay: UInt32 = 100_000
        while true {
            do {
                let fd = try connectUnix(path, quiet: attempts > 0 || waitForever)
                // Whoever answers on this path: root, the service's own user, or you. Another user may
                // have bound it (a socket in a directory they could write) to show you what they want.
                if let refusal = Self.untrustedServer(fd, path: path) {
                    close(fd)
                    throw report(CLIFailure(message: refusal, code: ExitStatus.failure))
                }
                return fd
            } catch let error as CLIFailure {
                throw error
            } catch {
                if waitForever {
                    usleep(delay)
                    delay = min(delay * 2, 2_000_000)
                    continue
                }
                guard attempts > 0 else { throw error }
                attempts -= 1
                usleep(100_000)
            }
        }
    }

    /// Subscribes (or sends the one request) and prints until the server hangs up.
    private func watch(_ fd: Int32, path: String, stdout: FileOutput) throws {
        let first: String
        if let request { first = request } else {
            let kinds = splitList(events).map { JSONValue.quoted($0) }.joined(separator: ",")
            first = #"{"request":"subscribe","events":["# + kinds + "]}"
        }
        guard writeAll(fd, first + "\n") else {
            if reconnect { return }
            throw report(CLIFailure(message: "\(path.escapingControlCharacters): cannot send the request", code: ExitStatus.failure))
        }
        // One line may hold a whole listing, but not without end.
        let lines = LineBuffer(maxLineBytes: Self.maxLineBytes)
        var sawReply = false
        var origin: Double?
        reading: while true {
            switch lines.read(from: fd, budget: 64 * 1024) {
            case .bytes: break
            case .again: continue reading
            case .eof: break reading
            case .error(let e):
                if reconnect { return }
                throw report(CLIFailure(message: "\(path.escapingControlCharacters): read: \(SystemError(operation: "read", errno: e).message)", code: ExitStatus.failure))
            }
            while true {
                let bytes: UnsafeBufferPointer<UInt8>
                switch lines.nextLine() {
                case .none: continue reading
                case .tooLong:
                    throw report(CLIFailure(message: "\(path.escapingControlCharacters): the server sent a line longer than \(Self.maxLineBytes >> 20) MiB; not a kbd-commandd server", code: ExitStatus.failure))
                case .line(let line): bytes = line
                }
                // Only JSON objects are printed, and printed as we serialize them: terminal-safe
                // (every control character escaped) whatever the server sent.
                guard case .object(let object)? = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)) else {
                    throw report(CLIFailure(message: "\(path.escapingControlCharacters): the server sent a line that is not a JSON object; not a kbd-commandd server", code: ExitStatus.failure))
                }
                let value = JSONValue.object(object)
                if !sawReply {
                    sawReply = true
                    let failed = object["ok"] == .bool(false)
                    if request != nil || failed {
                        stdout.write(value.serialized() + "\n")
                        if failed { throw ExitCode(ExitStatus.failure) }
                        return
                    }
                    // Text: one clock, seconds since the service started (the reply's `started`,
                    // on the clock of the events' `time`: CLOCK_MONOTONIC), said in a header line.
                    if format != .json {
                        origin = object["started"]?.numberValue
                        stdout.write((origin == nil ? Self.bootHeader : Self.textHeader) + "\n")
                    }
                    // The state at subscription (and after every reconnect), as events marked current.
                    let subscribed = Set(splitList(events))
                    for event in Self.currentState(object) where subscribed.contains(event.objectValue?["event"]?.stringValue ?? "") {
                        stdout.write((format == .json ? event.serialized() : Self.text(event, since: origin)) + "\n")
                    }
                    continue
                }
                stdout.write((format == .json ? value.serialized() : Self.text(value, since: origin)) + "\n")
            }
        }
    }

    /// The subscribe reply's state as events: `{"event":"presence","current":true,"hardware_keyboard":B,"reason":R}`
    /// and `{"event":"geometry","current":true,…}`, when the reply carries them.
    static func currentState(_ reply: JSONObject) -> [JSONValue] {
        var out: [JSONValue] = []
        if let present = reply["hardware_keyboard"] {
            var o = JSONObject([("event", .string("presence")), ("current", .bool(true)), ("hardware_keyboard", present)])
            if let reason = reply["reason"] { _ = o.updateValue(reason, forKey: "reason") }
            out.append(.object(o))
        }
        if case .object(let geometry)? = reply["geometry"] {
            var o = JSONObject([("event", .string("geometry")), ("current", .bool(true))])
            for (k, v) in geometry.members { _ = o.updateValue(v, forKey: k) }
            out.append(.object(o))
        }
        return out
    }

    /// The longest line `watch` accepts from the server.
    static let maxLineBytes = 16 << 20

    /// Why the server on `fd` is not trusted, or nil: it must run as root, as the system
    /// service's user `kbd-commandd`, or as the user running `watch` (SO_PEERCRED: its
    /// credentials when it called listen()). There is deliberately no flag to trust others.
    static func untrustedServer(_ fd: Int32, path: String) -> String? {
        var peer = kbd_peer()
        guard kbd_peer_credentials(fd, &peer) == 0 else {
            return "\(path.escapingControlCharacters): cannot learn who serves it (SO_PEERCRED: \(SystemError(operation: "getsockopt", errno: errno).message)); not trusting it"
        }
        var trusted: [UInt32] = [0, geteuid()]
        if let user = getpwnam("kbd-commandd") { trusted.append(user.pointee.pw_uid) }
        guard !trusted.contains(peer.uid) else { return nil }
        return "\(path.escapingControlCharacters) is served by uid \(peer.uid), not by root, kbd-commandd or you (uid \(geteuid())); not trusting it"
    }

    static let textHeader = "# time: seconds since the service started; then the event and its details (--format json: the service's CLOCK_MONOTONIC, and the subscribe reply's \"started\")"
    static let bootHeader = "# time: seconds since boot (the service's CLOCK_MONOTONIC); then the event and its details"

    /// A JSON event as `TIME EVENT key=value …`, TIME relative to `origin` (seconds) when given.
    static func text(_ event: JSONValue, since origin: Double? = nil) -> String {
        guard case .object(let o) = event else { return event.serialized() }
        var parts: [String] = []
        if let t = o["time"] {
            if let origin, let seconds = t.numberValue {
                let micro = Int64(((seconds - origin) * 1_000_000).rounded())
                parts.append(EventTime(microseconds: micro).description)
            } else {
                parts.append(t.serialized())
            }
        }
        if let e = o["event"]?.stringValue { parts.append(e) }
        for (k, v) in o.members where k != "time" && k != "event" {
            parts.append("\(k)=\(v.stringValue ?? v.serialized())")
        }
        // Names come from devices and clients: keep them on this line, away from the terminal.
        return parts.joined(separator: " ").escapingControlCharacters
    }
}

/// One request to the running service and its reply (`reload`, `commands --active`): the
/// default socket as for `watch`, the server checked as `watch` checks it, one bounded line back.
func askService(_ request: String, socket: String?) throws -> JSONObject {
    let environment = ProcessEnvironment.current()
    guard let path = socket ?? ControlSocketPath.forClient(environment: environment, exists: { access($0, F_OK) == 0 }) else {
        throw report(CLIFailure(message: "no control socket: \(ControlSocketPath.system) does not exist and XDG_RUNTIME_DIR is unset (use --socket)", code: ExitStatus.noInput))
    }
    let fd = try connectUnix(path)
    defer { close(fd) }
    if let refusal = WatchCommand.untrustedServer(fd, path: path) { throw report(CLIFailure(message: refusal, code: ExitStatus.failure)) }
    guard writeAll(fd, request + "\n") else {
        throw report(CLIFailure(message: "\(path.escapingControlCharacters): cannot send the request", code: ExitStatus.failure))
    }
    let lines = LineBuffer(maxLineBytes: WatchCommand.maxLineBytes)
    while true {
        switch lines.read(from: fd, budget: 64 * 1024) {
        case .bytes, .again: break
        case .eof:
            throw report(CLIFailure(message: "\(path.escapingControlCharacters): the service closed the connection without a reply", code: ExitStatus.failure))
        case .error(let e):
            throw report(CLIFailure(message: "\(path.escapingControlCharacters): read: \(SystemError(operation: "read", errno: e).message)", code: ExitStatus.failure))
        }
        switch lines.nextLine() {
        case .none: continue
        case .tooLong:
            throw report(CLIFailure(message: "\(path.escapingControlCharacters): the server sent a line longer than \(WatchCommand.maxLineBytes >> 20) MiB; not a kbd-commandd server", code: ExitStatus.failure))
        case .line(let bytes):
            guard case .object(let o)? = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)) else {
                throw report(CLIFailure(message: "\(path.escapingControlCharacters): the server sent a line that is not a JSON object; not a kbd-commandd server", code: ExitStatus.failure))
            }
            return o
        }
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
