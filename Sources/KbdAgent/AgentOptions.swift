public import KbdProcess

/// The options of the session agent (`kbd-commandd agent …`, which executes
/// `kbd-commandd-agent …`). Parsed by hand: the agent links neither the argument
/// parser nor Foundation (its idle memory has the service's goal).
public struct AgentOptions: Equatable, Sendable {
    /// nil: `$XDG_CONFIG_HOME/kbd-commandd/config.toml` (`~/.config/…`).
    public var config: String?
    /// nil: the system socket when it exists, else `$XDG_RUNTIME_DIR/kbd-commandd.socket`.
    public var socket: String?
    public var logLevel = "info"

    public init() {}

    public enum Parsed: Equatable, Sendable {
        case run(AgentOptions)
        case help
        case version
    }

    /// The user's config path: `$XDG_CONFIG_HOME/kbd-commandd/config.toml`, else
    /// `$HOME/.config/kbd-commandd/config.toml`; nil with neither variable.
    public static func defaultConfig(environment: [String: String]) -> String? {
        ProgramInfo.userConfigPath(environment: environment)
    }

    public static func parse(_ arguments: [String]) throws(CLIFailure) -> Parsed {
        var options = AgentOptions()
        var scan = ArgumentScanner(arguments)
        func usage(_ message: String) -> CLIFailure { ArgumentScanner.usage(message) }
        while scan.next() {
            let name = scan.name
            func value() throws(CLIFailure) -> String { try scan.value() }
            switch name {
            case "-h", "--help": return .help
            case "--version": return .version
            case "-c", "--config": options.config = try value()
            case "--socket": options.socket = try value()
            case "--log-level":
                let text = try value()
                guard ProgramInfo.logLevels.contains(text) else {
                    throw usage("--log-level must be one of \(ProgramInfo.logLevels.joined(separator: ", ")), not '\(text)'")
                }
                options.logLevel = text
            default:
                throw scan.unknown()
            }
        }
        return .run(options)
    }

    public static let synopsis = "kbd-commandd agent [--config <file>] [--socket <path>] [--log-level <level>]"

    public static let help = """
        OVERVIEW: The session agent: your own shortcuts, run in your desktop session, and the
        on-screen keyboard following the hardware keyboard.

        Runs as you, in your graphical session, one per user: started at login by the XDG autostart
        entry (GNOME, KDE), a line in the sway, i3 or Hyprland config, or the user unit (see
        kbd-commandd-agent(1)).
        It registers the [[command]] table of your config with the service over its control
        socket; the service routes those chords (after its own table, which wins a chord both
        bind) and tells this agent alone when one fires; the agent runs the command's `run`
        with your session's environment (WAYLAND_DISPLAY, DISPLAY, DBUS_SESSION_BUS_ADDRESS, …).
        When a hardware keyboard becomes present it hides the on-screen keyboard ([osk]
        backend: auto, squeekboard, kwin, gnome, wvkbd or none) and puts back what was there when
        it leaves. Scopes follow the focused window: it reads the focus from sway or i3
        (IPC), Hyprland or an EWMH window manager on X11 and sets the scopes [scopes]
        maps that app to (else its app id). Text input follows the desktop ([text_input]
        source: auto, kwin, accessibility or none): while a text field has the focus (KWin's
        activeClientSupportsTextInput, or AT-SPI focus events on the accessibility bus), chords
        that would type, such as Shift+T, do not fire. It starts the shortcuts bar and HUD
        (kbd-commandd-bar; [bar] enabled, default on where the compositor has layer-shell) and
        stops it when it stops. It reconnects when the service restarts. SIGHUP or saving the config
        reloads it (a bad one is logged with file:line and the old table kept).

        Example:
          kbd-commandd agent --config ~/.config/kbd-commandd/config.toml

        USAGE: \(synopsis)

        OPTIONS:
          -c, --config <file>     Your config (default: $XDG_CONFIG_HOME/kbd-commandd/config.toml,
                                  else ~/.config/kbd-commandd/config.toml).
          --socket <path>         The service's control socket (default: /run/kbd-commandd/socket when
                                  it exists, else $XDG_RUNTIME_DIR/kbd-commandd.socket).
          --log-level <level>     trace, debug, info, notice, warning, error or critical. (default: info)
          --version               Show the version.
          -h, --help              Show help information.

        A config that is missing or bad at start is logged (file:line) and the agent goes on
        without commands until it is fixed and saved.

        Exit codes: 0 stopped by SIGTERM/SIGINT; 64 usage error; 1 other failure.

        """
}
