import KbdCore
import KbdTOML

extension ConfigLoader {
    static let deviceKeys = ["match", "grab", "presence"]

    /// `[[device]]` tables: `match` (a vendor:product id or a name glob, or a list of them),
    /// `grab` and `presence` (true or false). Every problem is reported with its line.
    static func dedicatedDevices(_ root: TOMLTable, problem: (Int, String) -> Void) -> [DedicatedDevice] {
        guard let entry = root.entry("device") else { return [] }
        guard case .array(let elements, _) = entry.value else {
            problem(entry.line, "device: expected [[device]] tables, one per keyboard")
            return []
        }
        var out: [DedicatedDevice] = []
        for element in elements {
            guard case .table(let t) = element else {
                problem(entry.line, "device: expected [[device]] tables")
                continue
            }
            if let d = dedicatedDevice(t, problem: problem) { out.append(d) }
        }
        return out
    }

    private static func dedicatedDevice(_ t: TOMLTable, problem: (Int, String) -> Void) -> DedicatedDevice? {
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
        return ok ? DedicatedDevice(match: match, grab: grab, presence: presence, line: t.line) : nil
    }
}
