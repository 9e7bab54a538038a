import ArgumentParser
import KbdProcess
import KbdService
import KbdControl
import KbdConfig
import KbdSystem
import KbdCore
import KbdCommands
import KbdKeymap
#if canImport(Glibc)
import Glibc
#endif

struct CommandsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "commands",
        abstract: "List the commands: titles and chords grouped by scope (the shortcut overlay).",
        discussion: """
            Like the overlay an iPad shows when Command is held: what can be pressed now. With \
            --scope, only the active scopes are listed, most specific first and global last, and a \
            chord shadowed by a more specific scope is marked. Without it, every scope is listed.

            With --active, the running service is asked instead (list_commands on its control \
            socket): the scopes active now (set by a session agent from the focused window, or by \
            a client), whether text input is on, and the service's commands in that order.

            A command's group and HUD title (`group`, `discoverability_title`: what the \
            discoverability HUD and the shortcuts bar show) follow its chord, as does \
            "toggles the HUD" for action = "hud"; --format json has them as "group", \
            "discoverability_title" and "action".

            Examples:
              kbd-commandd commands
              kbd-commandd commands --config /usr/share/doc/kbd-commandd/examples/commands.toml --scope editor
              kbd-commandd commands --active
            """
    )

    @Option(name: .shortAndLong, help: defaultConfigHelp, completion: .file(extensions: ["toml"]))
    var config: String?

    @Option(help: ArgumentHelp("Active scopes, most specific first, comma-separated.", valueName: "scopes"))
    var scope: String?

    @OptionGroup var keymapOptions: KeymapOptions

    @Option(help: ArgumentHelp("Output format: text or json.", valueName: "format"))
    var format: OutputFormat = .text

    @Flag(help: "Ask the running service what is active now (its list_commands).")
    var active = false

    @Option(help: ArgumentHelp("Control socket path with --active (default as for watch).", valueName: "path"))
    var socket: String?

    func validate() throws {
        if active, config != nil || scope != nil {
            throw ValidationError("--active asks the service: it takes neither --config nor --scope")
        }
    }

    func run() throws {
        if active { return try runActive() }
        try withErrorReporting {
            let config = try ConfigLoader.load(ConfigOption.files(config))
            let stdout = FileOutput.standardOutput()
            // Chords as the keymap's keycaps show them (localize, mirror), at its first layout; a
            // pad's commands as its own [device.keymap]'s.
            let keymap = try keymapOptions.keymapWithSource(config: config, environment: ProcessEnvironment.current()).keymap
            let keycaps = try KeyMapper(keymap: keymap).keycaps()
            let pads = PadKeycaps(dedicated: config.devices.dedicated, names: config.deviceKeymaps, base: keymap)
            let listing = CommandListing(table: config.table, activeScopes: scope.map { splitList($0) }, keycaps: keycaps, pads: pads)
            stdout.write(format == .json ? listing.json() : listing.text())
            try stdout.flush()
        }
    }
}

extension CommandsCommand {
    /// `--active`: the service's `list_commands`, as text (the chain, text input, the
    /// commands by scope in chain order) or as the reply's JSON.
    func runActive() throws {
        let reply = try askService(.listCommands, socket: socket)
        guard case .listCommands(let listing) = reply else {
            throw report(CLIFailure(message: "the service refused list_commands: \(reply.error ?? "no reason given")", code: ExitStatus.failure))
        }
        let stdout = FileOutput.standardOutput()
        if format == .json {
            stdout.write(reply.line + "\n")
        } else {
            stdout.write(Self.activeText(listing))
        }
        try stdout.flush()
    }

    /// The reply as text: `active scopes: a, b, global`, `text input: on|off`, then each
    /// scope's commands (escaped: the service's strings may come from anyone's config).
    static func activeText(_ reply: ControlReply.CommandsListing) -> String {
        var out = "active scopes: \(reply.scopes.map(\.escapingControlCharacters).joined(separator: ", "))\n"
        out += "text input: \(reply.textInput ? "on" : "off")\n"
        func listing(_ items: [ControlReply.ListedCommand]) {
            var current: String?
            for item in items {
                if item.scope != current {
                    out += item.scope.escapingControlCharacters + "\n"
                    current = item.scope
                }
                out += "  " + item.title.escapingControlCharacters + "  " + item.chord.escapingControlCharacters
                    + CommandListing.discoverability(item.group, item.discoverabilityTitle, item.action) + "\n"
            }
        }
        listing(reply.commands)
        if let mine = reply.user {
            out += "your table: scopes \(mine.scopes.map(\.escapingControlCharacters).joined(separator: ", ")), text input \(mine.textInput ? "on" : "off")\n"
            listing(mine.commands)
        }
        return out
    }
}
