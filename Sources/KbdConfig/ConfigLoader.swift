import KbdTOML
public import KbdSystem
import KbdCore
import KbdKeymap
import KbdCommands
/// Reads the command table file (TOML) into a `Config`, collecting every
/// problem with its file and line rather than stopping at the first.
public enum ConfigLoader {
    static let commandKeys = ["id", "title", "keys", "scope", "repeat", "priority_over_text_input", "run", "group", "discoverability_title", "action",
                                     "localize", "mirror", "devices", "on", "hold_ms", "tap_ms", "cooldown_ms", "run_on_release"]
    static let sections = ["keymap", "settings", "command", "devices", "geometry", "osk", "scopes", "text_input", "accessibility", "hud", "bar", "device", "portal"]

    /// Loads and validates the file at `path`. The service loads its config with `.strict`
    /// (sshd's StrictModes: it executes the `run` programs the file names); the command-line
    /// tools read any file they are given.
    public static func load(path: String, trust: FileTrust = .any) throws(ConfigError) -> Config {
        var config = try parse(try readText(path: path, trust: trust), path: path)
        config.files = [path]
        return config
    }

    /// Reads a file's text for `load` and the drop-in merge: 66-style problems (line 0) when
    /// it cannot be read.
    static func readText(path: String, trust: FileTrust) throws(ConfigError) -> String {
        let bytes: [UInt8]
        do { bytes = try readFile(path: path, limit: 16 << 20, trust: trust) } catch {
            let message = switch error {
            case .system(let e): "cannot read the config: \(e.message)"
            case .refused(_, let reason): "refusing to load the config: \(reason)"
            }
            throw ConfigError(problems: [.init(location: SourceLocation(path: path, line: 0), message: message)])
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigError(problems: [.init(location: SourceLocation(path: path, line: 0), message: "not valid UTF-8; expected a TOML text file")])
        }
        return text
    }

    /// Parses and validates config text; `path` is used in messages.
    public static func parse(_ text: String, path: String) throws(ConfigError) -> Config {
        let root: TOMLTable
        do { root = try TOMLParser.parse(text, path: path) } catch {
            throw ConfigError(problems: [.init(location: SourceLocation(path: path, line: error.line), message: error.message)])
        }
        return try interpret(root, path: path)
    }

    /// Validates a parsed TOML document as a config; `path` is used in messages.
    static func interpret(_ root: TOMLTable, path: String) throws(ConfigError) -> Config {
        var problems: [ConfigError.Problem] = []
        func problem(_ line: Int, _ message: String) {
            problems.append(.init(location: SourceLocation(path: path, line: line), message: message))
        }
        for entry in root.entries where !sections.contains(entry.key) {
            problem(entry.line, "unknown section '\(entry.key)'\(hint(entry.key, sections)); expected one of [keymap], [settings], [[command]], [devices], [geometry], [osk], [scopes], [text_input], [accessibility], [hud], [bar], [[device]], [portal]")
        }

        // The sections of plain keys, through the one table of keys (ConfigKeys.swift).
        var draft = ConfigDraft()
        for section in keyedSections {
            guard let entry = root.entry(section) else { continue }
            guard case .table(let t) = entry.value else {
                problem(entry.line, "\(section): expected a table ([\(section)])")
                continue
            }
            readSection(section, t, path: path, into: &draft, problem: problem)
        }

        // [keymap]'s names, checked against the rules' list (keymapNameProblems).
        var keymapLocation: SourceLocation?
        var keymapWarnings: [ConfigError.Problem] = []
        if let entry = root.entry("keymap"), case .table = entry.value {
            keymapLocation = SourceLocation(path: path, line: entry.line)
            let found = keymapNameProblems(draft.keymap, lines: draft.keymapLines, sectionLine: entry.line, prefix: "keymap", path: path)
            problems += found.errors
            keymapWarnings = found.warnings
        }

        var geometry: TOMLTable?
        if let entry = root.entry("geometry") {
            if case .table(let t) = entry.value { geometry = t } else { problem(entry.line, "geometry: expected a table ([geometry])") }
        }

        // [scopes] (the session agent's)
        var scopes = ScopeMap()
        if let entry = root.entry("scopes") {
            if case .table(let t) = entry.value {
                for e in t.entries {
                    if let app = scopeApp(e, problem: problem) { scopes.apps[e.key] = app }
                }
            } else {
                problem(entry.line, "scopes: expected a table ([scopes]) from app id or WM class to a list of scopes")
            }
        }

        let dedicated = dedicatedDevices(root, path: path, problem: problem, warnings: &keymapWarnings)

        // [[command]]
        var commands: [Command] = []
        if let entry = root.entry("command") {
            if case .array(let elements, _) = entry.value {
                for element in elements {
                    guard case .table(let t) = element else {
                        problem(entry.line, "command: expected [[command]] tables")
                        continue
                    }
                    if let c = command(from: t, path: path, problem: problem) { commands.append(c) }
                }
            } else {
                problem(entry.line, "command: expected [[command]] tables, one per command")
            }
        }

        // Conflicts are checked among the commands that parsed, so one run reports everything.
        do {
            let table = try CommandTable(commands: commands, sequenceTimeoutMilliseconds: draft.timeout)
            if problems.isEmpty {
                var config = Config(path: path, table: table, geometry: geometry, scopes: scopes)
                draft.apply(to: &config)
                config.devices.dedicated = dedicated.map(\.device)
                config.deviceKeymaps = dedicated.map(\.keymap)
                config.keymapLocation = keymapLocation
                config.hudLocation = root.entry("hud").map { SourceLocation(path: path, line: $0.line) }
                config.keymapWarnings = keymapWarnings
                return config
            }
        } catch {
            for c in error.conflicts { problems.append(.init(location: c.location, message: c.message)) }
        }
        throw ConfigError(problems: problems.sorted { $0.location.line < $1.location.line })
    }

    /// `; did you mean 'title'?` for a misspelt name, else nothing.
    static func hint(_ word: String, _ names: [String]) -> String {
        let near = NearestNames.nearest(to: word, in: names, limit: 2)
        return near.isEmpty ? "" : " (did you mean \(NearestNames.list(near))?)"
    }

    /// One `[scopes]` entry: `app = ["scope", …]`, or a table with `scopes`, `text_input` and
    /// `title."pattern" = ["scope", …]`.
    private static func scopeApp(_ e: TOMLTable.Entry, problem: (Int, String) -> Void) -> ScopeMap.App? {
        let name = "scopes.\"\(e.key)\""
        guard !e.key.isEmpty else {
            problem(e.line, "scopes: an empty app id; expected the app id (Wayland) or WM class (X11) of a window")
            return nil
        }
        func scopeList(_ value: TOMLValue, _ line: Int, _ what: String) -> [String]? {
            guard let list = stringArray(value) else {
                problem(line, "\(what): expected an array of scope names, found \(value.kindDescription)")
                return nil
            }
            for s in list where s.isEmpty || s.contains(where: { $0 == "," || $0 == " " }) {
                problem(line, "\(what): expected scope names without commas or spaces, found '\(s)'")
                return nil
            }
            return list
        }
        switch e.value {
        case .array:
            return scopeList(e.value, e.line, name).map { ScopeMap.App(scopes: $0) }
        case .table(let t):
            var app = ScopeMap.App(scopes: [])
            var ok = true
            for k in t.entries {
                switch k.key {
                case "scopes":
                    if let list = scopeList(k.value, k.line, "\(name).scopes") { app.scopes = list } else { ok = false }
                case "text_input":
                    if case .boolean(let b) = k.value { app.textInput = b } else {
                        problem(k.line, "\(name).text_input: expected true or false, found \(k.value.kindDescription)")
                        ok = false
                    }
                case "title":
                    guard case .table(let patterns) = k.value else {
                        problem(k.line, "\(name).title: expected a table from window-title pattern to scopes, such as title.\"*YouTube*\" = [\"video\"]")
                        ok = false
                        continue
                    }
                    for p in patterns.entries {
                        guard !p.key.isEmpty else {
                            problem(p.line, "\(name).title: an empty pattern; use \"*\" for any title")
                            ok = false
                            continue
                        }
                        if let list = scopeList(p.value, p.line, "\(name).title.\"\(p.key)\"") {
                            app.titles.append(ScopeMap.TitlePattern(pattern: p.key, scopes: list))
                        } else {
                            ok = false
                        }
                    }
                default:
                    problem(k.line, "unknown key '\(k.key)' in \(name); expected scopes, text_input or title")
                    ok = false
                }
            }
            return ok ? app : nil
        default:
            problem(e.line, "\(name): expected an array of scope names or a table (scopes, text_input, title), found \(e.value.kindDescription)")
            return nil
        }
    }

    static func stringArray(_ value: TOMLValue) -> [String]? {
        guard case .array(let elements, _) = value else { return nil }
        var out: [String] = []
        for e in elements {
            guard case .string(let s) = e else { return nil }
            out.append(s)
        }
        return out
    }

    private static func command(from t: TOMLTable, path: String, problem: (Int, String) -> Void) -> Command? {
        var ok = true
        for e in t.entries where !commandKeys.contains(e.key) {
            problem(e.line, "unknown key '\(e.key)' in [[command]]\(hint(e.key, commandKeys)); expected one of \(commandKeys.joined(separator: ", "))")
            ok = false
        }
        // Types here; what the values must be in CommandFields, shared with registered tables.
        func string(_ key: String) -> String? {
            guard let e = t.entry(key) else { return nil }
            guard case .string(let s) = e.value else {
                problem(e.line, "\(key): expected a non-empty string, found \(e.value.kindDescription)")
                ok = false
                return nil
            }
            return s
        }
        func bool(_ key: String, default value: Bool = false) -> Bool {
            guard let e = t.entry(key) else { return value }
            guard case .boolean(let b) = e.value else {
                problem(e.line, "\(key): expected true or false, found \(e.value.kindDescription)")
                ok = false
                return false
            }
            return b
        }
        let id = string("id"), title = string("title"), keys = string("keys"), scope = string("scope")
        let group = string("group"), discoverabilityTitle = string("discoverability_title")
        var action = Command.Action.run
        var actionKnown = true
        if let e = t.entry("action") {
            let names = Command.Action.allCases.map(\.rawValue)
            if case .string(let name) = e.value, let a = Command.Action(rawValue: name) {
                action = a
            } else {
                let found = if case .string(let name) = e.value { "'\(name)'\(hint(name, names))" } else { e.value.kindDescription }
                problem(e.line, "action: expected \(names.map { "\"\($0)\"" }.joined(separator: " or ")) (\"hud\": the chord toggles the discoverability HUD), found \(found)")
                // The other fields are still checked: every problem in one run.
                actionKnown = false
            }
        }
        let rep = bool("repeat")
        let priority = bool("priority_over_text_input")
        let localize = bool("localize", default: true), mirror = bool("mirror")
        var devices: [String]?
        if let e = t.entry("devices") {
            if let list = stringArray(e.value) {
                devices = list
            } else {
                problem(e.line, CommandFields.devicesExpected)
                ok = false
            }
        }
        var run: [String] = []
        if let e = t.entry("run") {
            if let list = stringArray(e.value), !list.isEmpty, !list[0].isEmpty {
                run = list
            } else {
                problem(e.line, "run: expected a non-empty array of strings: the program and its arguments (no shell)")
                ok = false
            }
        }
        func milliseconds(_ key: String) -> Int? {
            guard let e = t.entry(key) else { return nil }
            guard case .integer(let n) = e.value, let value = Int(exactly: n) else {
                problem(e.line, "\(key): expected a whole number of milliseconds, found \(e.value.kindDescription)")
                ok = false
                return nil
            }
            return value
        }
        var phases = Command.PhaseKeys(on: string("on"), holdMilliseconds: milliseconds("hold_ms"), tapMilliseconds: milliseconds("tap_ms"),
                                       cooldownMilliseconds: milliseconds("cooldown_ms"))
        if let e = t.entry("run_on_release") {
            // Empty is fine: the release then only fires the command event (a client's cue).
            if let list = stringArray(e.value), list.first?.isEmpty != true {
                phases.runOnRelease = list
            } else {
                problem(e.line, "run_on_release: expected an array of strings: the program and its arguments (no shell), run at the release")
                ok = false
            }
        }
        // A field of the wrong type was reported above: not "needs 'id'" as well.
        guard ok else { return nil }
        let command = CommandFields.command(
            id: id, title: title, keys: keys, scope: scope, repeat: rep, priorityOverTextInput: priority,
            run: run, group: group, discoverabilityTitle: discoverabilityTitle, action: action, phases: phases,
            localize: localize, mirror: mirror, devices: devices,
            location: SourceLocation(path: path, line: t.line)) { field, message in
            problem(t.entry(field)?.line ?? t.line, message)
        }
        guard actionKnown, let command else { return nil }
        return command
    }
}
