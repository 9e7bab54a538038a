import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
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
            table is valid. Warns (exit 0) about bindings on keys that type text (each press would \
            be logged and sent to subscribers) and about what the service would refuse: a file that is not \
            regular, owned by someone other than root, you or the kbd-commandd user, or writable by \
            group or others, or in such a directory.

            The summary says where the keymap came from: the command line, the config's [keymap], \
            XKB_DEFAULT_*, the system's keyboard configuration (/etc/default/keyboard, read when \
            none of those names a keymap), or the built-in default (us).

            Without --config it checks what the service reads: /etc/kbd-commandd/config.toml and \
            the drop-ins /etc/kbd-commandd/config.d/*.toml, merged in name order.

            Examples:
              kbd-commandd check
              kbd-commandd check --config examples/commands.toml
            """
    )

    @Option(name: .shortAndLong, help: defaultConfigHelp, completion: .file(extensions: ["toml"]))
    var config: String?

    @OptionGroup var keymapOptions: KeymapOptions

    func run() throws {
        try withErrorReporting {
            let files = ConfigOption.files(config)
            let paths = files.paths()
            let loaded = try ConfigLoader.load(files)
            let stderr = FileOutput.standardError()
            // What the service (root, or its system user) would refuse at start or reload.
            var owners = FileTrust.trustedOwners
            if let user = getpwnam("kbd-commandd") { owners.append(user.pointee.pw_uid) }
            for path in paths {
                for problem in strictModeProblems(path: path, trustedOwners: owners) {
                    stderr.write("Warning: \(path.escapingControlCharacters): the service would refuse this config: \(problem.escapingControlCharacters)\n")
                }
            }
            let (keymap, source) = try keymapOptions.keymapWithSource(config: loaded, environment: ProcessEnvironment.current())
            let table = loaded.table
            // Chords that differ in text but are one press on this layout: only one could fire.
            let conflicts = ConfigLoader.samePressConflicts(table, keymap: keymap)
            if !conflicts.isEmpty { throw ConfigError(problems: conflicts) }
            let environment = ProcessEnvironment.current()
            for warning in ConfigLoader.warnings(loaded, path: environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin") {
                stderr.write("Warning: \(warning.description.escapingControlCharacters)\n")
            }
            let stdout = FileOutput.standardOutput()
            let sequences = table.commands.filter(\.isSequence).count
            let layouts = "\(keymap.names.layout ?? "") \(keymap.layoutNames.joined(separator: ", ")) (from \(source))".escapingControlCharacters
            stdout.write("\(paths.joined(separator: ", ").escapingControlCharacters): OK: \(table.commands.count) commands (\(sequences) sequences) in \(table.scopes.count) scopes; keymap \(layouts)\n")
            try stdout.flush()
        }
    }
}
