import CLinux
// sigset_t: in a release (whole-module) build its declaration belongs to the first C module that
// included <signal.h>, CSpawn (CommandRunner.swift), and MemberImportVisibility asks for it.
import CSpawn
#if canImport(Glibc)
import Glibc
#endif

/// The sd_notify protocol without libsystemd: one datagram to `$NOTIFY_SOCKET`
/// (a path, or an abstract name written with a leading `@`).
public struct SystemdNotifier: Sendable {
    public let socketPath: String?

    public init(environment: [String: String]) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    public func notify(_ state: String) {
        guard let socketPath else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(socketPath.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        _ = state.withCString { text in
            withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, text, strlen(text), Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
    }
}

/// Blocks `signals` for the process and returns a signalfd that reports them.
/// The corresponding C functions are `pthread_sigmask` and `signalfd`.
public func makeSignalDescriptor(_ signals: [Int32]) -> Int32 {
    var set = sigset_t()
    sigemptyset(&set)
    for s in signals { sigaddset(&set, s) }
    pthread_sigmask(SIG_BLOCK, &set, nil)
    return signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC))
}

/// Reads every pending signal number from a signalfd.
public func readSignals(_ fd: Int32) -> [Int32] {
    var out: [Int32] = []
    var info = signalfd_siginfo()
    while read(fd, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
        out.append(Int32(info.ssi_signo))
    }
    return out
}
