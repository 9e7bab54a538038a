import CLinux
import Logging
import KbdSystem
import KbdProcess
import KbdControl
import KbdCore
#if canImport(Glibc)
import Glibc
#endif

/// The shortcuts bar (`kbd-commandd-bar`, beside the agent's binary), a child of the agent
/// while `[bar] enabled` says so: started with the agent's socket and config, stopped when
/// the agent stops or the setting turns off. Unset, the bar runs where the compositor has
/// layer-shell: it exits with `unavailableStatus` elsewhere (GNOME), and is not started again.
/// A bar that ends otherwise (a crash, a kill) is started again after 1 s, the wait doubling
/// to 60 s while it keeps ending within 30 s of its start (`restartDue`; the agent's loop calls
/// `restartIfDue`), so a bar that cannot stay up costs one warning a minute, not a busy loop.
final class BarProcess {
    /// The bar's exit status when the desktop cannot show it (documented in its --help).
    static let unavailableStatus: Int32 = 69
    static let binaryName = "kbd-commandd-bar"

    private let logger: Logger
    private let path: String?
    private(set) var pid: pid_t = 0
    /// The desktop cannot show it (exit 69), or the binary is missing: not tried again.
    private var gaveUp = false
    /// When to start a bar that ended unexpectedly (nil: nothing pending), and how long to wait.
    private(set) var restartDue: EventTime?
    private var backoff = ReconnectBackoff(initial: 1000, maximum: 60_000, stable: 30_000)
    /// What the last `update` was given, for a restart.
    private var arguments: (enabled: Bool?, socketPath: String, configPath: String)?
    private let clock: () -> EventTime

    init(logger: Logger, executableDirectory: String? = ProcessEnvironment.executableDirectory(), clock: @escaping () -> EventTime = monotonicNow) {
        self.logger = logger
        self.clock = clock
        path = executableDirectory.map { $0 + "/" + Self.binaryName }
    }

    /// The bar's binary when it is installed (its consent dialog asks about apps' shortcuts).
    var installedPath: String? { path.flatMap { access($0, X_OK) == 0 ? $0 : nil } }

    /// Starts or stops the bar as `enabled` (`[bar] enabled`; nil: where layer-shell is) says.
    func update(enabled: Bool?, socketPath: String, configPath: String) {
        // A bar of another socket (the agent found the service's socket after it started)
        // is started again with the new one: it would wait at the old path forever.
        let movedSocket = arguments.map { $0.socketPath != socketPath } ?? false
        arguments = (enabled, socketPath, configPath)
        if enabled == false { return stop() }
        if movedSocket, pid > 0 {
            logger.info("bar: the service's socket is \(socketPath) now; starting the bar again")
            stop()
        }
        guard pid == 0, !gaveUp else { return }
        restartDue = nil
        guard let path, access(path, X_OK) == 0 else {
            gaveUp = true
            if enabled == true { logger.warning("bar: \(path ?? Self.binaryName) is missing (install the package kbd-commandd-bar); no shortcuts bar") }
            else { logger.info("bar: \(path ?? Self.binaryName) is not installed (the package kbd-commandd-bar); no shortcuts bar") }
            return
        }
        let argv = [path, "--socket", socketPath, "--config", configPath]
        let child: pid_t
        do throws(SystemError) {
            child = try ChildProgram.start(path, arguments: argv)
        } catch {
            logger.warning("bar: cannot start \(path): \(error.message)")
            return
        }
        pid = child
        backoff.connected(now: clock().microseconds / 1000)
        logger.info("bar: started \(path) [\(child)]")
    }

    /// Whether the bar exited (on SIGCHLD): reaps it and says why.
    func reap() {
        guard pid > 0 else { return }
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        guard r == pid || (r < 0 && errno == ECHILD) else { return }
        let signal = status & 0x7f, code = (status >> 8) & 0xff
        if r == pid, signal == 0, code == Self.unavailableStatus {
            gaveUp = true
            logger.info("bar: this desktop cannot show the shortcuts bar (no layer-shell); not started again")
        } else if r == pid {
            let now = clock()
            let wait = backoff.disconnected(now: now.microseconds / 1000)
            restartDue = now.adding(milliseconds: wait)
            logger.warning("bar: [\(pid)] ended (\(signal != 0 ? "signal \(signal)" : "exit status \(code)")); starting it again in \(Self.seconds(wait))")
        }
        pid = 0
    }

    /// Starts the bar again if it ended unexpectedly and its wait is over.
    func restartIfDue() {
        guard let due = restartDue, due <= clock(), let a = arguments else { return }
        restartDue = nil
        update(enabled: a.enabled, socketPath: a.socketPath, configPath: a.configPath)
    }

    private static func seconds(_ milliseconds: Int) -> String {
        milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }

    /// Stops the bar (SIGTERM; SIGKILL after 2 s) and waits for it.
    func stop() {
        restartDue = nil
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<200 {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || (r < 0 && errno != EINTR) { pid = 0; return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        pid = 0
    }
}
