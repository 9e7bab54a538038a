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
        out += hudWarnings(config)
        out += tapWarnings(config)
        if config.devices.grab {
            out.append(.init(location: config.grabLocation ?? SourceLocation(path: config.path, line: 0), message: "devices.grab = true: while the service runs, the keyboards' keys no longer reach the desktop, the console or any other program (only its commands see them)"))
        }
        return out
    }
}

extension ConfigLoader {
    /// What `check` warns about the HUD and the groups: a `[hud] sequence_delay_ms` longer than
    /// the sequence timeout (the continuations would never show), and group names that differ
    /// only in case or spaces (they show as two groups: one was meant).
    public static func hudWarnings(_ config: Config) -> [ConfigError.Problem] {
        var out: [ConfigError.Problem] = []
        let timeout = config.table.sequenceTimeoutMilliseconds
        if config.hud.enabled, config.hud.sequenceDelayMilliseconds > timeout, let sequence = config.table.commands.first(where: \.isSequence) {
            // At the key when it is set, else at the first sequence (the default delay is longer than the timeout).
            out.append(.init(location: config.hudSequenceDelayLocation ?? sequence.location,
                             message: "hud.sequence_delay_ms = \(config.hud.sequenceDelayMilliseconds): longer than a sequence waits for its next chord ([settings] sequence_timeout_ms = \(timeout)), so the HUD never shows what can follow a prefix; set it to \(timeout) or less (0 shows at once)"))
        }
        var seen: [String: (name: String, command: Command)] = [:]
        for c in config.table.commands {
            guard let group = c.group else { continue }
            let key = String(group.lowercased().filter { !$0.isWhitespace })
            if let first = seen[key] {
                if first.name != group {
                    out.append(.init(location: c.location, message: "group = \"\(group)\" (command '\(c.id)') differs from group = \"\(first.name)\" (command '\(first.command.id)' at \(first.command.location)) only in case or spaces: the HUD and the bar show them as two groups; write them the same"))
                }
            } else {
                seen[key] = (group, c)
            }
        }
        return out
    }

    /// `check`'s line about the HUD and the bar, for a config that uses them (a `[hud]`
    /// section, a group, a discoverability title or a HUD command); nil otherwise.
    public static func hudSummary(_ config: Config) -> String? {
        let commands = config.table.commands
        let toggles = commands.filter { $0.action == .hud }.count
        guard config.hudConfigured || toggles > 0 || commands.contains(where: { $0.group != nil || $0.discoverabilityTitle != nil }) else { return nil }
        guard config.hud.enabled else { return "HUD: off ([hud] enabled = false)" }
        var groups: [String] = []
        for c in commands { if let g = c.group, !groups.contains(g) { groups.append(g) } }
        let other = commands.filter { $0.group == nil }.count
        var line = "HUD: shows after \(config.hud.hold.rawValue) is held alone for \(config.hud.delayMilliseconds) ms, and a sequence's continuations after \(config.hud.sequenceDelayMilliseconds) ms"
        if toggles > 0 { line += "; \(toggles) command\(toggles == 1 ? "" : "s") toggle\(toggles == 1 ? "s" : "") it" }
        line += "; groups: " + (groups.isEmpty ? "none" : groups.joined(separator: ", "))
        if other > 0 { line += " (\(other) command\(other == 1 ? "" : "s") under \"Other\")" }
        return line
    }
}

extension ConfigLoader {
    /// A tap of the HUD's hold modifier that may last as long as the HUD's delay: a hold that
    /// shows the HUD would end in a tap as well.
    public static func tapWarnings(_ config: Config) -> [ConfigError.Problem] {
        guard config.hud.enabled else { return [] }
        return config.table.commands.filter { $0.tapModifier == config.hud.hold && $0.tapMilliseconds >= config.hud.delayMilliseconds }.map { c in
            ConfigError.Problem(location: c.location, message: "tap_ms = \(c.tapMilliseconds) (command '\(c.id)'): not shorter than the HUD's hold (hud.delay_ms = \(config.hud.delayMilliseconds) on \(c.tapModifier!.rawValue)); a tap is a release sooner than tap_ms, so keep it below \(config.hud.delayMilliseconds)")
        }
    }
}
