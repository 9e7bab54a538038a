import KbdCore
import KbdSeats
#if canImport(Glibc)
import Glibc
#endif

/// `kbd-bench seats [--changes N]`: follows logind through sd-login as the service does
/// (`SystemdLogin`, its monitor descriptor waited on, no polling) and prints who is active
/// at each seat, once at start and after each change, until N changes were seen (at most
/// 30 s). The end-to-end test runs it in a private mount namespace whose /run/systemd is a
/// tmpfs holding simulated logind files.
enum Seats {
    static func run(changes wanted: Int) {
        let source: SystemdLogin
        do { source = try SystemdLogin() } catch {
            say("unavailable: \(error.reason)")
            exit(1)
        }
        let tracker = SeatTracker(source: source)
        say("active \(describe(tracker.current))")
        var seen = 0
        let end = monotonicNow().adding(milliseconds: 30_000)
        var fds = source.changeDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while seen < wanted, monotonicNow() < end, !fds.isEmpty {
            guard poll(&fds, nfds_t(fds.count), 1000) > 0 else { continue }
            let changes = tracker.refresh()
            guard !changes.isEmpty else { continue }
            seen += 1
            say("active \(describe(tracker.current))")
        }
    }

    static func describe(_ sessions: ActiveSessions) -> String {
        sessions.activeUID.isEmpty ? "none" : sessions.activeUID.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}
