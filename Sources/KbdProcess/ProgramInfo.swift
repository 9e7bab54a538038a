/// What every program of the package says the same way: its version, the log levels its
/// `--log-level` accepts, and where a user's own config is.
public enum ProgramInfo {
    /// The version of kbd-commandd and of its service, agent and bar.
    public static let version = "0.1.0"

    /// The names `--log-level` accepts (swift-log's levels).
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// The user's config path, as the agent and the bar find it: `$XDG_CONFIG_HOME/kbd-commandd/config.toml`
    /// (an absolute `XDG_CONFIG_HOME` only), else `$HOME/.config/kbd-commandd/config.toml`; nil with neither.
    public static func userConfigPath(environment: [String: String]) -> String? {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/kbd-commandd/config.toml" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.config/kbd-commandd/config.toml" }
        return nil
    }
}
