import ArgumentParser
import HardwareInput

struct CommandsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "commands",
        abstract: "List the commands: titles and chords grouped by scope (the shortcut overlay).",
        discussion: """
            Like the overlay an iPad shows when Command is held: what can be pressed now. With \
            --scope, only the active scopes are listed, most specific first and global last, and a \
            chord shadowed by a more specific scope is marked. Without it, every scope is listed.

            Examples:
              kbd-commandd commands
              kbd-commandd commands --config examples/commands.toml --scope editor
            """
    )

    @Option(name: .shortAndLong, help: defaultConfigHelp, completion: .file(extensions: ["toml"]))
    var config: String?

    @Option(help: ArgumentHelp("Active scopes, most specific first, comma-separated.", valueName: "scopes"))
    var scope: String?

    @Option(help: ArgumentHelp("Output format: text or json.", valueName: "format"))
    var format: OutputFormat = .text

    func run() throws {
        try withErrorReporting {
            let config = try ConfigLoader.load(ConfigOption.files(config))
            let stdout = FileOutput.standardOutput()
            let listing = CommandListing(table: config.table, activeScopes: scope.map { splitList($0) })
            stdout.write(format == .json ? listing.json() : listing.text())
            try stdout.flush()
        }
    }
}
