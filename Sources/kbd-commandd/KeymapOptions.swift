import ArgumentParser
import KbdProcess
import KbdService
import KbdKeymap
import KbdConfig
import KbdControl
import KbdSystem

/// `--layout`, `--variant`, `--options`, `--model`, `--rules`: override the config's `[keymap]`.
struct KeymapOptions: ParsableArguments {
    @Option(help: ArgumentHelp("XKB layout(s), e.g. 'de' or 'us,ru'. Overrides the config's [keymap].", valueName: "layout"))
    var layout: String?

    @Option(help: ArgumentHelp("XKB variant(s), e.g. 'nodeadkeys'.", valueName: "variant"))
    var variant: String?

    @Option(help: ArgumentHelp("XKB options, e.g. 'grp:alt_shift_toggle'.", valueName: "options"))
    var options: String?

    @Option(help: ArgumentHelp("XKB model, e.g. 'pc105'.", valueName: "model"))
    var model: String?

    @Option(help: ArgumentHelp("XKB rules (default evdev).", valueName: "rules"))
    var rules: String?

    var names: KeymapNames {
        KeymapNames(rules: rules, model: model, layout: layout, variant: variant, options: options)
    }

    /// Compiles the keymap: command line over config over `XKB_DEFAULT_*` over the system's
    /// keyboard configuration (/etc/default/keyboard, or $KBD_COMMANDD_SYSTEM_KEYBOARD) over us.
    /// Names the rules' list omits but libxkbcommon compiles are used, with a warning on stderr.
    func keymap(config: Config, environment: [String: String]) throws -> XkbKeymap {
        try keymapWithSource(config: config, environment: environment).keymap
    }

    /// The keymap and where its names came from.
    func keymapWithSource(config: Config, environment: [String: String]) throws -> (keymap: XkbKeymap, source: String) {
        let stderr = FileOutput.standardError()
        let system = SystemKeyboard.path(environment: environment).flatMap { SystemKeyboard.load(path: $0) }
        return try compileKeymapWithSource(commandLine: names, config: config, environment: environment, system: system) { warning in
            stderr.write("Warning: \(warning.escapingControlCharacters)\n")
        }
    }
}

/// `--config FILE`.
struct ConfigOption: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("The command table (TOML).", valueName: "file"), completion: .file(extensions: ["toml"]))
    var config: String?

    /// The file given, or none (an empty table): for replay.
    func load() throws -> Config {
        guard let config else { return .empty() }
        return try ConfigLoader.load(path: config)
    }

    /// The file given, else the service's standard files.
    var files: ConfigFiles { ConfigOption.files(config) }

    static func files(_ config: String?) -> ConfigFiles {
        config.map(ConfigFiles.single) ?? ConfigFiles.standard(environment: ProcessEnvironment.current())
    }

    /// The file given, else the service's standard files (`/etc/kbd-commandd/config.toml` and `config.d/*.toml`).
    func loadOrDefault() throws -> Config { try ConfigLoader.load(files) }
}

/// The help text of a `--config` that defaults to the service's files.
let defaultConfigHelp = ArgumentHelp(
    "The command table (TOML). Default: /etc/kbd-commandd/config.toml and then config.d/*.toml there, in name order ($KBD_COMMANDD_CONFIG_DIR replaces /etc/kbd-commandd).",
    valueName: "file")

/// Splits `a,b , c` into names.
func splitList(_ text: String?) -> [String] {
    guard let text else { return [] }
    return text.split(separator: ",").map { String($0).trimmingBlanks() }.filter { !$0.isEmpty }
}

extension String {
    func trimmingBlanks() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

/// `--format text|json`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
    var formatter: EventFormatter.Format { self == .json ? .json : .text }
}
