public import KbdJSON
import KbdPipeline
/// A control-socket request: one JSON object per line with a `request` field.
///
///     {"request":"subscribe","events":["attach","detach","presence","chord","command","geometry"]}
///     {"request":"set_scopes","scopes":["editor"]}
///     {"request":"set_text_input","active":true}
///     {"request":"list_commands"}
///     {"request":"list_devices"}
///     {"request":"reload"}
///     {"request":"ping"}
public enum ControlRequest: Sendable, Equatable {
    case subscribe(Set<String>)
    case setScopes([String])
    case setTextInput(Bool)
    case listCommands
    case listDevices
    case reload
    case ping

    /// Event kinds a client may subscribe to; `key` (typed text) needs the daemon's
    /// `--allow-key-events` as well.
    public static let eventKinds: Set<String> = Set(PipelineEvent.Kind.allCases.map(\.rawValue))

    /// What `watch` subscribes to by default: every kind but `key` (typed text).
    public static let defaultSubscription: [String] = PipelineEvent.Kind.allCases.filter { $0 != .key }.map(\.rawValue)

    /// Parses one request line; the error says what was expected.
    public static func parse(_ line: String) throws(ControlRequestError) -> ControlRequest {
        let value: JSONValue
        do { value = try JSONValue.parse(line, maximumDepth: 8) } catch {
            throw ControlRequestError(message: "invalid JSON: \(error.description)")
        }
        guard case .object(let o) = value else { throw ControlRequestError(message: "expected a JSON object with a \"request\" field") }
        guard let name = o["request"]?.stringValue else { throw ControlRequestError(message: "expected a \"request\" field with a string") }
        func strings(_ key: String) throws(ControlRequestError) -> [String] {
            guard case .array(let a)? = o[key] else { throw ControlRequestError(message: "\(name): expected \"\(key)\" as an array of strings") }
            var out: [String] = []
            for v in a {
                guard let s = v.stringValue else { throw ControlRequestError(message: "\(name): expected \"\(key)\" as an array of strings") }
                out.append(s)
            }
            return out
        }
        switch name {
        case "subscribe":
            let events = try strings("events")
            let unknown = events.filter { !eventKinds.contains($0) }
            guard unknown.isEmpty else {
                throw ControlRequestError(message: "subscribe: unknown event kind '\(unknown[0])'; expected some of \(eventKinds.sorted().joined(separator: ", "))")
            }
            return .subscribe(Set(events))
        case "set_scopes": return .setScopes(try strings("scopes"))
        case "set_text_input":
            guard case .bool(let b)? = o["active"] else { throw ControlRequestError(message: "set_text_input: expected \"active\": true or false") }
            return .setTextInput(b)
        case "list_commands": return .listCommands
        case "list_devices": return .listDevices
        case "reload": return .reload
        case "ping": return .ping
        default:
            throw ControlRequestError(message: "unknown request '\(name)'; expected subscribe, set_scopes, set_text_input, list_commands, list_devices, reload or ping")
        }
    }
}

public struct ControlRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Reply lines of the control socket: `{"reply":NAME,"ok":BOOL,...fields in key order}`,
/// one line each (strings a client sent come back escaped, never as a line break).
public enum ControlReply {
    public static func line(_ name: String, _ fields: [String: JSONValue], ok: Bool = true) -> String {
        var o = JSONObject([("reply", .string(name)), ("ok", .bool(ok))])
        for key in fields.keys.sorted() { _ = o.updateValue(fields[key]!, forKey: key) }
        return JSONValue.object(o).serialized()
    }
}
