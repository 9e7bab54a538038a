import ArgumentParser
import HardwareInput
import KbdService
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
            let listing = CommandListing(table: config.table, activeScopes: scope.map { splitList($0) })
            stdout.write(format == .json ? listing.json() : listing.text())
            try stdout.flush()
        }
    }
}

extension CommandsCommand {
    /// `--active`: the service's `list_commands`, as text (the chain, text input, the
    /// commands by scope in chain order) or as the reply's JSON.
    func runActive() throws {
        let reply = try askService(#"{"request":"list_commands"}"#, socket: socket)
        guard reply["ok"] == .bool(true) else {
            throw report(CLIFailure(message: "the service refused list_commands: \(reply["error"]?.stringValue ?? "no reason given")", code: ExitStatus.failure))
        }
        let stdout = FileOutput.standardOutput()
        if format == .json {
            stdout.write(JSONValue.object(reply).serialized() + "\n")
        } else {
            stdout.write(Self.activeText(reply))
        }
        try stdout.flush()
    }

    /// The reply as text: `active scopes: a, b, global`, `text input: on|off`, then each
    /// scope's commands (escaped: the service's strings may come from anyone's config).
    static func activeText(_ reply: JSONObject) -> String {
        func strings(_ key: String) -> [String] { reply[key]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        var out = "active scopes: \(strings("scopes").map(\.escapingControlCharacters).joined(separator: ", "))\n"
        out += "text input: \(reply["text_input"] == .bool(true) ? "on" : "off")\n"
        func listing(_ items: [JSONValue]) {
            var current: String?
            for item in items {
                let scope = item["scope"]?.stringValue ?? "?"
                if scope != current {
                    out += scope.escapingControlCharacters + "\n"
                    current = scope
                }
                out += "  " + (item["title"]?.stringValue ?? "").escapingControlCharacters + "  " + (item["chord"]?.stringValue ?? "").escapingControlCharacters + "\n"
            }
        }
        listing(reply["commands"]?.arrayValue ?? [])
        if let mine = reply["user_commands"]?.arrayValue {
            out += "your table: scopes \(strings("user_scopes").map(\.escapingControlCharacters).joined(separator: ", ")), text input \(reply["user_text_input"] == .bool(true) ? "on" : "off")\n"
            listing(mine)
        }
        return out
    }
}
