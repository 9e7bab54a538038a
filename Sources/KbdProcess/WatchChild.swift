import CLinux
// sigset_t: in a release (whole-module) build its declaration belongs to the first C module that
// included <signal.h>, CSpawn (CommandRunner.swift), and MemberImportVisibility asks for it.
import CSpawn
import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// Why a child process could not be started.
package struct ChildProcessError: Error, Equatable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
    package init(message: String) { self.message = message }
}

/// A long-lived child process of the agent that reports on a pipe, one line per change (the
/// agent's epoll watches `fd`; lines are `ChildLine`s), and, when asked for, reads lines from
/// the agent on its standard input. The text-input watch and the desktop-keymap watch run
/// their bus clients in one, so the agent itself never maps libsystemd or GIO (ForkedCall).
///
/// In the child nothing of the agent's stays open (its service connection, the focus
/// sockets, other children's pipes): only these pipes. It ends when the agent does
/// (PR_SET_PDEATHSIG, and a write to a closed pipe), or on SIGTERM from `deinit`.
package final class WatchChild {
    /// The agent's end of the child's output (non-blocking).
    package let fd: Int32
    /// The agent's end of the child's standard input (non-blocking), -1 without one.
    private let toChild: Int32
    private let pid: pid_t
    private let lines = LineBuffer(maxLineBytes: 4096)

    /// Forks; the child runs `body` with its output descriptor, then exits. With `input`,
    /// the child's standard input is a non-blocking pipe from `send`.
    package init(input: Bool, _ body: (_ output: Int32) -> Void) throws(ChildProcessError) {
        var up: [Int32] = [-1, -1]
        var down: [Int32] = [-1, -1]
        guard kbd_pipe2(&up, Int32(O_CLOEXEC)) == 0 else { throw ChildProcessError(message: SystemError(operation: "pipe2", errno: errno).message) }
        if input {
            guard kbd_pipe2(&down, Int32(O_CLOEXEC)) == 0 else {
                close(up[0]); close(up[1])
                throw ChildProcessError(message: SystemError(operation: "pipe2", errno: errno).message)
            }
        }
        let parent = getpid()
        let pid = fork()
        if pid == 0 {
            if input {
                guard dup2(down[0], 0) == 0 else { _exit(0) }
            }
            let output = kbd_close_inherited(up[1])
            if input { _ = fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK) }
            _ = kbd_prctl_pdeathsig(SIGTERM)
            if getppid() != parent { _exit(0) }
            // The agent's signal mask (signalfd) is inherited: SIGTERM must end the child.
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGTERM)
            sigprocmask(SIG_UNBLOCK, &set, nil)
            signal(SIGPIPE, SIG_DFL)
            body(output)
            _exit(0)
        }
        close(up[1])
        if input { close(down[0]) }
        guard pid > 0 else {
            close(up[0])
            if input { close(down[1]) }
            throw ChildProcessError(message: SystemError(operation: "fork", errno: errno).message)
        }
        self.pid = pid
        fd = up[0]
        toChild = input ? down[1] : -1
        if input { _ = fcntl(toChild, F_SETFL, fcntl(toChild, F_GETFL) | O_NONBLOCK) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(fd)
        if toChild >= 0 { close(toChild) }
    }

    /// Writes `line` to the child's standard input. A line is far smaller than the pipe's
    /// buffer, which the child empties whenever it is readable; should it be full, the line
    /// is dropped (false).
    @discardableResult
    package func send(_ line: String) -> Bool {
        guard toChild >= 0 else { return false }
        let bytes = Array((line + "\n").utf8)
        while true {
            let n = bytes.withUnsafeBytes { write(toChild, $0.baseAddress, $0.count) }
            if n == bytes.count { return true }
            if n < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// The lines that arrived, decoded; `ended` when the child closed the pipe (it exited).
    package func readLines() -> (lines: [ChildLine], ended: Bool) {
        let (texts, ended) = read()
        return (texts.map { ChildLine(decoding: $0) }, ended)
    }

    /// The lines that arrived; `ended` when the child closed the pipe (it exited).
    package func read() -> (lines: [String], ended: Bool) {
        var out: [String] = []
        var ended = false
        switch lines.read(from: fd, budget: 65536) {
        case .bytes, .again: break
        case .eof, .error: ended = true
        }
        while case .line(let bytes) = lines.nextLine() {
            out.append(String(decoding: bytes, as: UTF8.self))
        }
        return (out, ended)
    }
}
