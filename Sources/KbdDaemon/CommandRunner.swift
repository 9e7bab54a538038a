import KbdSystem
public import Logging
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Executes the `run` argv of fired commands: no shell, off the routing path
/// (`posix_spawnp` returns at once), stdout and stderr captured line by line into
/// the log, children reaped, at most `maxChildren` at a time (more are refused
/// with a log line, so a held chord with `repeat = true` cannot fork without bound).
public final class CommandRunner {
    struct Child {
        var pid: pid_t
        var commandID: String
        var output: Int32
        var pending: [UInt8] = []
    }

    public let maxChildren: Int
    private let logger: Logger
    private var children: [Int32: Child] = [:]  // by output descriptor
    private var exited: [pid_t: String] = [:]  // output closed, not yet reaped
    /// Called with each new output descriptor to watch, and when one closes.
    var watch: ((Int32) -> Void)?
    var unwatch: ((Int32) -> Void)?
    public private(set) var started = 0
    public private(set) var refused = 0
    public private(set) var failedToStart = 0

    public init(maxChildren: Int = 8, logger: Logger) {
        self.maxChildren = maxChildren
        self.logger = logger
    }

    public var running: Int { children.count + exited.count }

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
        defer { cargs.forEach { free($0) } }
        var pid = pid_t()
        let rc = posix_spawnp(&pid, argv[0], &actions, &attr, cargs, environ)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            failedToStart += 1
            logger.error("command \(id): cannot start '\(argv[0])': \(SystemError(operation: "posix_spawnp", errno: rc).message)")
            return nil
        }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        started += 1
        children[fds[0]] = Child(pid: pid, commandID: id, output: fds[0])
        watch?(fds[0])
        logger.info("command \(id): started '\(argv[0])' (pid \(pid))")
        return pid
    }

    /// Reads a child's output (call when `descriptor` is readable).
    func drainOutput(_ descriptor: Int32) {
        guard var child = children[descriptor] else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if n > 0 {
                child.pending.append(contentsOf: buffer[0..<n])
                while let nl = child.pending.firstIndex(of: 0x0A) {
                    log(child, String(decoding: child.pending[..<nl], as: UTF8.self))
                    child.pending.removeSubrange(...nl)
                }
                if child.pending.count > 4096 {  // an endless line: log it in pieces
                    log(child, String(decoding: child.pending, as: UTF8.self))
                    child.pending.removeAll()
                }
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EINTR) {
                children[descriptor] = child
                return
            }
            // EOF or error: the child closed its output (usually it exited).
            if !child.pending.isEmpty { log(child, String(decoding: child.pending, as: UTF8.self)) }
            unwatch?(descriptor)
            close(descriptor)
            children[descriptor] = nil
            exited[child.pid] = child.commandID
            reap()
            return
        }
    }

    private func log(_ child: Child, _ line: String) {
        logger.info("command \(child.commandID) [\(child.pid)]: \(line)")
    }

    /// Collects exited children without blocking; logs their exit status.
    public func reap() {
        for (pid, id) in exited {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid {
                exited[pid] = nil
                let code = (status & 0x7f) == 0 ? "exit status \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
                logger.info("command \(id) [\(pid)]: finished, \(code)")
            } else if r < 0 && errno == ECHILD {
                exited[pid] = nil
            }
        }
    }

    /// Output descriptors of running children (for the event loop).
    var outputDescriptors: [Int32] { Array(children.keys) }
}
