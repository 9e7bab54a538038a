/// Where the control socket is, for the service and for its clients (`watch`, the agent).
public enum ControlSocketPath {
    /// The system service's socket (the unit's RuntimeDirectory).
    public static let system = "/run/kbd-commandd/socket"
    /// The socket's name inside `$XDG_RUNTIME_DIR` for a service run by a user.
    public static let userFileName = "kbd-commandd.socket"

    /// `$XDG_RUNTIME_DIR/kbd-commandd.socket`, nil when the variable is unset or empty.
    public static func user(environment: [String: String]) -> String? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
        return runtime + "/" + userFileName
    }

    /// Where a service binds by default: the system socket as root, else the user's
    /// runtime directory; nil when neither applies (then it runs without a socket).
    public static func forService(isRoot: Bool, environment: [String: String]) -> String? {
        isRoot ? system : user(environment: environment)
    }

    /// Where a client connects by default: the system socket when it exists, else the
    /// user's runtime directory. Never a shared temporary directory, where another user
    /// could have put a socket first. nil when neither is there to try.
    public static func forClient(environment: [String: String], exists: (String) -> Bool) -> String? {
        if exists(system) { return system }
        return user(environment: environment)
    }
}
