#if canImport(Glibc)
import Glibc
#endif

/// Issue 27: one agent per user and service. The agent can be started by the XDG autostart
/// entry (GNOME, KDE, or systemd-xdg-autostart-generator), by the user unit
/// (`systemctl --user enable kbd-commandd-agent`) and by a line in a sway, i3 or Hyprland
/// config; where two of them apply, the second agent finds the first one's lock and exits 0,
/// so no command runs twice. The lock is `$XDG_RUNTIME_DIR/kbd-commandd-agent-HASH.lock`, HASH
/// naming the service's socket (agents of one user for two services do not collide).
public enum SingleInstance {
    public static func lockPath(environment: [String: String], socketPath: String) -> String? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
        for byte in socketPath.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return runtime + "/kbd-commandd-agent-" + String(hash, radix: 16) + ".lock"
    }

    public enum Outcome: Equatable {
        /// This process holds the lock (keep the descriptor open while it runs).
        case acquired(fd: Int32)
        /// Another process holds it: its pid as it wrote it (0 when unreadable).
        case heldBy(pid: Int32)
        /// No lock could be taken (logged by the caller; the agent runs anyway).
        case unavailable(errno: Int32)
    }

    public static func acquire(_ path: String) -> Outcome {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return .unavailable(errno: errno) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = errno
            var buffer = [UInt8](repeating: 0, count: 16)
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 15, 0) }
            close(fd)
            guard e == EWOULDBLOCK else { return .unavailable(errno: e) }
            let text = n > 0 ? String(decoding: buffer.prefix(n), as: UTF8.self) : ""
            return .heldBy(pid: Int32(text.filter(\.isNumber)) ?? 0)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return .acquired(fd: fd)
    }
}
