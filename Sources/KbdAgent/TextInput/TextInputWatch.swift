import CLinux
import KbdSystem
import KbdConfig
import KbdProcess
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
    private let child: WatchChild
    var fd: Int32 { child.fd }

    enum Line: Equatable {
        case source(String)
        case textInput(Bool)
        case error(String)
        case warning(String)
    }

    /// Starts the child for `source` (not `.none`); `currentDesktop` (XDG_CURRENT_DESKTOP)
    /// decides what `auto` listens to. The agent's lines reach it on its standard input.
    init(source: TextInputSource, currentDesktop: String?, window: FocusedApplication) throws(FocusSourceError) {
        do throws(ChildProcessError) {
            child = try WatchChild(input: true) { output in
                TextInputProducer(output: output, input: 0, currentDesktop: currentDesktop, window: window).run(source: source)
            }
        } catch { throw FocusSourceError(message: error.message) }
    }

    /// Tells the child whose window has the focus now (false: the pipe was full and the line
    /// dropped).
    @discardableResult
    func tell(_ window: FocusedApplication) -> Bool { child.send(window.line) }

    /// The lines that arrived; `ended` when the child closed the pipe (it exited).
    func read() -> (lines: [Line], ended: Bool) {
        let (lines, ended) = child.readLines()
        var out: [Line] = []
        for line in lines {
            switch line {
            case .report("1"): out.append(.textInput(true))
            case .report("0"): out.append(.textInput(false))
            case .report: break
            case .source(let text): out.append(.source(text))
            case .error(let text): out.append(.error(text))
            case .warning(let text): out.append(.warning(text))
            }
        }
        return (out, ended)
    }
}
