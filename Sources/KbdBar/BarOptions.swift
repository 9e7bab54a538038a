import KbdTOML
import KbdProcess

/// The bar's options (`kbd-commandd bar …`, which executes `kbd-commandd-bar …`), parsed
/// by hand: the bar links neither the argument parser nor Foundation.
public struct BarOptions: Equatable, Sendable {
    /// nil: the system socket when it exists, else `$XDG_RUNTIME_DIR/kbd-commandd.socket`.
    public var socket: String?
    /// nil: `$XDG_CONFIG_HOME/kbd-commandd/config.toml` (`~/.config/…`), read for `[bar]`.
    public var config: String?

    public init(socket: String? = nil, config: String? = nil) {
        self.socket = socket
        self.config = config
    }

    /// The user's config, as the agent finds it: `$XDG_CONFIG_HOME/kbd-commandd/config.toml`,
    /// else `$HOME/.config/kbd-commandd/config.toml`; nil with neither variable.
    public static func defaultConfig(environment: [String: String]) -> String? {
        ProgramInfo.userConfigPath(environment: environment)
    }

    public enum Parsed: Equatable, Sendable {
        case run(BarOptions)
        case help
        case version
        /// A usage error: the message (exit 64).
        case usage(String)
        /// `--consent …`: the consent dialog instead of the bar (ConsentOptions).
        case consent(ConsentOptions.Parsed)
    }

    public static func parse(_ arguments: [String]) -> Parsed {
        if arguments.contains(where: { $0 == "--consent" || $0.hasPrefix("--consent=") }) { return .consent(ConsentOptions.parse(arguments)) }
        var options = BarOptions()
        // The service's scanner (`--name value`, `--name=value`); the bar's own messages.
        var scan = ArgumentScanner(arguments)
        while scan.next() {
            let name = scan.name
            switch name {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--socket", "-c", "--config":
                guard let v = try? scan.value(), !v.isEmpty else { return .usage("\(name) needs a value") }
                if name == "--socket" { options.socket = v } else { options.config = v }
            default:
                return .usage("unknown option '\(name)'; see kbd-commandd bar --help")
            }
        }
        return .run(options)
    }

    /// The reason the desktop cannot show the bar, from `XDG_CURRENT_DESKTOP` (a colon-separated
    /// list): GNOME Shell's Mutter has no layer-shell. Phosh says "Phosh:GNOME" and has it (phoc).
    public static func unsupportedDesktop(_ environment: [String: String]) -> String? {
        let desktops = (environment["XDG_CURRENT_DESKTOP"] ?? "").split(separator: ":").map { $0.lowercased() }
        guard desktops.contains("gnome"), !desktops.contains("phosh") else { return nil }
        return "GNOME Shell (Mutter) has no layer-shell (zwlr_layer_shell_v1), which the bar needs"
    }

    /// `[bar] enabled` in a config's text: nil when unset. Only this key is read (the agent
    /// checks the rest of the file); a file that is not TOML, or a value that is not a
    /// boolean, is an error whose message names the file and line.
    public static func enabled(configText: String, path: String) throws(BarConfigError) -> Bool? {
        let root: TOMLTable
        do { root = try TOMLParser.parse(configText, path: path) } catch { throw BarConfigError(message: error.description) }
        guard case .table(let bar)? = root["bar"], let entry = bar.entry("enabled") else { return nil }
        guard case .boolean(let on) = entry.value else {
            throw BarConfigError(message: "\(path):\(entry.line): bar.enabled: expected true or false, found \(entry.value.kindDescription)")
        }
        return on
    }

    /// The Wayland socket a client would connect to (libwayland's rule: `WAYLAND_DISPLAY`, an
    /// absolute path or a name in `XDG_RUNTIME_DIR`, default `wayland-0`); nil when neither
    /// says where (then there is no display to try).
    public static func waylandSocket(_ environment: [String: String]) -> String? {
        let name = environment["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 } ?? "wayland-0"
        if name.hasPrefix("/") { return name }
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
        return runtime + "/" + name
    }

    public static let synopsis = "kbd-commandd bar [--socket <path>] [--config <file>]"
    public static let consentSynopsis = "kbd-commandd-bar --consent --app <name> --description <text> [--chord <chord>] [--conflict <text>] [--timeout <s>]"

    public static let help = """
        OVERVIEW: The shortcuts bar and the discoverability HUD, in your Wayland session.

        While a hardware keyboard is present, a bar at the bottom of the screen shows the
        commands of the focused window's scopes as buttons, grouped and titled as the configs
        say (`group`, `title`); a tap runs the command as if its chord had been typed. The
        compositor moves windows out of its way (an exclusive zone as tall as the geometry
        model's mini toolbar). While text input is on, only the commands that still fire are
        shown. When the service shows the HUD (the hold modifier held, a command with
        action = "hud", a pending sequence), a panel in the middle of the screen lists what
        can be typed now, shadowed and filtered commands dimmed. Neither ever takes the
        keyboard focus, and the HUD lets taps through.

        It needs a compositor with layer-shell (zwlr_layer_shell_v1): sway, Hyprland, KDE
        Plasma (KWin), labwc, river, Phosh. GNOME Shell (Mutter) has none: there the bar says
        so once and exits with status 69. The session agent starts it when
        `[bar] enabled = true` (the default where the compositor supports layer-shell) and
        stops it when it stops; `[bar] enabled = false` in the config makes it exit at once.
        It reconnects when the service restarts, and wakes only when the service says
        something.

        OPTIONS:
          --socket <path>   the service's socket (default /run/kbd-commandd/socket when it
                            exists, else $XDG_RUNTIME_DIR/kbd-commandd.socket)
          -c, --config <file>
                            your config, read for [bar] (default
                            $XDG_CONFIG_HOME/kbd-commandd/config.toml)
          -h, --help        this text
          --version         the version

        Exit status: 0 stopped (SIGTERM, SIGINT) or disabled by the config, 64 usage error,
        69 the desktop cannot show it (no Wayland display, no layer-shell: GNOME). A config
        with errors is reported and the defaults used.

        THE CONSENT DIALOG (--consent):
          When an app asks for a global shortcut and the config says
          [portal] approve = "ask", the session agent runs
            \(consentSynopsis)
          A small window (a centred overlay that takes the keyboard; a normal window where
          the compositor has no layer-shell) names the app, the description, the proposed
          chord (as the service names it: Ctrl+Alt+M) and what already has it (--conflict),
          with three buttons: Allow, "Use another chord…" (the next chord pressed, or a
          modifier tapped alone, becomes the proposed one; Escape cancels) and Refuse. Refuse
          has the focus, so Return refuses; Escape (outside a capture) refuses too. It prints
          one line on stdout and exits:
            accept CHORD   exit 0 (CHORD in the config's notation: Ctrl+Alt+m, Super+Return,
                           Shift+F9, Super)
            refuse         exit 1: refused, the window closed, no answer within --timeout
                           seconds (default 60, 1 to 86400), SIGTERM; 69: no display to show it
          A usage error (an unknown option, a missing --app or --description, a --chord that
          is not a chord) exits 2 with a message naming the argument, and prints nothing on
          stdout. Without --chord nothing is proposed: Allow waits for a chord pressed.

        Examples:
          kbd-commandd bar --socket $XDG_RUNTIME_DIR/kbd-commandd.socket
          kbd-commandd-bar --consent --app org.example.Recorder --description "Start recording" --chord Ctrl+Alt+m

        USAGE: \(synopsis)
               \(consentSynopsis)

        """
}

/// Why `[bar] enabled` could not be read.
public struct BarConfigError: Error, Equatable, Sendable {
    public var message: String
    public init(message: String) { self.message = message }
}
