public import KbdCore
public import KbdPipeline
public import KbdProcess
public import KbdDaemon
import KbdSystem
import KbdKeymap
import KbdCommands
import KbdConfig
import KbdSeats
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's event loop against fake devices (the same epoll, pipeline,
/// socket and child processes as live; only the device nodes are fakes): how tests start a
/// daemon, type on its keyboards and pump its loop. `SocketClient` talks to its socket.
public final class DaemonHarness {
    public let source = FakeDeviceSource()
    public let clock = ManualClock()
    public let logs = LogCollector()
    public let configPath: String
    public let socketPath: String
    public var events: [PipelineEvent] = []
    public let daemon: KeyboardDaemon

    public static let config = """
        [[command]]
        id = "copy"
        title = "Copy"
        keys = "Ctrl+C"
        run = ["/bin/echo", "copy-marker"]

        [[command]]
        id = "save"
        keys = "Ctrl+S"

        [[command]]
        id = "editor-save"
        keys = "Ctrl+S"
        scope = "editor"

        [[command]]
        id = "letter-q"
        keys = "q"

        [[command]]
        id = "missing-program"
        keys = "Ctrl+M"
        run = ["/nonexistent/program"]

        [[command]]
        id = "slow"
        keys = "Ctrl+L"
        repeat = true
        run = ["/bin/sleep", "2"]
        """

    public init(config: String = DaemonHarness.config, allowKeyEvents: Bool = false, maxChildren: Int = 8,
         devices: [(String, DeviceDescription)] = [], childEnvironment: [String]? = nil, socketPath: String? = nil,
         maxClients: Int = 256, userAgents: Bool = false, unreadable: [(String, DeviceDescription)] = [],
         childExits: CommandRunner.ExitNotice = .pidfd) throws {
        let unique = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        configPath = "/tmp/kbd-daemon-\(unique).toml"
        self.socketPath = socketPath ?? "/tmp/kbd-daemon-\(unique).sock"
        try Self.write(config, to: configPath)
        for (path, d) in devices { source.plug(path, d, announce: false) }
        for (path, d) in unreadable { source.plug(path, d, readable: false, announce: false) }
        let path = configPath
        let clock = self.clock
        var options = KeyboardDaemon.Options(socketPath: self.socketPath, allowKeyEvents: allowKeyEvents, maxChildren: maxChildren,
                                             presenceDebounceMilliseconds: 500, maxClients: maxClients, userAgents: userAgents)
        if let childEnvironment { options.childEnvironment = childEnvironment }
        options.childExits = childExits
        daemon = try KeyboardDaemon(
            options: options,
            source: source, logger: logs.makeLogger(), clock: { clock.now }, load: {
                let config = try ConfigLoader.load(path: path)
                return .init(config: config, keymap: try XkbKeymap(context: try XkbContext(), names: KeymapNames(rules: "evdev", model: "pc105", layout: config.keymap.layout ?? "us", variant: "", options: config.keymap.options ?? "")))
            })
        daemon.observer = { [unowned self] in self.events.append($0) }
        // logind, simulated: the test's own uid is at seat0 unless a test says otherwise.
        let login = self.login
        daemon.loginSource = { () throws(SeatsUnavailable) -> any LoginSource in login }
    }

    /// Who is at each seat, as the daemon learns it from logind.
    public let login = FakeLogin(ActiveSessions(available: true, activeUID: [ActiveSessions.defaultSeat: geteuid()]))

    deinit { unlink(configPath) }

    public static func write(_ text: String, to path: String) throws {
        let out = try FileOutput.create(path: path)
        out.write(text)
        try out.flush()
    }

    /// Lets the loop handle everything that is ready.
    public func pump(_ rounds: Int = 3) {
        for _ in 0..<rounds { daemon.runOnce(maxWaitMilliseconds: 0) }
    }

    /// Pumps until the service has let a client go that the test closed: the hang-up is read
    /// in one of its next turns, not always within the three of `pump()` under ASan or on a
    /// loaded machine (tests that waited three turns failed there).
    @discardableResult
    public func pumpUntilClients(_ count: Int) -> Bool {
        pump(until: { daemon.controlClientCount == count })
    }

    /// Pumps until `condition` holds or `seconds` pass (for child processes).
    public func pump(until condition: () -> Bool, seconds: Double = 5) -> Bool {
        let end = monotonicNow().adding(milliseconds: Int(seconds * 1000))
        while !condition() {
            if monotonicNow() > end { return false }
            daemon.runOnce(maxWaitMilliseconds: 20)
        }
        return true
    }

    public var commandIDs: [String] {
        events.compactMap {
            switch $0 {
            case .command(_, _, let c, _), .ownedCommand(_, _, _, let c, _): return c.id
            default: return nil
            }
        }
    }
    public var kinds: [String] { events.map(\.kind) }

    public func type(_ device: FakeDevice, _ changes: [(String, Int32)]) {
        clock.advance(ms: 10)
        device.keys(changes, at: clock.now)
        pump()
    }
}
