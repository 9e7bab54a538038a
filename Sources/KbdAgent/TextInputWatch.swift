import CLinux
import KbdSystem
import KbdConfig
#if canImport(Glibc)
import Glibc
#endif

/// The desktop's answer to "does the focused widget take text?", read in a long-lived child
/// process of the agent (the agent itself never maps libsystemd: its memory stays as
/// measured, see DesktopProcess). The child writes one line per change on a pipe the
/// agent's epoll watches: no polling, no timer, and nothing wakes while nothing changes.
///
/// Lines: `source NAME` once (what it listens to), then `1` or `0` on every change, then
/// `error MESSAGE` before it exits. The agent writes it, on a second pipe, whose window has
/// the focus (`window PID`, `window none`, `window unknown`: FocusedApplication), so that
/// only that application's focus claims count. It ends when the agent does (PR_SET_PDEATHSIG and the
/// pipe). It never reads text or window titles: only whether the focused object is an
/// editable text.
final class TextInputWatch {
    let fd: Int32
    /// The agent's end of the pipe to the child (non-blocking).
    private let toChild: Int32
    private let pid: pid_t
    private let lines = LineBuffer(maxLineBytes: 4096)

    enum Line: Equatable {
        case source(String)
        case textInput(Bool)
        case error(String)
        case warning(String)
    }

    /// Starts the child for `source` (not `.none`); `currentDesktop` (XDG_CURRENT_DESKTOP)
    /// decides what `auto` listens to.
    init(source: TextInputSource, currentDesktop: String?, window: FocusedApplication) throws(FocusSourceError) {
        var fds: [Int32] = [-1, -1]
        var down: [Int32] = [-1, -1]
        guard kbd_pipe2(&fds, Int32(O_CLOEXEC)) == 0 else { throw FocusSourceError(message: SystemError(operation: "pipe2", errno: errno).message) }
        guard kbd_pipe2(&down, Int32(O_CLOEXEC)) == 0 else {
            close(fds[0]); close(fds[1])
            throw FocusSourceError(message: SystemError(operation: "pipe2", errno: errno).message)
        }
        let parent = getpid()
        let pid = fork()
        if pid == 0 {
            // Nothing of the agent's stays open here (its service connection, the focus
            // sockets, other children's pipes): only the pipes to and from the agent (the one
            // from the agent as standard input).
            guard dup2(down[0], 0) == 0 else { _exit(0) }
            let output = kbd_close_inherited(fds[1])
            _ = fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK)
            _ = kbd_prctl_pdeathsig(SIGTERM)
            if getppid() != parent { _exit(0) }
            // The agent's signal mask (signalfd) is inherited: SIGTERM must end the child.
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGTERM)
            sigprocmask(SIG_UNBLOCK, &set, nil)
            signal(SIGPIPE, SIG_DFL)
            TextInputProducer(output: output, input: 0, currentDesktop: currentDesktop, window: window).run(source: source)
            _exit(0)
        }
        close(fds[1])
        close(down[0])
        guard pid > 0 else {
            close(fds[0])
            close(down[1])
            throw FocusSourceError(message: SystemError(operation: "fork", errno: errno).message)
        }
        self.pid = pid
        fd = fds[0]
        toChild = down[1]
        _ = fcntl(toChild, F_SETFL, fcntl(toChild, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(fd)
        close(toChild)
    }

    /// Tells the child whose window has the focus now. A line is far smaller than the pipe's
    /// buffer, which the child empties whenever it is readable; should it be full, the line is
    /// dropped (false).
    @discardableResult
    func tell(_ window: FocusedApplication) -> Bool {
        let bytes = Array((window.line + "\n").utf8)
        while true {
            let n = bytes.withUnsafeBytes { write(toChild, $0.baseAddress, $0.count) }
            if n == bytes.count { return true }
            if n < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// The lines that arrived; `ended` when the child closed the pipe (it exited).
    func read() -> (lines: [Line], ended: Bool) {
        var out: [Line] = []
        var ended = false
        switch lines.read(from: fd, budget: 65536) {
        case .bytes, .again: break
        case .eof, .error: ended = true
        }
        while case .line(let bytes) = lines.nextLine() {
            let text = String(decoding: bytes, as: UTF8.self)
            if text == "1" || text == "0" { out.append(.textInput(text == "1")) }
            else if text.hasPrefix("source ") { out.append(.source(String(text.dropFirst(7)))) }
            else if text.hasPrefix("error ") { out.append(.error(String(text.dropFirst(6)))) }
            else if text.hasPrefix("warning ") { out.append(.warning(String(text.dropFirst(8)))) }
        }
        return (out, ended)
    }
}
