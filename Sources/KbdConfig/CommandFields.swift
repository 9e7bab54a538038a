public import KbdCore
public import KbdCommands
import KbdKeymap
import KbdSystem

/// The rules of one command's fields, shared by a config's `[[command]]` and a table a
/// user's agent registers over the control socket, so both are held to the same: a
/// non-empty id and keys, a title and scope that are not empty when given, one scope name
/// without commas or spaces, keys that parse as a chord or a sequence, and `run` (config
/// only) a non-empty program and arguments. `group` and `discoverability_title` (what the
/// HUD and the bar show) are short, non-empty and free of control characters; a command with
/// `action = "hud"` runs nothing.
public enum CommandFields {
    /// At most this many characters in a `group` (a heading) and a `discoverability_title`.
    public static let maxGroupLength = 40
    public static let maxDiscoverabilityTitleLength = 80

    /// Builds the command, or reports each problem with the field it is about (`id`,
    /// `title`, `keys`, `scope`, `run`) and returns nil.
    public static func command(id: String?, title: String?, keys: String?, scope: String?, repeat: Bool, priorityOverTextInput: Bool,
                               run: [String] = [], group: String? = nil, discoverabilityTitle: String? = nil, action: Command.Action = .run,
                               location: SourceLocation, problem: (_ field: String, _ message: String) -> Void) -> Command? {
        var ok = true
        func nonEmpty(_ field: String, _ value: String?, required: Bool) -> String? {
            guard let value else {
                if required { problem(field, "[[command]] needs '\(field)'"); ok = false }
                return nil
            }
            guard !value.isEmpty else {
                problem(field, "\(field): expected a non-empty string, found an empty string")
                ok = false
                return nil
            }
            return value
        }
        let id = nonEmpty("id", id, required: true)
        let title = nonEmpty("title", title, required: false)
        let keysText = nonEmpty("keys", keys, required: true)
        let scope = nonEmpty("scope", scope, required: false)
        var chords: [ChordKey] = []
        if let keysText {
            do { chords = try ChordKey.parseSequence(keysText) } catch {
                problem("keys", "keys = \(error.description)")
                ok = false
            }
        }
        if let scope, scope.contains(where: { $0 == "," || $0 == " " }) {
            problem("scope", "scope: expected one scope name without commas or spaces, found '\(scope)'")
            ok = false
        }
        // What the HUD and the bar show: a heading and a label, one short line each.
        func shown(_ field: String, _ value: String?, limit: Int, what: String) -> String? {
            guard let value = nonEmpty(field, value, required: false) else { return nil }
            if value.containsControlCharacters {
                problem(field, "\(field): expected \(what) without control characters (line breaks, tabs, escapes), found '\(value.escapingControlCharacters)'")
                ok = false
            } else if value.count > limit {
                problem(field, "\(field): expected \(what) of at most \(limit) characters, found \(value.count)")
                ok = false
            }
            return value
        }
        let group = shown("group", group, limit: maxGroupLength, what: "a group heading such as \"Edit\"")
        let discoverabilityTitle = shown("discoverability_title", discoverabilityTitle, limit: maxDiscoverabilityTitleLength,
                                         what: "a title for the HUD such as \"Save File\"")
        if action == .hud, !run.isEmpty {
            problem("run", "run: a command with action = \"hud\" toggles the discoverability HUD and runs nothing; remove run, or action to run it")
            ok = false
        }
        guard ok, let id, let keysText else { return nil }
        return Command(id: id, title: title ?? id, keys: chords, keysText: keysText, scope: scope ?? CommandTable.globalScope,
                       repeat: `repeat`, priorityOverTextInput: priorityOverTextInput, run: run, location: location,
                       group: group, discoverabilityTitle: discoverabilityTitle, action: action)
    }
}
