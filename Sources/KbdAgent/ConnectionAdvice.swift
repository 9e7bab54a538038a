#if canImport(Glibc)
import Glibc
#endif

/// Issue 27: what the agent says when the service will not have it. The socket refuses other
/// users' agents unless the service runs with `--user-agents` (the packaged unit does) or the
/// user is in the service's group: `connect` fails with EACCES (a 0660 socket), or the service
/// accepts and closes at once, before any reply. The agent says so once, at WARNING, with what
/// to do, then waits quietly (it retries on its backoff timer and connects when allowed).
/// A pure function, so the control-protocol client can call it wherever it connects.
public enum ConnectionAdvice {
    public enum Failure: Equatable, Sendable {
        /// `connect(2)` failed with this errno.
        case connect(errno: Int32)
        /// The service accepted, then closed the connection before answering anything.
        case closedBeforeAnyReply
    }

    /// The one WARNING line for a refusal, nil when the failure is not one (the service is not
    /// running yet: ENOENT, ECONNREFUSED; those are the ordinary wait).
    public static func refusal(_ failure: Failure, socketPath: String, user: String, group: String = "kbd-commandd") -> String? {
        let how: String
        switch failure {
        case .connect(let e) where e == EACCES || e == EPERM:
            how = "the service's socket \(socketPath) refuses this user (\(String(cString: strerror(e))))"
        case .closedBeforeAnyReply:
            how = "the service at \(socketPath) closed the connection before answering: it does not accept this user's agent"
        default:
            return nil
        }
        return "\(how). Another user's agent is accepted when the service runs with --user-agents (the packaged kbd-commandd.service does: check 'systemctl cat kbd-commandd'), or when the user is in the service's group: sudo usermod -aG \(group) \(user), then log in again. Waiting quietly; the agent connects as soon as it is allowed"
    }
}
