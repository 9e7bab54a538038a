import KbdCore

/// Issue 27: what a user's agent config may not hold. The service owns the keyboards and maps
/// every key with its own keymap, so a `[keymap]` in a user's config would be silently
/// ignored: it is refused with the reason instead, by the agent and by `check --agent`.
extension ConfigLoader {
    public static func agentConfigProblems(_ config: Config) -> [ConfigError.Problem] {
        guard let location = config.keymapLocation else { return [] }
        return [ConfigError.Problem(location: location, message: "[keymap] in a user's agent config: the service maps every key with its own keymap (its config's [keymap], /etc/default/keyboard or XKB_DEFAULT_*), so a layout here would change nothing. Remove this section; set the layout in the service's config (/etc/kbd-commandd/config.toml) or the system's keyboard settings")]
    }

    /// Sections of a user's agent config that only the service uses: warned about, not refused.
    public static func agentConfigWarnings(_ config: Config) -> [ConfigError.Problem] {
        var out: [ConfigError.Problem] = []
        if config.devices != DeviceFilter() {
            out.append(.init(location: config.grabLocation ?? SourceLocation(path: config.path, line: 0), message: "[devices] in a user's agent config is ignored: the service chooses the keyboards"))
        }
        if config.geometry != nil {
            out.append(.init(location: SourceLocation(path: config.path, line: 0), message: "[geometry] in a user's agent config is ignored: the service publishes the geometry"))
        }
        if config.hudConfigured {
            out.append(.init(location: config.hudLocation ?? SourceLocation(path: config.path, line: 0), message: "[hud] in a user's agent config is ignored: the service decides when the discoverability HUD shows (its config's [hud]); group, discoverability_title and action = \"hud\" on your commands do apply"))
        }
        return out
    }
}
