package import KbdSystem
import KbdCore
import CLinux
// sigset_t: see SystemdNotifier.swift.
import CSpawn
#if canImport(Glibc)
import Glibc
#endif

/// A long-lived helper program the agent starts (the shortcuts bar): forked and executed with
/// only stdin, stdout and stderr open (its log goes where its parent's goes), default signal
/// mask and SIGPIPE, and ended by SIGTERM when its parent ends (PR_SET_PDEATHSIG). The parent
/// reaps it (SIGCHLD).
package enum ChildProgram {
    /// Starts `path` with `arguments` (argv[0] included); the child's pid.
    /// The corresponding C functions are `fork` and `execv`.
    package static func start(_ path: String, arguments: [String], inChild setUp: () -> Void = {}) throws(SystemError) -> Int32 {
        var cArgs: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        cArgs.append(nil)
        defer { for p in cArgs { free(p) } }
        let parent = getpid()
        let child = fork()
        if child == 0 {
            setUp()
            _ = kbd_close_inherited(-1)
            _ = kbd_prctl_pdeathsig(SIGTERM)
            if getppid() != parent { _exit(0) }
            // The parent's signal mask (its signalfd) is inherited: the program needs its signals.
            var set = sigset_t()
            sigemptyset(&set)
            sigprocmask(SIG_SETMASK, &set, nil)
            signal(SIGPIPE, SIG_DFL)
            execv(path, &cArgs)
            _exit(127)
        }
        guard child > 0 else { throw SystemError(operation: "fork", errno: errno) }
        return child
    }

    /// Runs `path` to its end and returns its standard output (at most `limit` bytes) and its
    /// exit status (nil: a signal ended it, or it outlived `timeoutMilliseconds` and was
    /// killed). Its stdin is /dev/null, its stderr the caller's; the caller blocks meanwhile
    /// (the portal child asking through the consent dialog, which has its own timeout), except
    /// that `whenReadable` runs each time `watching` (when not -1) is readable: the portal child
    /// keeps reading the agent's presses and releases while a dialog is open. It returns
    /// false to stop watching (`watching` reached its end).
    package static func output(_ path: String, arguments: [String], timeoutMilliseconds: Int32, limit: Int = 4096,
                               watching: Int32 = -1, whenReadable: () -> Bool = { false }) throws(SystemError) -> (output: String, status: Int32?) {
        var ends: [Int32] = [-1, -1]
        guard kbd_pipe2(&ends, O_CLOEXEC) == 0 else { throw SystemError(operation: "pipe2", errno: errno) }
        let pid: Int32
        do throws(SystemError) {
            pid = try start(path, arguments: arguments) {
                let null = open("/dev/null", O_RDONLY)
                if null >= 0 { dup2(null, 0) }
                dup2(ends[1], 1)
            }
        } catch {
            close(ends[0]); close(ends[1])
            throw error
        }
        close(ends[1])
        defer { close(ends[0]) }
        let (bytes, done) = readAll(ends[0], limit: limit, timeoutMilliseconds: timeoutMilliseconds, watching: watching, whenReadable: whenReadable)
        if !done { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let exited = done && (status & 0x7f) == 0
        return (String(decoding: bytes, as: UTF8.self), exited ? (status >> 8) & 0xff : nil)
    }

    /// Reads `fd` to its end or until `timeoutMilliseconds` pass; whether the end was reached.
    /// `whenReadable` runs each time `watching` is readable meanwhile (it reads it; false:
    /// watch no more).
    private static func readAll(_ fd: Int32, limit: Int, timeoutMilliseconds: Int32,
                                watching: Int32, whenReadable: () -> Bool) -> ([UInt8], Bool) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        let deadline = monotonicNow().microseconds + Int64(timeoutMilliseconds) * 1000
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: watching, events: Int16(POLLIN), revents: 0)]
        while true {
            let left = (deadline - monotonicNow().microseconds) / 1000
            guard left > 0 else { return (bytes, false) }
            fds[0].revents = 0; fds[1].revents = 0
            let ready = poll(&fds, fds[1].fd >= 0 ? 2 : 1, Int32(left))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return (bytes, false) }
            if fds[1].fd >= 0, fds[1].revents != 0, !whenReadable() { fds[1].fd = -1 }
            guard fds[0].revents != 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return (bytes, true) }
            if bytes.count < limit { bytes += buffer[0..<min(n, limit - bytes.count)] }
        }
    }
}
