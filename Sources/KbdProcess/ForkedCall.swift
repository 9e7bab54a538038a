import CLinux
import KbdSystem
import KbdCore
#if canImport(Glibc)
import Glibc
#endif

/// Desktop calls made in a short-lived child of the agent: the child loads the client
/// library (libsystemd for the session bus, GIO for GSettings), makes the calls, writes
/// the answer to a pipe and exits. The agent itself never maps those libraries, their
/// threads (GIO's D-Bus and dconf workers) or their caches, so its resident memory stays
/// what it was before the first presence change (BENCHMARKS.md), and a library that
/// hangs or crashes takes the child with it, not the agent. The agent has one thread,
/// so the forked child may run any code. Calls happen only when presence changes.
package enum ForkedCall {
    package struct Failure: Error, Equatable, CustomStringConvertible {
        package var message: String
        package var description: String { message }
        package init(message: String) { self.message = message }
    }

    /// The longest answer read from a child (an error message, a word).
    package static let maxAnswerBytes = 4096

    /// Runs `body` in a child process and returns its answer, or throws what it threw (as
    /// text) or why there was no answer: the child is killed after `timeoutMilliseconds`.
    package static func call(timeoutMilliseconds: Int32 = 5_000, _ body: () throws -> String) throws(Failure) -> String {
        var fds: [Int32] = [-1, -1]
        guard kbd_pipe2(&fds, Int32(O_CLOEXEC)) == 0 else {
            throw Failure(message: SystemError(operation: "pipe2", errno: errno).message)
        }
        let pid = fork()
        if pid == 0 {
            // Nothing of the agent's stays open here (its service connection, the focus
            // sockets, other children's pipes): only the answer's pipe.
            let output = kbd_close_inherited(fds[1])
            var answer: String
            do { answer = "+" + (try body()) } catch { answer = "-\(error)" }
            var bytes = Array(answer.utf8.prefix(maxAnswerBytes))
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeMutableBytes { write(output, $0.baseAddress! + written, $0.count - written) }
                if n > 0 { written += n } else if n < 0 && errno == EINTR { continue } else { break }
            }
            bytes.removeAll()
            // No atexit handlers, no flushing of the parent's buffers: GIO's threads may run.
            _exit(0)
        }
        close(fds[1])
        defer { close(fds[0]) }
        guard pid > 0 else { throw Failure(message: SystemError(operation: "fork", errno: errno).message) }

        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        let deadline = monotonicNow().microseconds + Int64(timeoutMilliseconds) * 1000
        var timedOut = false
        while answer.count <= maxAnswerBytes {
            let left = Int32(max(0, (deadline - monotonicNow().microseconds) / 1000))
            var p = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, left)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { timedOut = true; break }
            let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            answer.append(contentsOf: buffer[0..<n])
        }
        if timedOut { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if timedOut { throw Failure(message: "no answer within \(timeoutMilliseconds) ms") }
        guard let first = answer.first else {
            let signal = status & 0x7f
            throw Failure(message: signal != 0 ? "the helper process died of signal \(signal)" : "the helper process gave no answer")
        }
        let text = String(decoding: answer.dropFirst(), as: UTF8.self)
        guard first == UInt8(ascii: "+") else { throw Failure(message: text) }
        return text
    }

    /// `call` for a yes/no answer.
    package static func bool(timeoutMilliseconds: Int32 = 5_000, _ body: () throws -> Bool) throws(Failure) -> Bool {
        try call(timeoutMilliseconds: timeoutMilliseconds) { try body() ? "1" : "0" } == "1"
    }
}
