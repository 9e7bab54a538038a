public import KbdTOML
public import KbdJSON
import KbdCore
public import KbdGeometry
extension TOMLValue {
    /// The same value as JSON (tables keep their key order).
    public var jsonValue: JSONValue {
        switch self {
        case .string(let s): return .string(s)
        case .integer(let i): return .number(Double(i))
        case .float(let d): return .number(d)
        case .boolean(let b): return .bool(b)
        case .array(let a, _): return .array(a.map(\.jsonValue))
        case .table(let t):
            var o = JSONObject()
            for e in t.entries { _ = o.updateValue(e.value.jsonValue, forKey: e.key) }
            return .object(o)
        }
    }
}

extension Config {
    /// The `[geometry]` section as a geometry state (the scenario keys without
    /// `steps`; the software keyboard defaults to docked, 398 points high), or nil
    /// when the config has none. Errors name the config line and the key path.
    public func geometryState() throws(ConfigError) -> GeometryState? {
        guard let table = geometry else { return nil }
        do {
            return try GeometryState(json: TOMLValue.table(table).jsonValue, defaultKeyboard: .docked(height: 398))
        } catch {
            throw ConfigError(problems: [.init(location: SourceLocation(path: path, line: table.line), message: "geometry.\(error.description)")])
        }
    }
}
