public import KbdCommands
import KbdCore
import KbdSystem

/// Issue 27: `run` programs that cannot work as written.
/// - in the service's config, programs that need a desktop session (the service is a system
///   user with no session: no `WAYLAND_DISPLAY`, `DISPLAY`, session bus or audio server);
/// - in any config, arguments written for a shell (`~`, `$VAR`, `|`, `&&`, `>`) that no shell sees.
extension ConfigLoader {
    /// Programs that need the user's desktop session, by what they are.
    static let sessionPrograms: [String: String] = {
        var out: [String: String] = [:]
        let kinds: [(String, [String])] = [
            ("an audio tool that talks to the user's PipeWire or PulseAudio server", ["wpctl", "pactl", "pamixer", "pulsemixer", "pw-play", "pw-cat", "paplay", "pavucontrol"]),
            ("a media-player tool on the session bus (MPRIS)", ["playerctl"]),
            ("a session-bus tool", ["notify-send", "dunstify", "makoctl", "gdbus", "dbus-send", "gsettings", "qdbus", "xdg-open", "gio"]),
            ("a Wayland client", ["grim", "slurp", "wl-copy", "wl-paste", "swaymsg", "hyprctl", "wtype", "wofi", "fuzzel", "bemenu-run", "wlogout", "swaylock", "wlr-randr", "kanshi"]),
            ("an X11 client", ["xdotool", "xclip", "xsel", "xrandr", "xset", "i3-msg", "scrot", "maim", "dmenu_run", "rofi", "xkill", "xterm", "slock", "i3lock"]),
            ("a desktop application", ["gnome-screenshot", "spectacle", "flameshot", "firefox", "chromium", "google-chrome", "nautilus", "thunar", "dolphin", "code"]),
            ("a terminal", ["foot", "footclient", "alacritty", "kitty", "gnome-terminal", "konsole", "wezterm", "xfce4-terminal", "terminator", "urxvt", "tilix", "kgx", "ptyxis", "x-terminal-emulator"]),
        ]
        for (what, names) in kinds { for n in names { out[n] = what } }
        return out
    }()

    /// The programs a `run` starts: its first element, and for `sh -c SCRIPT` each command of
    /// the script (the first word after `|`, `;`, `&&`, `||`, `&`, or the start).
    static func programs(of run: [String]) -> [String] {
        guard let first = run.first else { return [] }
        let name = first.split(separator: "/").last.map(String.init) ?? first
        if ["sh", "bash", "dash", "zsh"].contains(name), let c = run.firstIndex(of: "-c"), c + 1 < run.count {
            var out: [String] = []
            var atStart = true
            for word in run[c + 1].split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
                if ["|", ";", "&&", "||", "&"].contains(word) { atStart = true; continue }
                if atStart, !word.contains("=" as Character) || word.hasPrefix("=") {
                    out.append(word.split(separator: "/").last.map(String.init) ?? String(word))
                    atStart = false
                }
            }
            return out
        }
        if name == "env" { return run.dropFirst().first(where: { !$0.contains("=" as Character) && !$0.hasPrefix("-") }).map { [$0] } ?? [] }
        return [name]
    }

    /// Commands of the service's config whose program needs a desktop session: the service
    /// runs them as its own user, outside any session, so they fail (`grim`: "failed to create
    /// display"; `wpctl`: no PipeWire). The warning names the user's agent config.
    public static func sessionProgramWarnings(_ table: CommandTable) -> [ConfigError.Problem] {
        var out: [ConfigError.Problem] = []
        for c in table.commands where !c.run.isEmpty {
            guard let (program, what) = programs(of: c.run).lazy.compactMap({ p in sessionPrograms[p].map { (p, $0) } }).first else { continue }
            out.append(.init(location: c.location, message: "run = \(quoted(c.run)) (command '\(c.id)'): '\(program)' is \(what); it needs a desktop session, and the service runs it as its own system user outside any session, where it fails. Move this command to your own config, ~/.config/kbd-commandd/config.toml, which the session agent (kbd-commandd-agent) runs in your session (see /usr/share/doc/kbd-commandd/examples/desktop.toml)"))
        }
        return out
    }

    /// Arguments written for a shell: `~`, `$VAR`, `` ` ``, or a word that is shell syntax
    /// (`|`, `&&`, `;`, `>`, `2>&1`). `sh -c SCRIPT` is left alone: a shell runs that.
    public static func shellSyntaxWarnings(_ table: CommandTable) -> [ConfigError.Problem] {
        var out: [ConfigError.Problem] = []
        for c in table.commands where !c.run.isEmpty {
            let name = c.run[0].split(separator: "/").last.map(String.init) ?? c.run[0]
            if ["sh", "bash", "dash", "zsh"].contains(name), c.run.contains("-c") { continue }
            guard let (arg, why) = c.run.lazy.compactMap({ a in shellFeature(a).map { (a, $0) } }).first else { continue }
            let script = c.run.map(shellQuoted).joined(separator: " ")
            out.append(.init(location: c.location, message: "run = \(quoted(c.run)) (command '\(c.id)'): '\(arg.escapingControlCharacters)' \(why), but no shell runs 'run': the program gets it as written. Write the full path or value (/home/you/… for ~), or run a shell knowingly: run = [\"sh\", \"-c\", \"\(script.replacingQuotes)\"]"))
        }
        return out
    }

    /// What in `arg` only a shell would understand, nil when nothing.
    static func shellFeature(_ arg: String) -> String? {
        let operators = ["|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "&>", "|&"]
        if operators.contains(arg) { return "is shell syntax" }
        if arg.hasPrefix(">") || arg.hasPrefix("2>") || arg.hasPrefix("&>") { return "is a shell redirection" }
        if arg.hasPrefix("~") || arg.includes("=~/") || arg.includes(":~/") { return "starts with '~', which only a shell expands to the home directory" }
        if arg.contains("`" as Character) || arg.includes("$(") { return "contains a command substitution, which only a shell performs" }
        var previous: Character = " "
        for ch in arg {
            if previous == "$", ch == "{" || ch == "_" || ch.isLetter { return "contains a variable ($NAME), which only a shell expands" }
            previous = ch
        }
        return nil
    }

    static func quoted(_ run: [String]) -> String {
        "[" + run.map { "\"\($0.escapingControlCharacters)\"" }.joined(separator: ", ") + "]"
    }

    static func shellQuoted(_ word: String) -> String {
        word.allSatisfy({ $0.isLetter || $0.isNumber || "-_./=:,+@%~$|&;><".contains($0) }) ? word : "'" + word + "'"
    }
}

extension String {
    /// `"` escaped for a TOML basic string.
    var replacingQuotes: String {
        var out = ""
        for c in self { out += c == "\"" ? "\\\"" : c == "\\" ? "\\\\" : String(c) }
        return out
    }
}
