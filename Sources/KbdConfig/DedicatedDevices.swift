import KbdCore
import KbdKeymap
import KbdTOML

extension ConfigLoader {
    static let deviceKeys = ["match", "grab", "presence", "keymap"]

    /// `[[device]]` tables: `match` (a vendor:product id or a name glob, or a list of them),
    /// `grab` and `presence` (true or false), and `[device.keymap]` (the keys of `[keymap]`).
    /// Every problem is reported with its line; the keymaps' names are checked as `[keymap]`'s
    /// are (`keymapNameProblems`), their warnings go to `warnings`.
    static func dedicatedDevices(_ root: TOMLTable, path: String, problem: (Int, String) -> Void,
                                 warnings: inout [ConfigError.Problem]) -> [(device: DedicatedDevice, keymap: KeymapNames?)] {
        guard let entry = root.entry("device") else { return [] }
        guard case .array(let elements, _) = entry.value else {
            problem(entry.line, "device: expected [[device]] tables, one per keyboard")
            return []
        }
        var out: [(device: DedicatedDevice, keymap: KeymapNames?)] = []
        for element in elements {
            guard case .table(let t) = element else {
                problem(entry.line, "device: expected [[device]] tables")
                continue
            }
            let keymap = deviceKeymap(t, path: path, problem: problem, warnings: &warnings)
            if let d = dedicatedDevice(t, path: path, problem: problem), keymap.ok { out.append((d, keymap.names)) }
        }
        return out
    }

    /// `[device.keymap]` of one `[[device]]` (nil names: it has none); not ok when it is not valid.
    private static func deviceKeymap(_ t: TOMLTable, path: String, problem: (Int, String) -> Void,
                                     warnings: inout [ConfigError.Problem]) -> (ok: Bool, names: KeymapNames?) {
        guard let e = t.entry("keymap") else { return (true, nil) }
        guard case .table(let k) = e.value else {
            problem(e.line, "device.keymap: expected a table ([device.keymap]) with the keys of [keymap]: \(listed(keymapKeys.map(\.name)))")
            return (false, nil)
        }
        var draft = ConfigDraft()
        var ok = true
        for entry in k.entries {
            guard let key = keymapKeys.first(where: { $0.name == entry.key }) else {
                let names = keymapKeys.map(\.name)
                problem(entry.line, "unknown key 'device.keymap.\(entry.key)'\(hint(entry.key, names)); expected \(listed(names))")
                ok = false
                continue
            }
            if let message = key.read(entry.value, entry.line, path, &draft) {
                problem(entry.line, "device.\(message)")
                ok = false
            }
        }
        guard ok else { return (false, nil) }
        let found = keymapNameProblems(draft.keymap, lines: draft.keymapLines, sectionLine: e.line, prefix: "device.keymap", path: path)
        for p in found.errors { problem(p.location.line, p.message) }
        warnings += found.warnings
        return (found.errors.isEmpty, draft.keymap)
    }

    private static func dedicatedDevice(_ t: TOMLTable, path: String, problem: (Int, String) -> Void) -> DedicatedDevice? {
        var ok = true
        for e in t.entries where !deviceKeys.contains(e.key) {
            problem(e.line, "unknown key '\(e.key)' in [[device]]\(hint(e.key, deviceKeys)); expected one of \(deviceKeys.joined(separator: ", "))")
            ok = false
        }
        func bool(_ key: String) -> Bool {
            guard let e = t.entry(key) else { return false }
            guard case .boolean(let b) = e.value else {
                problem(e.line, "\(key): expected true or false, found \(e.value.kindDescription)")
                ok = false
                return false
            }
            return b
        }
        var match: [DevicePattern] = []
        if let e = t.entry("match") {
            let texts: [String]? = if case .string(let s) = e.value { [s] } else { stringArray(e.value) }
            if let texts, !texts.isEmpty {
                for text in texts {
                    do { match.append(try DevicePattern(parsing: text)) } catch {
                        problem(e.line, "match: \(error.message)")
                        ok = false
                    }
                }
            } else {
                problem(e.line, "match: expected a vendor:product id in hex (\"1234:5678\") or a device name glob (\"*Macro Pad*\"), or a list of them; 'kbd-commandd devices' lists both")
                ok = false
            }
        } else {
            problem(t.line, "[[device]] needs 'match': a vendor:product id (\"1234:5678\") or a device name glob; 'kbd-commandd devices' lists both")
            ok = false
        }
        let grab = bool("grab"), presence = bool("presence")
        return ok ? DedicatedDevice(match: match, grab: grab, presence: presence, path: path, line: t.line) : nil
    }

    /// The names of a `[keymap]` (or `[device.keymap]`) checked together against the rules'
    /// list (evdev.lst), with the nearest ones, and judged by libxkbcommon: a name it compiles
    /// is a warning, not an error. `lines` has each key's line, `sectionLine` the table's.
    static func keymapNameProblems(_ keymap: KeymapNames, lines: [String: Int], sectionLine: Int, prefix: String,
                                   path: String) -> (errors: [ConfigError.Problem], warnings: [ConfigError.Problem]) {
        guard let list = XkbRulesList.load(rules: keymap.rules) else { return ([], []) }
        let found = list.problems(keymap)
        let compiled = found.isEmpty ? nil : (try? XkbContext()).flatMap { try? XkbKeymap(context: $0, names: keymap) }
        let judged = XkbRulesList.judge(found, compiled: compiled)
        func problem(_ field: String, _ message: String) -> ConfigError.Problem {
            ConfigError.Problem(location: SourceLocation(path: path, line: lines[field] ?? sectionLine), message: "\(prefix).\(field): \(message)")
        }
        return (judged.errors.map { problem($0.field, $0.message) }, judged.warnings.map { problem($0.field, $0.warning) })
    }
}
