public import KbdCore
import KbdSystem
public import Logging
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Executes the `run` argv of fired commands: no shell, off the routing path
/// (`posix_spawnp` returns at once), stdout and stderr captured into the log, at
/// most `maxChildren` processes at a time (more are refused with a log line, so a
/// held chord with `repeat = true` cannot fork without bound).
///
/// The loop never waits on a child:
/// - a slot belongs to a process, not to its output: each child is watched through
///   a pidfd and reaped by pid when it exits, even while a background process it
///   started still holds the output pipe;
/// - output is read at most `readBudget` bytes per wakeup, and an output writing
///   faster than `bytesPerSecond` is not watched for the rest of that second (the
///   child then blocks in write(2) and costs nothing);
/// - at most `logBurst` lines, then `logPerSecond` lines a second, reach the log per
///   output, each cut to `maxLoggedLineBytes`; the rest is counted and summarised;
/// - an output whose process has exited (a background grandchild holds it) is kept
///   only while fewer than `maxOrphanOutputs` are open; the oldest is closed first.
///
/// Children start with no inherited descriptors beyond stdin (/dev/null), stdout and
/// stderr (the pipe), the environment the daemon was given (`environment`, plus
/// `KBD_COMMAND_ID`), default signal dispositions and their own session.
public final class CommandRunner {
    public struct Limits: Sendable {
        public var readBudget = 64 * 1024
        public var bytesPerSecond = 1 << 20
        public var logBurst = 50
        public var logPerSecond = 10
        public var maxLoggedLineBytes = 512
        /// Outputs kept open after their process exited.
        public var maxOrphanOutputs: Int

        public init(maxChildren: Int) {
            maxOrphanOutputs = 2 * maxChildren
        }
    }

    /// What a watched descriptor is, for the event loop's tokens.
    public enum Descriptor: Sendable {
        case output, process
    }

    private struct Process {
        let pid: pid_t
        let commandID: String
        let output: Int32
    }

    private final class Output {
        let fd: Int32
        let pid: pid_t
        let commandID: String
        let lines = LineBuffer(maxLineBytes: 4096)
        /// Set when its process was reaped (then the output is an orphan); orders orphans.
        var orphanedAt: Int?
        var windowStart: EventTime
        var windowBytes = 0
        var paused = false
        /// Log tokens, in thousandths of a line.
        var tokens: Int
        var refilledAt: EventTime
        var suppressedLines = 0
        var suppressedBytes = 0

        init(fd: Int32, pid: pid_t, commandID: String, now: EventTime, burst: Int) {
            self.fd = fd
            self.pid = pid
            self.commandID = commandID
            windowStart = now
            tokens = burst * 1000
            refilledAt = now
        }
    }

    public let maxChildren: Int
    public let limits: Limits
    private let logger: Logger
    private let clock: () -> EventTime
    /// "NAME=value" strings every child gets (plus `KBD_COMMAND_ID`).
    private let environment: [String]
    private var processes: [Int32: Process] = [:]  // by pidfd
    /// Children no pidfd could be opened for (an old kernel): reaped on SIGCHLD by `reap()`.
    private var unwatched: [pid_t: (commandID: String, output: Int32)] = [:]
    private var outputs: [Int32: Output] = [:]  // by pipe descriptor
    private var orphanSequence = 0
    private var buffer: [UInt8] = []

    /// Called with each new descriptor to watch, when one closes, and to pause or resume an output.
    package var watch: ((Int32, Descriptor) -> Void)?
    package var unwatch: ((Int32) -> Void)?
    package var setPaused: ((Int32, Bool) -> Void)?

    public private(set) var started = 0
    public private(set) var refused = 0
    public private(set) var failedToStart = 0
    /// Bytes read from children's outputs, and the most read from one output in one wakeup.
    public private(set) var bytesRead = 0
    public private(set) var largestReadPerWakeup = 0

    public init(maxChildren: Int = 8, limits: Limits? = nil, environment: [String] = CommandRunner.defaultEnvironment,
                logger: Logger, clock: @escaping () -> EventTime = monotonicNow) {
        self.maxChildren = maxChildren
        self.limits = limits ?? Limits(maxChildren: maxChildren)
        self.environment = environment
        self.logger = logger
        self.clock = clock
    }

    deinit {
        for fd in processes.keys { close(fd) }
        for fd in outputs.keys { close(fd) }
    }

    /// A search path and nothing else: what children get unless the service passes more.
    public static let defaultEnvironment = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]

    /// Processes started and not yet reaped: the slots in use.
    public var running: Int { processes.count + unwatched.count }

    /// Outputs still open (a process's, or an orphan's).
    public var openOutputs: Int { outputs.count }

    /// Outputs still open whose process has exited.
    public var orphanOutputs: Int { outputs.values.filter { $0.orphanedAt != nil }.count }

    /// When a paused output may be read again, if one is paused.
    public var nextDeadline: EventTime? {
        var earliest: EventTime?
        for o in outputs.values where o.paused {
            let at = o.windowStart.adding(milliseconds: 1000)
            if earliest == nil || at < earliest! { earliest = at }
        }
        return earliest
    }

    /// Starts `argv` for command `id`. Returns the child's pid, or nil when it was not started.
    @discardableResult
    public func run(_ argv: [String], commandID id: String) -> Int32? {
        guard !argv.isEmpty else { return nil }
        guard running < maxChildren else {
            refused += 1
            logger.warning("command \(id): not started, \(running) commands still running (limit \(maxChildren))")
            return nil
        }
        var fds: [Int32] = [0, 0]
        guard kbd_pipe2(&fds, O_CLOEXEC) == 0 else {
            logger.error("command \(id): cannot create a pipe: \(SystemError(operation: "pipe2", errno: errno).message)")
            return nil
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        // Nothing else crosses exec: not a descriptor the service was started with, not the pipe.
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        // The child gets default signal dispositions and an empty mask (the daemon blocks signals for signalfd).
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | KBD_POSIX_SPAWN_SETSID))
        let cargs = argv.map { strdup($0) } + [nil]
        let cenv = (environment + ["KBD_COMMAND_ID=\(id)"]).map { strdup($0) } + [nil]
        defer {
            cargs.forEach { free($0) }
            cenv.forEach { free($0) }
        }
        var pid = pid_t()
        let rc = posix_spawnp(&pid, argv[0], &actions, &attr, cargs, cenv)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            failedToStart += 1
            logger.error("command \(id): cannot start '\(argv[0].escapingControlCharacters)': \(SystemError(operation: "posix_spawnp", errno: rc).message)")
            return nil
        }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        started += 1
        makeRoomForAnOutput()
        outputs[fds[0]] = Output(fd: fds[0], pid: pid, commandID: id, now: clock(), burst: limits.logBurst)
        watch?(fds[0], .output)
        let pidfd = kbd_pidfd_open(pid)
        if pidfd >= 0 {
            _ = fcntl(pidfd, F_SETFD, FD_CLOEXEC)
            processes[pidfd] = Process(pid: pid, commandID: id, output: fds[0])
            watch?(pidfd, .process)
        } else {
            unwatched[pid] = (id, fds[0])
        }
        logger.info("command \(id): started '\(argv[0].escapingControlCharacters)' (pid \(pid))")
        return pid
    }

    // MARK: - Output

    /// Reads once from a child's output (call when `descriptor` is readable).
    package func drainOutput(_ descriptor: Int32) {
        guard let output = outputs[descriptor] else { return }
        let now = clock()
        switch output.lines.read(from: descriptor, budget: limits.readBudget) {
        case .bytes(let n):
            bytesRead += n
            largestReadPerWakeup = max(largestReadPerWakeup, n)
            if now.microseconds - output.windowStart.microseconds >= 1_000_000 {
                summarise(output)
                output.windowStart = now
                output.windowBytes = 0
            }
            output.windowBytes += n
            logLines(output, now: now)
            if output.windowBytes >= limits.bytesPerSecond, !output.paused {
                output.paused = true
                setPaused?(descriptor, true)
            }
        case .again:
            return
        case .eof, .error:
            closeOutput(output, now: now)
        }
    }

    private func logLines(_ output: Output, now: EventTime) {
        while true {
            switch output.lines.nextLine() {
            case .line(let bytes):
                log(output, bytes, now: now)
            case .tooLong:
                // An endless line: log it in pieces of the buffer's size.
                log(output, output.lines.takeAll(), now: now)
            case .none:
                output.lines.trim(above: limits.readBudget * 2)
                return
            }
        }
    }

    private func log(_ output: Output, _ bytes: UnsafeBufferPointer<UInt8>, now: EventTime) {
        let elapsed = Int(min(now.microseconds - output.refilledAt.microseconds, 60_000_000))
        if elapsed > 0 {
            output.tokens = min(limits.logBurst * 1000, output.tokens + elapsed / 1000 * limits.logPerSecond)
            output.refilledAt = now
        }
        guard output.tokens >= 1000 else {
            output.suppressedLines += 1
            output.suppressedBytes += bytes.count + 1
            return
        }
        output.tokens -= 1000
        var shown = bytes
        var rest = 0
        if bytes.count > limits.maxLoggedLineBytes {
            shown = UnsafeBufferPointer(rebasing: bytes[0..<limits.maxLoggedLineBytes])
            rest = bytes.count - limits.maxLoggedLineBytes
        }
        var text = String(decoding: shown, as: UTF8.self)
        if rest > 0 { text += "… (\(rest) more bytes)" }
        logger.info("command \(output.commandID) [\(output.pid)]: \(text)")
    }

    private func summarise(_ output: Output) {
        guard output.suppressedLines > 0 else { return }
        logger.info("command \(output.commandID) [\(output.pid)]: \(output.suppressedLines) lines (\(output.suppressedBytes) bytes) of output not logged (rate limit)")
        output.suppressedLines = 0
        output.suppressedBytes = 0
    }

    private func closeOutput(_ output: Output, now: EventTime) {
        logLines(output, now: now)
        if output.lines.pendingBytes > 0 { log(output, output.lines.takeAll(), now: now) }
        summarise(output)
        unwatch?(output.fd)
        Glibc.close(output.fd)
        outputs[output.fd] = nil
    }

    /// Closes the oldest orphaned output when as many as allowed are open.
    private func makeRoomForAnOutput() {
        let orphans = outputs.values.filter { $0.orphanedAt != nil }
        guard orphans.count >= limits.maxOrphanOutputs, let oldest = orphans.min(by: { $0.orphanedAt! < $1.orphanedAt! }) else { return }
        logger.warning("command \(oldest.commandID) [\(oldest.pid)]: closing its output: the process exited and a background process it started still holds it (redirect the output of background programs)")
        closeOutput(oldest, now: clock())
    }

    /// Resumes outputs whose second has passed (call when `nextDeadline` is due).
    public func advance(to now: EventTime) {
        for output in outputs.values where output.paused && now.microseconds - output.windowStart.microseconds >= 1_000_000 {
            output.paused = false
            summarise(output)
            output.windowStart = now
            output.windowBytes = 0
            setPaused?(output.fd, false)
        }
    }

    // MARK: - Processes

    /// A child's pidfd became readable: it exited. Reaps exactly that pid.
    package func processExited(_ pidfd: Int32) {
        guard let process = processes.removeValue(forKey: pidfd) else { return }
        unwatch?(pidfd)
        Glibc.close(pidfd)
        finish(process.pid, commandID: process.commandID, output: process.output)
    }

    private func finish(_ pid: pid_t, commandID: String, output: Int32) {
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { reaped(pid, status: status, commandID: commandID, output: output) }
    }

    private func reaped(_ pid: pid_t, status: Int32, commandID: String, output: Int32) {
        let code = (status & 0x7f) == 0 ? "exit status \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
        logger.info("command \(commandID) [\(pid)]: finished, \(code)")
        if let o = outputs[output], o.pid == pid {
            orphanSequence += 1
            o.orphanedAt = orphanSequence
        }
    }

    /// Reaps children that have no pidfd (on SIGCHLD). Never `waitpid(-1)`: other
    /// children of the process (a test runner's) are not ours to reap.
    public func reap() {
        for (pid, child) in unwatched {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid {
                unwatched[pid] = nil
                reaped(pid, status: status, commandID: child.commandID, output: child.output)
            } else if r < 0 && errno == ECHILD {
                unwatched[pid] = nil
            }
        }
    }

    /// Sends SIGTERM to every running child's process group (on shutdown).
    public func stopAll() {
        for p in processes.values { kill(-p.pid, SIGTERM) }
        for pid in unwatched.keys { kill(-pid, SIGTERM) }
    }
}
