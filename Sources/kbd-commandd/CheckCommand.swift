import ArgumentParser
import KbdProcess
#if canImport(Glibc)
import Glibc
#endif
import KbdCore
import KbdService
import KbdConfig
import KbdSystem
import KbdKeymap
import KbdCommands

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a command table and its keymap.",
        discussion: """
            Prints every problem as FILE:LINE: message (duplicate ids, two commands on one chord \
            in one scope, a chord that is also a sequence prefix, unknown key or modifier names, \
            unknown keys, wrong value types) and exits 78; prints a summary and exits 0 when the \
            table is valid. A file the service would refuse is an error too, as it is for the \
            service: one that is not regular, owned by someone other than root, you or the \
            kbd-commandd user, or writable by group or others, or in such a directory.

            Warns (exit 0) about bindings on keys that type text (each press would be logged and \
            sent to subscribers), chords no key of the keymap gives (F13 on a us keymap types \
            XF86Tools), run arguments written for a shell (~, $VAR, |, &&, >), and, in the \
            service's config, programs that need a desktop session (wpctl, grim, notify-send, \
            terminals): those belong in your agent config, and about a [hud] sequence_delay_ms \
            longer than the sequence timeout (the HUD could never show a prefix's continuations) \
            and group names that differ only in case. A config that uses the discoverability HUD \
            ([hud], group, discoverability_title, action = "hud") gets a second line saying when \
            it shows and which groups it lists.

            The summary says where the keymap came from: the command line, the config's [keymap], \
            XKB_DEFAULT_*, the system's keyboard configuration (/etc/default/keyboard, read when \
            none of those names a keymap), or the built-in default (us).

            Without --config it checks what the service reads: /etc/kbd-commandd/config.toml and \
            the drop-ins /etc/kbd-commandd/config.d/*.toml, merged in name order. With --agent it \
            checks your session agent's config ($XDG_CONFIG_HOME/kbd-commandd/config.toml, else \
            ~/.config/kbd-commandd/config.toml, or --config), as the agent reads it: owned by you, \
            and without [keymap] (the service's keymap applies).

            Examples:
              kbd-commandd check
              kbd-commandd check --config /usr/share/doc/kbd-commandd/examples/commands.toml
              kbd-commandd check --agent --config /usr/share/doc/kbd-commandd/examples/desktop.toml
              kbd-commandd check --config /usr/share/doc/kbd-commandd/examples/hud.toml
            """
    )

    @Option(name: .shortAndLong, help: defaultConfigHelp, completion: .file(extensions: ["toml"]))
    var config: String?

    @Flag(help: "Check your session agent's config (default: ~/.config/kbd-commandd/config.toml) as the agent reads it.")
    var agent = false

    @OptionGroup var keymapOptions: KeymapOptions

    func run() throws {
        try withErrorReporting {
            let environment = ProcessEnvironment.current()
            var configPath = config
            if agent, configPath == nil {
                // As the agent finds it (AgentOptions.defaultConfig).
                if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { configPath = xdg + "/kbd-commandd/config.toml" }
                else if let home = environment["HOME"], !home.isEmpty { configPath = home + "/.config/kbd-commandd/config.toml" }
            }
            let files = ConfigOption.files(configPath)
            let paths = files.paths()
            let loaded = try ConfigLoader.load(files)
            let stderr = FileOutput.standardError()
            // What the service (root, or its system user) or the agent (you) refuses at start or
            // reload is an error here too (issue 27: check said OK, then reload refused it).
            var owners = FileTrust.trustedOwners
            if !agent, let user = getpwnam("kbd-commandd") { owners.append(user.pointee.pw_uid) }
            var refused: [ConfigError.Problem] = []
            let who = agent ? "the agent" : "the service"
            for path in paths {
                for problem in strictModeProblems(path: path, trustedOwners: owners) {
                    refused.append(.init(location: SourceLocation(path: path, line: 1), message: "\(who) refuses this config: \(problem)"))
                }
            }
            if agent { refused += ConfigLoader.agentConfigProblems(loaded) }
            if !refused.isEmpty { throw ConfigError(problems: refused) }
            let (keymap, source) = try keymapOptions.keymapWithSource(config: loaded, environment: ProcessEnvironment.current())
            let table = loaded.table
            // Chords that differ in text but are one press on this layout: only one could fire.
            let conflicts = ConfigLoader.samePressConflicts(table, keymap: keymap)
            if !conflicts.isEmpty { throw ConfigError(problems: conflicts) }
            // [device.keymap]: compiled as the service will (an error here, not at its start).
            let devices = ConfigLoader.deviceKeymapNotes(loaded, base: keymap)
            if !devices.errors.isEmpty { throw ConfigError(problems: devices.errors) }
            var warnings = ConfigLoader.warnings(loaded, path: environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin", agent: agent)
            warnings += ConfigLoader.untypableKeyWarnings(table, keymap: keymap)
            if agent { warnings += ConfigLoader.agentConfigWarnings(loaded) }
            for warning in warnings {
                stderr.write("Warning: \(warning.description.escapingControlCharacters)\n")
            }
            let stdout = FileOutput.standardOutput()
            let sequences = table.commands.filter(\.isSequence).count
            let layouts = "\(keymap.names.layout ?? "") \(keymap.layoutNames.joined(separator: ", ")) (from \(source))".escapingControlCharacters
            stdout.write("\(paths.joined(separator: ", ").escapingControlCharacters): OK: \(table.commands.count) commands (\(sequences) sequences) in \(table.scopes.count) scopes; keymap \(layouts)\n")
            if let hud = ConfigLoader.hudSummary(loaded) {
                stdout.write(hud.escapingControlCharacters + "\n")
            }
            // localize and mirror: which chords fire from another key on this keymap, and why.
            for note in ConfigLoader.localizationNotes(table, keymap: keymap) + devices.notes {
                stdout.write("Note: \(note.description.escapingControlCharacters)\n")
            }
            try stdout.flush()
        }
    }
}
