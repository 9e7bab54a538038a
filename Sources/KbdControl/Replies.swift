import KbdJSON
public import KbdCommands
public import KbdGeometry

/// A reply line of the control socket: `{"reply":NAME,"ok":BOOL,...fields in key order}`,
/// one line each (strings a client sent come back escaped, never as a line break). Each
/// case encodes itself (`line`) and decodes itself (`parse`); `parse(line)` of every reply
/// the service sends gives back the same reply.
public enum ControlReply: Sendable, Equatable {
    /// `subscribe`: the kinds now subscribed, and the state now, so a client that connects
    /// (or reconnects) needs no event to learn it. `protocol` is `controlProtocolVersion`.
    case subscribe(Subscribed)
    case setScopes([String])
    case setTextInput(Bool)
    case listCommands(CommandsListing)
    case listDevices([ListedDevice])
    /// `reload`: the commands now in use; `error` when the new config was refused (ok false).
    case reload(commands: Int, error: String?)
    /// `register`: how many commands the user's table has, and which of them the service's
    /// own table shadows (same chord in the same scope: those never fire).
    case register(commands: Int, shadowed: [String])
    case ping
    /// `set_keymap`: the keymap this client now claims (nil: withdrawn), as `set_keymap` sent it.
    case setKeymap(ControlRequest.Keymap?)
    /// `set_sticky_keys`: what this client now claims (nil: withdrawn).
    case setStickyKeys(Bool?)
    /// `run_command`: the command ran (a system command) or was sent to its agent (a user's).
    case runCommand
    /// A refused request: `{"reply":NAME,"ok":false,"error":MESSAGE}`. NAME is the request's
    /// name, or `error` when the line was not a request at all or the client may not ask it.
    case refused(name: String, message: String)

    public struct Subscribed: Sendable, Equatable {
        public var events: Set<ControlEventKind>
        public var hardwareKeyboard: Bool
        public var reason: String
        /// When the service started, in seconds on the clock of event times (`watch` prints
        /// times relative to it).
        public var started: Double?
        /// The layout guide now, when the service's config has a `[geometry]`.
        public var geometry: GeometryReport?
        public var protocolVersion: Int

        public init(events: Set<ControlEventKind>, hardwareKeyboard: Bool, reason: String, started: Double? = nil, geometry: GeometryReport? = nil,
                    protocolVersion: Int = controlProtocolVersion) {
            self.events = events
            self.hardwareKeyboard = hardwareKeyboard
            self.reason = reason
            self.started = started
            self.geometry = geometry
            self.protocolVersion = protocolVersion
        }
    }

    /// One command of a listing: `{"scope","id","title","chord","repeat"}`, and when the
    /// command has them `"group"`, `"discoverability_title"` and `"action":"hud"`.
    public struct ListedCommand: Sendable, Equatable {
        public var scope: String
        public var id: String
        public var title: String
        public var chord: String
        public var `repeat`: Bool
        public var group: String?
        public var discoverabilityTitle: String?
        public var action: Command.Action

        public init(scope: String, id: String, title: String, chord: String, repeat: Bool, group: String? = nil,
                    discoverabilityTitle: String? = nil, action: Command.Action = .run) {
            self.scope = scope
            self.id = id
            self.title = title
            self.chord = chord
            self.repeat = `repeat`
            self.group = group
            self.discoverabilityTitle = discoverabilityTitle
            self.action = action
        }

        var jsonValue: JSONValue {
            var o = JSONObject([("scope", .string(scope)), ("id", .string(id)), ("title", .string(title)),
                                ("chord", .string(chord)), ("repeat", .bool(`repeat`))])
            if let group { _ = o.updateValue(.string(group), forKey: "group") }
            if let discoverabilityTitle { _ = o.updateValue(.string(discoverabilityTitle), forKey: "discoverability_title") }
            if action != .run { _ = o.updateValue(.string(action.rawValue), forKey: "action") }
            return .object(o)
        }

        static func decode(_ node: JSONNode) throws(JSONDecodingError) -> ListedCommand {
            let o = try node.object()
            var action = Command.Action.run
            if let a = o["action"] {
                let name = try a.string()
                guard let known = Command.Action(rawValue: name) else { throw a.error("unknown action '\(name)'") }
                action = known
            }
            return ListedCommand(scope: try o.required("scope").string(), id: try o.required("id").string(),
                                 title: try o.required("title").string(), chord: try o.required("chord").string(),
                                 repeat: try o.required("repeat").bool(), group: try o["group"]?.string(),
                                 discoverabilityTitle: try o["discoverability_title"]?.string(), action: action)
        }
    }

    /// `list_commands`: the service's table in the responder-chain order now active, with
    /// `scopes` (global last) and `text_input`; with a registered table, also the user's own
    /// (`user_commands`, `user_scopes`, `user_text_input`).
    public struct CommandsListing: Sendable, Equatable {
        public var commands: [ListedCommand]
        public var scopes: [String]
        public var textInput: Bool
        public var user: User?

        public struct User: Sendable, Equatable {
            public var commands: [ListedCommand]
            public var scopes: [String]
            public var textInput: Bool
            public init(commands: [ListedCommand], scopes: [String], textInput: Bool) {
                self.commands = commands
                self.scopes = scopes
                self.textInput = textInput
            }
        }

        public init(commands: [ListedCommand], scopes: [String], textInput: Bool, user: User? = nil) {
            self.commands = commands
            self.scopes = scopes
            self.textInput = textInput
            self.user = user
        }
    }

    /// The reply's name (its `reply` field).
    public var name: String {
        switch self {
        case .subscribe: return "subscribe"
        case .setScopes: return "set_scopes"
        case .setTextInput: return "set_text_input"
        case .listCommands: return "list_commands"
        case .listDevices: return "list_devices"
        case .reload: return "reload"
        case .register: return "register"
        case .ping: return "ping"
        case .setKeymap: return "set_keymap"
        case .setStickyKeys: return "set_sticky_keys"
        case .runCommand: return "run_command"
        case .refused(let name, _): return name
        }
    }

    /// Whether the request was done (the `ok` field).
    public var ok: Bool {
        switch self {
        case .reload(_, let error): return error == nil
        case .refused: return false
        default: return true
        }
    }

    /// The refusal's message, or the refused reload's reason.
    public var error: String? {
        switch self {
        case .refused(_, let message): return message
        case .reload(_, let error): return error
        default: return nil
        }
    }

    /// The reply as one line (without the newline).
    public var line: String {
        var fields: [String: JSONValue] = [:]
        func strings(_ list: [String]) -> JSONValue { .array(list.map { .string($0) }) }
        switch self {
        case .subscribe(let s):
            fields = ["events": strings(s.events.map(\.rawValue).sorted()), "hardware_keyboard": .bool(s.hardwareKeyboard),
                      "reason": .string(s.reason), "protocol": .number(Double(s.protocolVersion))]
            if let geometry = s.geometry { fields["geometry"] = .object(geometry.jsonObject()) }
            if let started = s.started { fields["started"] = .number(started) }
        case .setScopes(let scopes): fields = ["scopes": strings(scopes)]
        case .setTextInput(let active): fields = ["active": .bool(active)]
        case .listCommands(let l):
            fields = ["commands": .array(l.commands.map(\.jsonValue)), "scopes": strings(l.scopes), "text_input": .bool(l.textInput)]
            if let user = l.user {
                fields["user_commands"] = .array(user.commands.map(\.jsonValue))
                fields["user_scopes"] = strings(user.scopes)
                fields["user_text_input"] = .bool(user.textInput)
            }
        case .listDevices(let rows): fields = ["devices": .array(rows.map(\.jsonValue))]
        case .reload(let commands, let error):
            fields = ["commands": .number(Double(commands))]
            if let error { fields["error"] = .string(error) }
        case .register(let commands, let shadowed): fields = ["commands": .number(Double(commands)), "shadowed": strings(shadowed)]
        case .ping, .runCommand: break
        case .setKeymap(let keymap):
            for (key, value) in keymap?.fields ?? [] { fields[key] = value }
        case .setStickyKeys(let enabled):
            if let enabled { fields["enabled"] = .bool(enabled) }
        case .refused(_, let message): fields = ["error": .string(message)]
        }
        var o = JSONObject([("reply", .string(name)), ("ok", .bool(ok))])
        for key in fields.keys.sorted() { _ = o.updateValue(fields[key]!, forKey: key) }
        return JSONValue.object(o).serialized()
    }

    /// Reads a reply line; the error says what was expected.
    public static func parse(_ line: String) throws(ControlRequestError) -> ControlReply {
        let value: JSONValue
        do { value = try JSONValue.parse(line, maximumDepth: 16) } catch {
            throw ControlRequestError(message: "invalid JSON: \(error.description)")
        }
        do {
            return try decode(JSONNode(value))
        } catch {
            throw ControlRequestError(message: error.description)
        }
    }

    static func decode(_ node: JSONNode) throws(JSONDecodingError) -> ControlReply {
        let o = try node.object()
        let name = try o.required("reply").string()
        let ok = try o.required("ok").bool()
        func strings(_ key: String) throws(JSONDecodingError) -> [String] {
            var out: [String] = []
            for item in try o.required(key).array() { out.append(try item.string()) }
            return out
        }
        func commands(_ key: String) throws(JSONDecodingError) -> [ListedCommand] {
            var out: [ListedCommand] = []
            for item in try o.required(key).array() { out.append(try ListedCommand.decode(item)) }
            return out
        }
        if name == "reload" {
            let error = try o["error"]?.string()
            guard ok == (error == nil) else { throw o.error("a reload reply is ok exactly when it has no error") }
            return .reload(commands: try o.required("commands").nonNegativeInteger(), error: error)
        }
        if !ok { return .refused(name: name, message: try o.required("error").string()) }
        switch name {
        case "subscribe":
            var kinds: Set<ControlEventKind> = []
            for event in try strings("events") {
                guard let kind = ControlEventKind(rawValue: event) else { throw o.error("unknown event kind '\(event)'") }
                kinds.insert(kind)
            }
            var geometry: GeometryReport?
            if let node = o["geometry"] { geometry = try GeometryReport.decode(try node.object()) }
            return .subscribe(Subscribed(events: kinds, hardwareKeyboard: try o.required("hardware_keyboard").bool(),
                                         reason: try o.required("reason").string(), started: try o["started"]?.nonNegativeNumber(),
                                         geometry: geometry, protocolVersion: try o.required("protocol").nonNegativeInteger()))
        case "set_scopes": return .setScopes(try strings("scopes"))
        case "set_text_input": return .setTextInput(try o.required("active").bool())
        case "list_commands":
            var user: CommandsListing.User?
            if o["user_commands"] != nil {
                user = CommandsListing.User(commands: try commands("user_commands"), scopes: try strings("user_scopes"),
                                            textInput: try o.required("user_text_input").bool())
            }
            return .listCommands(CommandsListing(commands: try commands("commands"), scopes: try strings("scopes"),
                                                 textInput: try o.required("text_input").bool(), user: user))
        case "list_devices":
            var rows: [ListedDevice] = []
            for item in try o.required("devices").array() { rows.append(try ListedDevice.decode(try item.object())) }
            return .listDevices(rows)
        case "register": return .register(commands: try o.required("commands").nonNegativeInteger(), shadowed: try strings("shadowed"))
        case "ping": return .ping
        case "run_command": return .runCommand
        case "set_keymap":
            guard o["layout"] != nil else { return .setKeymap(nil) }
            do { return .setKeymap(try ControlRequest.Keymap.read(o.object, "set_keymap reply")) } catch { throw o.error(error.message) }
        case "set_sticky_keys": return .setStickyKeys(try o["enabled"]?.bool())
        default: throw o.error("unknown reply '\(name)'")
        }
    }
}
