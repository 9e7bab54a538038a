public import KbdCommands
import KbdKeymap
import KbdCore
#if canImport(Glibc)
import Glibc
#endif
/// What `check` warns about in a valid config (exit 0): bindings that leak what is typed.
extension ConfigLoader {
    /// Commands bound to a key that types text (`a`, `Shift+1`, `space`, `AltGr+e`, a sequence
    /// such as `x y z`): each press is logged and sent to subscribers as a command event, so
    /// what was typed can be read back. One problem per command, at its `[[command]]` line.
    public static func textKeyWarnings(_ table: CommandTable) -> [ConfigError.Problem] {
        table.commands.filter { $0.keys.contains(where: typesText) }.map { c in
            let global = c.scope == CommandTable.globalScope
                ? " In the global scope it fires whenever that key is typed, in every program."
                : ""
            return ConfigError.Problem(location: c.location, message: "keys = '\(c.keysText)' (command '\(c.id)'): a key that types text; each press is logged and sent to subscribers as a command event, so what is typed there can be reconstructed. Bind it with Ctrl, Alt or Super, or in a scope that is not active while text is typed.\(global)")
        }
    }

    /// A chord that types a character: no Ctrl, Alt or Super, and a printable keysym (Shift and
    /// AltGr still type). F-keys, Return, Tab, Escape, BackSpace and Delete do not.
    static func typesText(_ chord: ChordKey) -> Bool {
        let u = chord.keysym.utf32
        return !chord.hasCommandModifier && u >= 0x20 && u != 0x7F
    }
}

extension ConfigLoader {
    /// Everything `check` warns about in a valid config: bindings on keys that type text,
    /// programs that need a desktop session in the service's config, arguments written for a shell,
    /// `run` programs that cannot start as written (not on `PATH`, or a first element with a
    /// space: a command line where a program name belongs), and `grab = true`.
    /// With `agent`, the config is a user's agent config: its programs run in the session, so
    /// programs that need one are not warned about.
    public static func warnings(_ config: Config, path searchPath: String, agent: Bool = false) -> [ConfigError.Problem] {
        var out = textKeyWarnings(config.table)
        if !agent { out += sessionProgramWarnings(config.table) }
        out += shellSyntaxWarnings(config.table)
        let directories = searchPath.split(separator: ":").map(String.init).filter { !$0.isEmpty }
        for c in config.table.commands where !c.run.isEmpty {
            let program = c.run[0]
            if program.contains(" ") {
                let words = program.split(separator: " ").map { "\"\($0)\"" }.joined(separator: ", ")
                out.append(.init(location: c.location, message: "run = [\"\(program)\", …] (command '\(c.id)'): the program's name contains a space; run takes the program and each argument as separate strings, without a shell: run = [\(words)]"))
            } else if program.contains("/") {
                if access(program, X_OK) != 0 {
                    out.append(.init(location: c.location, message: "run = [\"\(program)\", …] (command '\(c.id)'): \(program) is not an executable file here"))
                }
            } else if !directories.contains(where: { access($0 + "/" + program, X_OK) == 0 }) {
                out.append(.init(location: c.location, message: "run = [\"\(program)\", …] (command '\(c.id)'): '\(program)' is not on PATH (\(searchPath)); the service could not start it. Install it or give its full path"))
            }
        }
        if config.devices.grab {
            out.append(.init(location: config.grabLocation ?? SourceLocation(path: config.path, line: 0), message: "devices.grab = true: while the service runs, the keyboards' keys no longer reach the desktop, the console or any other program (only its commands see them)"))
        }
        return out
    }
}
