import ArgumentParser
import KbdProcess
import CLinux
import KbdCore
import KbdService
import KbdControl
import KbdSystem
import KbdJSON
import KbdPipeline
import KbdTOML
#if canImport(Glibc)
import Glibc
#endif

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the daemon's events as they happen (a control-socket client).",
        discussion: """
            Subscribes to event kinds and prints each event: attach, detach, presence, chord, \
            command, geometry, dropped, session (default: all of these). `key` carries typed text and works \
            only when the daemon runs with --allow-key-events. `hud` (the discoverability HUD \
            shown and hidden) and `toolbar` (what the shortcuts bar shows, sent at once and on \
            every change) are asked for by name; they reach operators and the user whose session \
            is active, never anyone else.

            After subscribing, and after every reconnect, it prints the state the service reports \
            at that moment as events marked "current": true (presence with its reason, and the \
            geometry when one is configured), then each change as it happens.

            Examples:
              kbd-commandd watch --events attach,detach,presence --format json
              kbd-commandd watch --events presence --reconnect
              kbd-commandd watch --events hud,toolbar --format json
            """
    )

    @Option(help: ArgumentHelp("Control socket path (default as for run).", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp("Event kinds, comma-separated.", valueName: "kinds"))
    var events = ControlRequest.defaultSubscription.map(\.rawValue).sorted().joined(separator: ",")

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
        let first = try firstRequest()
        let stdout = FileOutput(fd: 1, path: "<stdout>", capacity: 0)
        var connectedBefore = false
        let client = ControlClient(path: path, maxLineBytes: Self.maxLineBytes)
        while true {
            try connect(client, waitForever: reconnect)
            if connectedBefore { FileOutput.standardError().write("kbd-commandd watch: reconnected to \(path.escapingControlCharacters)\n") }
            connectedBefore = true
            defer { client.disconnect() }
            try watch(client, first: first, stdout: stdout)
            guard reconnect else { return }
            FileOutput.standardError().write("kbd-commandd watch: the service closed the connection; waiting for it\n")
        }
    }

    /// The subscription, or the `--request` line as given (watch sends it as it is, so the
    /// service's own answer to a malformed line can be seen).
    private func firstRequest() throws -> ControlClient.Outgoing {
        if let request { return .raw(request) }
        var kinds: Set<ControlEventKind> = []
        for name in splitList(events) {
            guard let kind = ControlEventKind(rawValue: name) else {
                throw report(CLIFailure(message: "--events: unknown event kind '\(name)'; expected some of \(ControlRequest.eventKinds.sorted().joined(separator: ", "))", code: ExitStatus.usage))
            }
            kinds.insert(kind)
        }
        return .request(.subscribe(kinds))
    }

    /// Connects, retrying for `--retry` seconds, or (with `--reconnect`) until the service
    /// answers, backing off from 0.1 s to 2 s between attempts. Whoever answers on this path
    /// must be root, the service's own user, or you (ControlClient checks): another user may
    /// have bound it (a socket in a directory they could write) to show you what they want.
    private func connect(_ client: ControlClient, waitForever: Bool) throws {
        // The shared lifecycle (ControlConnection), `watch`'s policy; this loop blocks.
        var connection = ControlConnection(policy: .watch(reconnect: waitForever, attempts: Int(retry * 10)))
        var actions = connection.start()
        while !actions.isEmpty {
            let action = actions.removeFirst()
            switch action {
            case .connect:
                do throws(ControlClientError) {
                    return try client.connect()
                } catch {
                    actions += connection.connectFailed(error)
                }
            case .armTimer(let milliseconds):
                usleep(UInt32(milliseconds) * 1000)
                actions += connection.timerFired()
            case .giveUp(let error):
                if case .untrustedServer = error.kind { throw report(CLIFailure(message: error.message, code: ExitStatus.failure)) }
                throw connectFailure(error, path: client.path)
            case .watch, .unwatch, .send, .say:
                break  // watch sends and reads itself once connected, and says nothing while waiting
            }
        }
    }

    /// Subscribes (or sends the one request) and prints until the server hangs up.
    private func watch(_ client: ControlClient, first: ControlClient.Outgoing, stdout: FileOutput) throws {
        let path = client.path
        guard client.send(first) else {
            if reconnect { return }
            throw report(CLIFailure(message: "\(path.escapingControlCharacters): cannot send the request", code: ExitStatus.failure))
        }
        var sawReply = false
        var origin: Double?
        while true {
            if case .closed(let reason) = client.read() {
                if reason == ControlClient.closedByService || reconnect { return }
                throw report(CLIFailure(message: "\(path.escapingControlCharacters): read: \(reason)", code: ExitStatus.failure))
            }
            while true {
                let text: String?
                do { text = try client.nextRawLine() } catch { throw report(CLIFailure(message: error.message, code: ExitStatus.failure)) }
                guard let text else { break }
                // Only JSON objects are printed, and printed as we serialize them: terminal-safe
                // (every control character escaped) whatever the server sent.
                guard case .object(let object)? = try? JSONValue.parse(text) else {
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
func askService(_ request: ControlRequest, socket: String?) throws -> ControlReply {
    let environment = ProcessEnvironment.current()
    guard let path = socket ?? ControlSocketPath.forClient(environment: environment, exists: { access($0, F_OK) == 0 }) else {
        throw report(CLIFailure(message: "no control socket: \(ControlSocketPath.system) does not exist and XDG_RUNTIME_DIR is unset (use --socket)", code: ExitStatus.noInput))
    }
    do throws(ControlClientError) {
        return try ControlClient(path: path, maxLineBytes: WatchCommand.maxLineBytes).ask(request)
    } catch {
        throw connectFailure(error, path: path)
    }
}

/// The CLI's error for a client failure: exit 66 (no input) when nothing answers on the
/// path, 64 for a path too long for a socket, 1 otherwise (a refused server, a bad line).
func connectFailure(_ error: ControlClientError, path: String) -> any Error {
    guard case .cannotConnect(let errno) = error.kind else { return report(CLIFailure(message: error.message, code: ExitStatus.failure)) }
    if errno == ENAMETOOLONG { return report(CLIFailure(message: "\(path): socket path too long", code: ExitStatus.usage)) }
    return report(CLIFailure(message: "\(path): cannot connect to the daemon: \(SystemError(operation: "connect", errno: errno).message) (is 'kbd-commandd run' running? --socket?)", code: ExitStatus.noInput))
}
