package import KbdSystem
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
    package static func start(_ path: String, arguments: [String]) throws(SystemError) -> Int32 {
        var cArgs: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        cArgs.append(nil)
        defer { for p in cArgs { free(p) } }
        let parent = getpid()
        let child = fork()
        if child == 0 {
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
}
