import KbdTOML
public import KbdSystem
import KbdCore
import KbdCommands
import KbdKeymap
#if canImport(Glibc)
import Glibc
#endif

/// Which files make up a config: one main file, and optionally a drop-in folder whose
/// `*.toml` files are merged after it in name order (byte order of the names, as `ls`
/// in the C locale and systemd's drop-ins sort them).
///
/// The standard set is `/etc/kbd-commandd/config.toml` plus `/etc/kbd-commandd/config.d/*.toml`;
/// `KBD_COMMANDD_CONFIG_DIR` moves that root (tests, a config kept elsewhere).
public struct ConfigFiles: Sendable, Equatable, CustomStringConvertible {
    /// The main file. It may be missing when the drop-in folder has files.
    public var main: String
    /// The drop-in folder, nil for a single file (`--config FILE`).
    public var dropInDirectory: String?

    public init(main: String, dropInDirectory: String? = nil) {
        self.main = main
        self.dropInDirectory = dropInDirectory
    }

    public static let defaultRoot = "/etc/kbd-commandd"
    /// The variable that replaces `defaultRoot`.
    public static let rootVariable = "KBD_COMMANDD_CONFIG_DIR"

    /// `ROOT/config.toml` and `ROOT/config.d/`, ROOT from `KBD_COMMANDD_CONFIG_DIR` or `/etc/kbd-commandd`.
    public static func standard(environment: [String: String]) -> ConfigFiles {
        var root = environment[rootVariable].flatMap { $0.isEmpty ? nil : $0 } ?? defaultRoot
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        return ConfigFiles(main: root + "/config.toml", dropInDirectory: root + "/config.d")
    }

    /// One file given on the command line: no drop-ins.
    public static func single(_ path: String) -> ConfigFiles { ConfigFiles(main: path) }

    /// The drop-ins present now: `*.toml` in the folder (not hidden, not folders), sorted by name.
    public func dropIns() -> [String] {
        guard let dir = dropInDirectory else { return [] }
        return Directory.entries(dir)
            .filter { !$0.isDirectory && $0.name.hasSuffix(".toml") && !$0.name.hasPrefix(".") }
            .map(\.name)
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map { dir + "/" + $0 }
    }

    /// Every file to read, in merge order: the main file (unless it is missing and drop-ins
    /// exist), then the drop-ins.
    public func paths() -> [String] {
        let extra = dropIns()
        if !extra.isEmpty && access(main, F_OK) != 0 { return extra }
        return [main] + extra
    }

    public var description: String {
        guard let dir = dropInDirectory else { return main }
        return "\(main) (+ \(dir)/*.toml)"
    }
}

extension ConfigLoader {
    /// Loads the main file and the drop-ins and merges them: `[[command]]` tables are added in
    /// file order; a key of `[keymap]`, `[settings]`, `[devices]`, `[osk]`, `[scopes]`, `[text_input]` or `[accessibility]`, or a whole
    /// `[geometry]`, may be set in one file only (a second one is an error naming both places).
    /// Duplicate ids and chord conflicts across files name both file:line. Every problem of
    /// every file is reported in one error.
    public static func load(_ files: ConfigFiles, trust: FileTrust = .any) throws(ConfigError) -> Config {
        let paths = files.paths()
        if paths.count == 1 && files.dropInDirectory == nil { return try load(path: paths[0], trust: trust) }
        var problems: [ConfigError.Problem] = []
        var parts: [(path: String, root: TOMLTable, config: Config?)] = []
        for path in paths {
            do {
                let text = try readText(path: path, trust: trust)
                let root: TOMLTable
                do { root = try TOMLParser.parse(text, path: path) } catch {
                    problems.append(.init(location: SourceLocation(path: path, line: error.line), message: error.message))
                    continue
                }
                do { parts.append((path, root, try interpret(root, path: path))) } catch {
                    problems += error.problems
                    parts.append((path, root, nil))
                }
            } catch {
                problems += error.problems
            }
        }
        // A key set in two files.
        var firstSet: [String: SourceLocation] = [:]
        for part in parts {
            for section in keyedSections + ["scopes"] {
                guard case .table(let t)? = part.root[section] else { continue }
                for e in t.entries {
                    let name = "\(section).\(e.key)"
                    let here = SourceLocation(path: part.path, line: e.line)
                    if let first = firstSet[name] {
                        problems.append(.init(location: here, message: "\(name) is also set at \(first); set it in one file only"))
                    } else {
                        firstSet[name] = here
                    }
                }
            }
            if let e = part.root.entry("geometry") {
                let here = SourceLocation(path: part.path, line: e.line)
                if let first = firstSet["geometry"] {
                    problems.append(.init(location: here, message: "[geometry] is also defined at \(first); define it in one file only"))
                } else {
                    firstSet["geometry"] = here
                }
            }
        }
        // Merge what parsed (a key a drop-in sets replaces the value before: ConfigLoader.keys);
        // conflicts among the commands of every file.
        var merged = ConfigDraft()
        var geometry: TOMLTable?
        var keymapLocation: SourceLocation?
        var hudLocation: SourceLocation?
        var keymapWarnings: [ConfigError.Problem] = []
        var scopes = ScopeMap()
        var commands: [Command] = []
        // [[device]]: every file's, in merge order (the first match wins).
        var dedicated: [DedicatedDevice] = []
        var deviceKeymaps: [KeymapNames?] = []
        for part in parts {
            guard let c = part.config else { continue }
            dedicated += c.devices.dedicated
            deviceKeymaps += c.deviceKeymaps
            keymapLocation = keymapLocation ?? c.keymapLocation
            hudLocation = hudLocation ?? c.hudLocation
            keymapWarnings += c.keymapWarnings
            let file = ConfigDraft(c)
            for key in keys {
                if case .table(let t)? = part.root[key.section], t[key.name] != nil { key.merge(&merged, file) }
            }
            // [scopes]: each app in one file only (checked above).
            for (app, entry) in c.scopes.apps { scopes.apps[app] = entry }
            if let g = c.geometry { geometry = geometry ?? g }
            commands += c.table.commands
        }
        let order = Dictionary(paths.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        func sorted(_ list: [ConfigError.Problem]) -> [ConfigError.Problem] {
            list.sorted { (order[$0.location.path] ?? 0, $0.location.line) < (order[$1.location.path] ?? 0, $1.location.line) }
        }
        do {
            let table = try CommandTable(commands: commands, sequenceTimeoutMilliseconds: merged.timeout)
            if problems.isEmpty {
                var config = Config(path: paths.first ?? files.main, table: table, geometry: geometry, scopes: scopes)
                merged.apply(to: &config)
                config.devices.dedicated = dedicated
                config.deviceKeymaps = deviceKeymaps
                config.files = paths
                config.keymapLocation = keymapLocation
                config.hudLocation = hudLocation
                config.keymapWarnings = keymapWarnings
                return config
            }
        } catch {
            // Conflicts inside one file were reported by that file already.
            let own = Set(problems.map(\.description))
            for c in error.conflicts where !own.contains(c.description) { problems.append(.init(location: c.location, message: c.message)) }
        }
        throw ConfigError(problems: sorted(problems))
    }
}
