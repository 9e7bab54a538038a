public import KbdCore
import KbdSystem
public import Logging
import CLinux
import CSpawn
#if canImport(Glibc)
import Glibc
#endif

/// Executes the `run` argv of fired commands: no shell, off the routing path (the
/// process is started with clone(CLONE_VM | CLONE_VFORK), CSpawn: the service is not
/// copied, and the call returns once the child called execve), stdout and stderr
/// captured into the log, at most `maxChildren` processes at a time (more are refused
/// with a log line, so a held chord with `repeat = true` cannot fork without bound).
/// The command's log line is its caller's; the runner logs a start and a clean exit at
/// debug, and at info only what went wrong (a failed start, a non-zero exit, a signal)
/// and what the command printed.
///
/// The loop never waits on a child:
/// - a slot belongs to a process, not to its output: each child is reaped by pid when it
///   exits, even while a background process it started still holds the output pipe. How
///   the runner learns of the exit is the owner's choice (`ExitNotice`): a pidfd per child;
///   `reap()` on SIGCHLD; or `reap()` after each turn of the owner's loop, with a pidfd
///   opened only for a child still running `watchDelayMilliseconds` after its start (the
///   service: a command's process has usually exited by the time the key that started it
///   is released, so a command costs no wake-up of its own);
/// - the output pipe exists only when the output goes somewhere (the log at info or
///   below); otherwise the child writes to /dev/null;
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
        /// Whether the event loop watches it: from its process's exit, or `watchDelay` after the
        /// start for a process still running (until then a command costs no wake-up for its output).
        var watched = false
        let watchAt: EventTime
        /// Log tokens, in thousandths of a line.
        var tokens: Int
        var refilledAt: EventTime
        var suppressedLines = 0
        var suppressedBytes = 0

        init(fd: Int32, pid: pid_t, commandID: String, now: EventTime, burst: Int) {
            self.fd = fd
            self.pid = pid
            self.commandID = commandID
            watchAt = now.adding(milliseconds: CommandRunner.watchDelayMilliseconds)
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
    /// Children without a pidfd (not opened yet, or not openable on an old kernel): reaped by `reap()`.
    private var unwatched: [pid_t: (commandID: String, output: Int32, pidfdAt: EventTime?)] = [:]
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
    /// pidfds opened for children (with `.polled`: only for those outliving the window).
    public private(set) var pidfdsOpened = 0
    /// Bytes read from children's outputs, and the most read from one output in one wakeup.
    public private(set) var bytesRead = 0
    public private(set) var largestReadPerWakeup = 0

    /// How the runner learns that a child exited.
    public enum ExitNotice: Sendable {
        /// A pidfd per child, opened when it starts.
        case pidfd
        /// The owner calls `reap()` on SIGCHLD (a signalfd).
        case sigchld
        /// The owner calls `reap()` after each turn of its loop and when `nextDeadline` is due;
        /// a child still running `watchDelayMilliseconds` after its start gets a pidfd then.
        case polled
    }

    public let exitNotice: ExitNotice
    /// The children's stack while they run until execve, and the request they read (both
    /// made at the first command: an idle service has neither).
    private var spawnStack: UnsafeMutableRawPointer?
    private var request: UnsafeMutablePointer<kbd_spawn_request>?
    private static let spawnStackSize = 64 * 1024
    private static let searchBufferSize = 4096
    /// How long a command's output is left unread while its process runs: most commands
    /// exit sooner, and their output is read when they do (a full pipe only makes the child
    /// wait that long).
    public static let watchDelayMilliseconds = 50

    public init(maxChildren: Int = 8, limits: Limits? = nil, environment: [String] = CommandRunner.defaultEnvironment,
                logger: Logger, clock: @escaping () -> EventTime = monotonicNow, exitNotice: ExitNotice = .pidfd) {
        self.maxChildren = maxChildren
        self.limits = limits ?? Limits(maxChildren: maxChildren)
        self.environment = environment
        self.logger = logger
        self.clock = clock
        self.exitNotice = exitNotice
    }

    deinit {
        for fd in processes.keys { close(fd) }
        for fd in outputs.keys { close(fd) }
        spawnStack?.deallocate()
        if let request {
            request.pointee.path.deallocate()
            request.deinitialize(count: 1)
            request.deallocate()
        }
    }

    /// A search path and nothing else: what children get unless the service passes more.
    public static let defaultEnvironment = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]

    /// Processes started and not yet reaped: the slots in use.
    public var running: Int { processes.count + unwatched.count }

    /// Outputs still open (a process's, or an orphan's).
    public var openOutputs: Int { outputs.count }

    /// Outputs still open whose process has exited.
    public var orphanOutputs: Int { outputs.values.filter { $0.orphanedAt != nil }.count }

    /// When a paused output may be read again, or the output of a process still running is
    /// to be watched, whichever comes first.
    public var nextDeadline: EventTime? {
        var earliest: EventTime?
        for o in outputs.values where o.paused || !o.watched {
            let at = o.watched ? o.windowStart.adding(milliseconds: 1000) : o.watchAt
            if earliest == nil || at < earliest! { earliest = at }
        }
        for child in unwatched.values {
            if let at = child.pidfdAt, earliest == nil || at < earliest! { earliest = at }
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
        // The output goes to the log only at info or below: else the child writes to /dev/null.
        let captured = logger.logLevel <= .info
        var fds: [Int32] = [-1, -1]
        if captured {
            guard kbd_pipe2(&fds, O_CLOEXEC) == 0 else {
                logger.error("command \(id): cannot create a pipe: \(SystemError(operation: "pipe2", errno: errno).message)")
                return nil
            }
        }
        let request = spawnRequest()
        let cargs = argv.map { strdup($0) } + [nil]
        let cenv = (environment + ["KBD_COMMAND_ID=\(id)"]).map { strdup($0) } + [nil]
        defer {
            cargs.forEach { free($0) }
            cenv.forEach { free($0) }
        }
        var pid = pid_t()
        // As posix_spawnp: a bare name is looked up in the service's own PATH.
        let rc = cargs.withUnsafeBufferPointer { args in
            cenv.withUnsafeBufferPointer { env in
                withSearchPath { search in
                    request.pointee.file = UnsafePointer(args[0])
                    request.pointee.argv = args.baseAddress
                    request.pointee.envp = env.baseAddress
                    request.pointee.search = search
                    request.pointee.output = fds[1]
                    return kbd_spawn(request, spawnStack, Self.spawnStackSize, &pid)
                }
            }
        }
        if captured { close(fds[1]) }
        guard rc == 0 else {
            if captured { close(fds[0]) }
            failedToStart += 1
            logger.error("command \(id): cannot start '\(argv[0].escapingControlCharacters)': \(SystemError(operation: "execve", errno: rc).message)")
            return nil
        }
        started += 1
        if captured {
            _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
            makeRoomForAnOutput()
            outputs[fds[0]] = Output(fd: fds[0], pid: pid, commandID: id, now: clock(), burst: limits.logBurst)
        }
        switch exitNotice {
        case .pidfd: watchExit(pid, commandID: id, output: fds[0])
        case .sigchld: unwatched[pid] = (id, fds[0], nil)
        case .polled: unwatched[pid] = (id, fds[0], clock().adding(milliseconds: Self.watchDelayMilliseconds))
        }
        logger.debug("command \(id): started '\(argv[0].escapingControlCharacters)' (pid \(pid))")
        return pid
    }

    /// A pidfd says when the child exits (without one, an old kernel: `reap()` on SIGCHLD).
    private func watchExit(_ pid: pid_t, commandID: String, output: Int32) {
        let pidfd = kbd_pidfd_open(pid)
        if pidfd >= 0 {
            pidfdsOpened += 1
            _ = fcntl(pidfd, F_SETFD, FD_CLOEXEC)
            processes[pidfd] = Process(pid: pid, commandID: commandID, output: output)
            watch?(pidfd, .process)
        } else {
            unwatched[pid] = (commandID, output, nil)
        }
    }

    /// The request and stack children are started with, made at the first command, and the
    /// signals the service ignores (read then: set up before any command runs).
    private func spawnRequest() -> UnsafeMutablePointer<kbd_spawn_request> {
        if let request { return request }
        let made = UnsafeMutablePointer<kbd_spawn_request>.allocate(capacity: 1)
        made.initialize(to: kbd_spawn_request())
        kbd_ignored_signals(&made.pointee.ignored)
        made.pointee.path = .allocate(capacity: Self.searchBufferSize)
        made.pointee.path_size = Self.searchBufferSize
        spawnStack = UnsafeMutableRawPointer.allocate(byteCount: Self.spawnStackSize, alignment: 16)
        request = made
        return made
    }

    private func withSearchPath<R>(_ body: (UnsafePointer<CChar>?) -> R) -> R {
        if let path = getenv("PATH") { return body(UnsafePointer(path)) }
        return body("/usr/local/bin:/usr/bin:/bin")
    }

    // MARK: - Output

    /// Reads once from a child's output (call when `descriptor` is readable).
    package func drainOutput(_ descriptor: Int32) {
        _ = readOutput(descriptor)
    }

    /// Reads once; true when bytes came (more may follow at once).
    private func readOutput(_ descriptor: Int32) -> Bool {
        guard let output = outputs[descriptor] else { return false }
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
                if output.watched { setPaused?(descriptor, true) }
            }
            return true
        case .again:
            return false
        case .eof, .error:
            closeOutput(output, now: now)
            return false
        }
    }

    private func startWatching(_ output: Output) {
        guard !output.watched else { return }
        output.watched = true
        watch?(output.fd, .output)
        if output.paused { setPaused?(output.fd, true) }
    }

    /// The output of a process that exited: read what it wrote (to the end, usually: then it
    /// is closed without ever being watched); watched if it stays open (a background process
    /// holds it, or more than a few reads' worth is there).
    private func readAfterExit(_ descriptor: Int32) {
        guard let output = outputs[descriptor], !output.watched else { return }
        for _ in 0..<4 where !output.paused {
            guard readOutput(descriptor), outputs[descriptor] != nil else { break }
        }
        if outputs[descriptor] != nil { startWatching(output) }
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
        if output.watched { unwatch?(output.fd) }
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

    /// Resumes outputs whose second has passed, and watches the outputs of processes still
    /// running after `watchDelayMilliseconds` (call when `nextDeadline` is due).
    public func advance(to now: EventTime) {
        if exitNotice == .polled { reap() }
        // Still running: from now on a pidfd says when it exits.
        for (pid, child) in unwatched {
            guard let at = child.pidfdAt, at <= now else { continue }
            unwatched[pid] = nil
            watchExit(pid, commandID: child.commandID, output: child.output)
        }
        for output in outputs.values where !output.watched && output.watchAt <= now { startWatching(output) }
        for output in outputs.values where output.watched && output.paused && now.microseconds - output.windowStart.microseconds >= 1_000_000 {
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
        // A clean exit adds nothing to the command's line at info; a failure does.
        if status == 0 {
            logger.debug("command \(commandID) [\(pid)]: finished, \(code)")
        } else {
            logger.info("command \(commandID) [\(pid)]: finished, \(code)")
        }
        if let o = outputs[output], o.pid == pid {
            orphanSequence += 1
            o.orphanedAt = orphanSequence
            readAfterExit(output)
        }
    }

    /// Reaps children that have no pidfd and exited (on SIGCHLD, or after a turn of the loop:
    /// `ExitNotice`). Never `waitpid(-1)`: other children of the process (a test runner's)
    /// are not ours to reap.
    public func reap() {
        guard !unwatched.isEmpty else { return }
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
