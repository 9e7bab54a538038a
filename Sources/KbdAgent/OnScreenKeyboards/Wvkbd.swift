import Logging
import KbdConfig
import KbdSystem
#if canImport(Glibc)
import Glibc
#endif


/// wvkbd: SIGUSR1 hides, SIGUSR2 shows (it has no state to ask: one that runs counts as
/// shown). Signals go to this user's own live processes only, the ones found at hiding.
final class Wvkbd: KeyboardSwitch {
    let name = "wvkbd"
    private let pids: [pid_t]
    init(pids: [pid_t]) { self.pids = pids }

    func switchOff() -> Bool {
        let alive = pids.filter { Self.isWvkbd($0) }
        for pid in alive { kill(pid, SIGUSR1) }
        return !alive.isEmpty
    }

    func switchOn() {
        for pid in pids where Self.isWvkbd(pid) { kill(pid, SIGUSR2) }
    }
    /// This user's live wvkbd processes (`wvkbd-*` in /proc, not zombies).
    static func processes() -> [pid_t] {
        Directory.names("/proc").compactMap { pid_t($0) }.filter { isWvkbd($0) }.sorted()
    }

    /// Whether `pid` is a live wvkbd of this user.
    static func isWvkbd(_ pid: pid_t) -> Bool {
        guard let bytes = try? readWholeFile(path: "/proc/\(pid)/stat", limit: 4096) else { return false }
        let text = String(decoding: bytes, as: UTF8.self)
        // "PID (comm) S …": the name is between the first '(' and the last ')'.
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return false }
        let comm = text[text.index(after: open)..<close]
        let state = text[text.index(after: close)...].dropFirst().first
        guard comm.hasPrefix("wvkbd"), state != "Z", state != "X" else { return false }
        var st = Glibc.stat()
        return lstat("/proc/\(pid)", &st) == 0 && st.st_uid == getuid()
    }
}
