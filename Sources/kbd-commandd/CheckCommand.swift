import ArgumentParser
import HardwareInput
import KbdService

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a command table and its keymap.",
        discussion: """
            Prints every problem as FILE:LINE: message (duplicate ids, two commands on one chord \
            in one scope, a chord that is also a sequence prefix, unknown key or modifier names, \
            unknown keys, wrong value types) and exits 78; prints a summary and exits 0 when the \
            table is valid.

            Example:
              kbd-commandd check --config /etc/kbd-commandd/config.toml
            """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("The command table (TOML) to check.", valueName: "file"))
    var config: String

    @OptionGroup var keymapOptions: KeymapOptions

    func run() throws {
        try withErrorReporting {
            let loaded = try ConfigLoader.load(path: config)
            let keymap = try keymapOptions.keymap(config: loaded, environment: ProcessEnvironment.current())
            let table = loaded.table
            let stdout = FileOutput.standardOutput()
            let sequences = table.commands.filter(\.isSequence).count
            stdout.write("\(config): OK: \(table.commands.count) commands (\(sequences) sequences) in \(table.scopes.count) scopes; keymap \(keymap.names.layout ?? "") \(keymap.layoutNames.joined(separator: ", "))\n")
            try stdout.flush()
        }
    }
}
