public import KbdJSON
public import KbdCommands
// The wire, in one place: typed requests, replies and events, each of which encodes and
// decodes itself. The service, the agent, the CLI, the bench and the fuzz targets all use
// these; nothing else writes or reads a control line by hand.

/// The control protocol's version, in the `subscribe` reply's `"protocol"` field. A change
/// a client could notice (a field removed or retyped, a meaning changed) bumps it; added
/// requests, replies, events and fields do not.
public let controlProtocolVersion = 2

/// A control-socket request: one JSON object per line with a `request` field.
///
///     {"request":"subscribe","events":["attach","detach","presence","chord","command","geometry"]}
///     {"request":"set_scopes","scopes":["editor"]}
///     {"request":"set_text_input","active":true}
///     {"request":"list_commands"}
///     {"request":"list_devices"}
///     {"request":"reload"}
///     {"request":"ping"}
///     {"request":"set_keymap","layout":"us,de","variant":",nodeadkeys","options":"ctrl:nocaps","group":1}
///     {"request":"set_keymap"}                       (withdrawn: the service's own keymap again)
///     {"request":"set_sticky_keys","enabled":true}
///     {"request":"set_sticky_keys"}                  (withdrawn: `[accessibility] sticky_keys` again)
///     {"request":"run_command","id":"save","table":"system"}
public enum ControlRequest: Sendable, Equatable {
    case subscribe(Set<ControlEventKind>)
    case setScopes([String])
    case setTextInput(Bool)
    case listCommands
    case listDevices
    case reload
    case ping
    /// A user's own table (the session agent's): replaces what the client registered before.
    case register(commands: [CommandSpec], sequenceTimeoutMilliseconds: Int?)
    /// The session's keymap and active layout, as the desktop has them (the session agent
    /// follows sway, Hyprland, GNOME); nil withdraws it.
    case setKeymap(Keymap?)
    /// The desktop's own sticky-keys setting (GNOME, KDE); nil withdraws it.
    case setStickyKeys(Bool?)
    /// Run a command as if its chord had been typed on a keyboard of the caller's seat (the
    /// bar's buttons): a system command through the service's runner, a user command (the
    /// caller's own uid's table) as the `command` event to the agent that registered it.
    case runCommand(id: String, table: CommandTableKind)

    /// A desktop's keymap: xkb names and the active layout (group) index. `variant` and
    /// `options` nil: the desktop does not say (sway's IPC names layouts only); the service
    /// then uses no variant and its own options.
    public struct Keymap: Sendable, Equatable, Hashable {
        public var layout: String
        public var variant: String?
        public var options: String?
        public var group: Int
        public init(layout: String, variant: String? = nil, options: String? = nil, group: Int = 0) {
            self.layout = layout
            self.variant = variant
            self.options = options
            self.group = group
        }

        /// At most this many layouts (xkb's XKB_MAX_GROUPS).
        public static let maxLayouts = 4

        /// The request's fields, in order.
        var fields: [(String, JSONValue)] {
            var out: [(String, JSONValue)] = [("layout", .string(layout))]
            if let variant { out.append(("variant", .string(variant))) }
            if let options { out.append(("options", .string(options))) }
            out.append(("group", .number(Double(group))))
            return out
        }

        /// Reads the fields of `o` (a request or a reply); the message says what is wrong.
        static func read(_ o: JSONObject, _ what: String) throws(ControlRequestError) -> Keymap {
            func name(_ key: String, extra: String, required: Bool) throws(ControlRequestError) -> String? {
                guard let v = o[key] else {
                    if required { throw ControlRequestError(message: "\(what): expected \"\(key)\" as a string") }
                    return nil
                }
                guard let s = v.stringValue, s.utf8.count <= 512,
                      s.unicodeScalars.allSatisfy({ $0.isASCII && (("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "_-,\(extra)".unicodeScalars.contains($0)) })
                else { throw ControlRequestError(message: "\(what): expected \"\(key)\" as xkb names (letters, digits, _ - and commas\(extra.isEmpty ? "" : ", \(extra)"), at most 512 bytes)") }
                return s
            }
            let layout = try name("layout", extra: "", required: true)!
            let count = layout.split(separator: ",", omittingEmptySubsequences: false).count
            guard !layout.isEmpty, count <= maxLayouts else {
                throw ControlRequestError(message: "\(what): expected 1 to \(maxLayouts) layouts in \"layout\"")
            }
            let variant = try name("variant", extra: "", required: false)
            if let variant, variant.split(separator: ",", omittingEmptySubsequences: false).count > count {
                throw ControlRequestError(message: "\(what): more variants than layouts")
            }
            let options = try name("options", extra: ":+", required: false)
            var group = 0
            if let g = o["group"] {
                guard case .number(let n) = g, n >= 0, n < Double(count), n == n.rounded() else {
                    throw ControlRequestError(message: "\(what): expected \"group\" as a layout index from 0 to \(count - 1)")
                }
                group = Int(n)
            }
            return Keymap(layout: layout, variant: variant, options: options, group: group)
        }
    }

    /// One command of a registered table, as the agent sends it (no `run`: the agent runs it).
    public struct CommandSpec: Sendable, Equatable {
        public var id: String
        public var title: String?
        public var keys: String
        public var scope: String?
        public var `repeat`: Bool
        public var priorityOverTextInput: Bool
        /// The HUD's and the bar's group (`"Edit"`); nil: "Other".
        public var group: String?
        /// The HUD's title; nil: `title`.
        public var discoverabilityTitle: String?
        /// `"hud"`: firing it toggles the HUD (the service does it; nothing is sent to the agent).
        public var action: Command.Action
        /// The key phases (issue 36): `on`, `hold_ms`, `tap_ms`, `cooldown_ms`, `run_on_release`
        /// (an array; the service runs none of a user's programs, so agents send it empty).
        public var phases: Command.PhaseKeys
        /// The command's own properties (issue 37): `localize` (default true), `mirror`, and
        /// `devices` (vendor:product ids or name globs, as the config writes them; nil: every keyboard).
        public var localize: Bool
        public var mirror: Bool
        public var devices: [String]?
        public init(id: String, title: String? = nil, keys: String, scope: String? = nil, repeat: Bool = false, priorityOverTextInput: Bool = false,
                    group: String? = nil, discoverabilityTitle: String? = nil, action: Command.Action = .run,
                    phases: Command.PhaseKeys = Command.PhaseKeys(), localize: Bool = true, mirror: Bool = false, devices: [String]? = nil) {
            self.phases = phases
            self.localize = localize
            self.mirror = mirror
            self.devices = devices
            self.id = id
            self.title = title
            self.keys = keys
            self.scope = scope
            self.repeat = `repeat`
            self.priorityOverTextInput = priorityOverTextInput
            self.group = group
            self.discoverabilityTitle = discoverabilityTitle
            self.action = action
        }

        /// `{"id","title"?,"keys","scope"?,"repeat"?,"priority_over_text_input"?,"group"?,"discoverability_title"?,"action"?,`
        /// the key phases' keys, `"localize"?,"mirror"?,"devices"?}`: false flags (`localize`: a true one),
        /// absent strings and the default action left out.
        public var jsonValue: JSONValue {
            var o = JSONObject([("id", .string(id))])
            if let title { _ = o.updateValue(.string(title), forKey: "title") }
            _ = o.updateValue(.string(keys), forKey: "keys")
            if let scope { _ = o.updateValue(.string(scope), forKey: "scope") }
            if `repeat` { _ = o.updateValue(.bool(true), forKey: "repeat") }
            if priorityOverTextInput { _ = o.updateValue(.bool(true), forKey: "priority_over_text_input") }
            if let group { _ = o.updateValue(.string(group), forKey: "group") }
            if let discoverabilityTitle { _ = o.updateValue(.string(discoverabilityTitle), forKey: "discoverability_title") }
            if action != .run { _ = o.updateValue(.string(action.rawValue), forKey: "action") }
            if let on = phases.on { _ = o.updateValue(.string(on), forKey: "on") }
            if let n = phases.holdMilliseconds { _ = o.updateValue(.number(Double(n)), forKey: "hold_ms") }
            if let n = phases.tapMilliseconds { _ = o.updateValue(.number(Double(n)), forKey: "tap_ms") }
            if let n = phases.cooldownMilliseconds { _ = o.updateValue(.number(Double(n)), forKey: "cooldown_ms") }
            if let argv = phases.runOnRelease { _ = o.updateValue(.array(argv.map { .string($0) }), forKey: "run_on_release") }
            if !localize { _ = o.updateValue(.bool(false), forKey: "localize") }
            if mirror { _ = o.updateValue(.bool(true), forKey: "mirror") }
            if let devices { _ = o.updateValue(.array(devices.map { .string($0) }), forKey: "devices") }
            return .object(o)
        }
    }

    /// At most this many active scopes (a responder chain, most specific first).
    public static let maxScopes = 64

    /// At most this many commands in one registered table.
    public static let maxRegisteredCommands = 1000

    /// Event kinds a client may subscribe to; `key` (typed text) needs the daemon's
    /// `--allow-key-events` as well.
    public static let eventKinds: Set<String> = Set(ControlEventKind.allCases.map(\.rawValue))

    /// What `watch` subscribes to by default: every kind but `key` (typed text) and the
    /// bar's `hud` and `toolbar` (ask for them with `--events`).
    public static let defaultSubscription: Set<ControlEventKind> = Set(ControlEventKind.allCases.filter { ![.key, .hud, .toolbar].contains($0) })

    /// The request's name, as its `request` field says it.
    public var name: String {
        switch self {
        case .subscribe: return "subscribe"
        case .setScopes: return "set_scopes"
        case .setTextInput: return "set_text_input"
        case .listCommands: return "list_commands"
        case .listDevices: return "list_devices"
        case .reload: return "reload"
        case .ping: return "ping"
        case .register: return "register"
        case .setKeymap: return "set_keymap"
        case .setStickyKeys: return "set_sticky_keys"
        case .runCommand: return "run_command"
        }
    }

    /// The request as one line (without the newline), as `parse` reads it back.
    public var line: String {
        var o = JSONObject([("request", .string(name))])
        switch self {
        case .subscribe(let kinds):
            _ = o.updateValue(.array(kinds.map(\.rawValue).sorted().map { .string($0) }), forKey: "events")
        case .setScopes(let scopes):
            _ = o.updateValue(.array(scopes.map { .string($0) }), forKey: "scopes")
        case .setTextInput(let active):
            _ = o.updateValue(.bool(active), forKey: "active")
        case .listCommands, .listDevices, .reload, .ping:
            break
        case .register(let commands, let timeout):
            _ = o.updateValue(.array(commands.map(\.jsonValue)), forKey: "commands")
            if let timeout { _ = o.updateValue(.number(Double(timeout)), forKey: "sequence_timeout_ms") }
        case .setKeymap(let keymap):
            for (key, value) in keymap?.fields ?? [] { _ = o.updateValue(value, forKey: key) }
        case .setStickyKeys(let enabled):
            if let enabled { _ = o.updateValue(.bool(enabled), forKey: "enabled") }
        case .runCommand(let id, let table):
            _ = o.updateValue(.string(id), forKey: "id")
            _ = o.updateValue(.string(table.rawValue), forKey: "table")
        }
        return JSONValue.object(o).serialized()
    }

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
            var kinds: Set<ControlEventKind> = []
            for event in try strings("events") {
                guard let kind = ControlEventKind(rawValue: event) else {
                    throw ControlRequestError(message: "subscribe: unknown event kind '\(event)'; expected some of \(eventKinds.sorted().joined(separator: ", "))")
                }
                kinds.insert(kind)
            }
            return .subscribe(kinds)
        case "set_scopes":
            let scopes = try strings("scopes")
            guard scopes.count <= maxScopes else {
                throw ControlRequestError(message: "set_scopes: \(scopes.count) scopes; a responder chain has at most \(maxScopes)")
            }
            return .setScopes(scopes)
        case "set_text_input":
            guard case .bool(let b)? = o["active"] else { throw ControlRequestError(message: "set_text_input: expected \"active\": true or false") }
            return .setTextInput(b)
        case "list_commands": return .listCommands
        case "list_devices": return .listDevices
        case "reload": return .reload
        case "ping": return .ping
        case "register":
            guard case .array(let items)? = o["commands"] else { throw ControlRequestError(message: "register: expected \"commands\" as an array of objects") }
            guard items.count <= maxRegisteredCommands else {
                throw ControlRequestError(message: "register: \(items.count) commands; at most \(maxRegisteredCommands) may be registered")
            }
            var specs: [CommandSpec] = []
            for (i, item) in items.enumerated() {
                guard case .object(let c) = item, let id = c["id"]?.stringValue, let keys = c["keys"]?.stringValue else {
                    throw ControlRequestError(message: "register: commands[\(i)]: expected an object with \"id\" and \"keys\" strings")
                }
                func flag(_ key: String, default value: Bool = false) throws(ControlRequestError) -> Bool {
                    switch c[key] {
                    case nil: return value
                    case .bool(let b)?: return b
                    default: throw ControlRequestError(message: "register: commands[\(i)].\(key): expected true or false")
                    }
                }
                func text(_ key: String) throws(ControlRequestError) -> String? {
                    switch c[key] {
                    case nil: return nil
                    case .string(let s)?: return s
                    default: throw ControlRequestError(message: "register: commands[\(i)].\(key): expected a string")
                    }
                }
                var action = Command.Action.run
                if let name = try text("action") {
                    guard let a = Command.Action(rawValue: name) else {
                        throw ControlRequestError(message: "register: commands[\(i)].action: expected \(Command.Action.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")), not \(JSONValue.quoted(name))")
                    }
                    action = a
                }
                specs.append(CommandSpec(id: id, title: c["title"]?.stringValue, keys: keys, scope: c["scope"]?.stringValue,
                                         repeat: try flag("repeat"), priorityOverTextInput: try flag("priority_over_text_input"),
                                         group: try text("group"), discoverabilityTitle: try text("discoverability_title"), action: action,
                                         phases: try phaseKeys(c, "register: commands[\(i)]"),
                                         localize: try flag("localize", default: true), mirror: try flag("mirror"),
                                         devices: try devicePatterns(c, "register: commands[\(i)]")))
            }
            var timeout: Int?
            if let t = o["sequence_timeout_ms"] {
                guard case .number(let n) = t, n >= 1, n <= 60000, n == n.rounded() else {
                    throw ControlRequestError(message: "register: expected \"sequence_timeout_ms\" as a whole number from 1 to 60000")
                }
                timeout = Int(n)
            }
            return .register(commands: specs, sequenceTimeoutMilliseconds: timeout)
        case "set_keymap":
            if o["layout"] == nil {
                guard o.count == 1 else { throw ControlRequestError(message: "set_keymap: expected \"layout\" (or no field at all, to withdraw the keymap)") }
                return .setKeymap(nil)
            }
            return .setKeymap(try Keymap.read(o, "set_keymap"))
        case "set_sticky_keys":
            switch o["enabled"] {
            case nil: return .setStickyKeys(nil)
            case .bool(let b)?: return .setStickyKeys(b)
            default: throw ControlRequestError(message: "set_sticky_keys: expected \"enabled\": true or false (or no field, to withdraw it)")
            }
        case "run_command":
            guard let id = o["id"]?.stringValue else { throw ControlRequestError(message: "run_command: expected \"id\" as a string") }
            guard let name = o["table"]?.stringValue, let table = CommandTableKind(rawValue: name) else {
                throw ControlRequestError(message: "run_command: expected \"table\": \"system\" or \"user\"")
            }
            return .runCommand(id: id, table: table)
        default:
            throw ControlRequestError(message: "unknown request '\(name)'; expected subscribe, set_scopes, set_text_input, list_commands, list_devices, reload, register, set_keymap, set_sticky_keys, run_command or ping")
        }
    }
}

/// The key-phase keys of a registered command's object; what they must be is checked with a
/// config's rules (CommandFields), here only their types.
private func phaseKeys(_ c: JSONObject, _ at: String) throws(ControlRequestError) -> Command.PhaseKeys {
    func milliseconds(_ key: String) throws(ControlRequestError) -> Int? {
        guard let v = c[key] else { return nil }
        guard case .number(let n) = v, n == n.rounded(), abs(n) <= 1e9 else {
            throw ControlRequestError(message: "\(at).\(key): expected a whole number of milliseconds")
        }
        return Int(n)
    }
    var keys = Command.PhaseKeys(holdMilliseconds: try milliseconds("hold_ms"), tapMilliseconds: try milliseconds("tap_ms"),
                                 cooldownMilliseconds: try milliseconds("cooldown_ms"))
    if let v = c["on"] {
        guard case .string(let on) = v else { throw ControlRequestError(message: "\(at).on: expected \"press\" or \"release\"") }
        keys.on = on
    }
    if let v = c["run_on_release"] {
        guard case .array(let items) = v, items.count <= 256 else {
            throw ControlRequestError(message: "\(at).run_on_release: expected an array of strings (agents send it empty: they keep the programs)")
        }
        var argv: [String] = []
        for item in items {
            guard case .string(let s) = item else { throw ControlRequestError(message: "\(at).run_on_release: expected an array of strings") }
            argv.append(s)
        }
        keys.runOnRelease = argv
    }
    return keys
}

/// A registered command's `devices`: their type here (an array of at most 64 strings), what
/// they must be with a config's rules (CommandFields).
private func devicePatterns(_ c: JSONObject, _ at: String) throws(ControlRequestError) -> [String]? {
    guard let v = c["devices"] else { return nil }
    guard case .array(let items) = v, items.count <= 64 else {
        throw ControlRequestError(message: "\(at).devices: expected an array of at most 64 strings: vendor:product ids in hex or device name globs")
    }
    var out: [String] = []
    for item in items {
        guard case .string(let s) = item else { throw ControlRequestError(message: "\(at).devices: expected an array of strings") }
        out.append(s)
    }
    return out
}

/// Which table a command is in: the service's own (`system`, from the config) or the
/// caller's uid's registered one (`user`, an agent's).
public enum CommandTableKind: String, Sendable, Equatable, Hashable, CaseIterable {
    case system, user
}

public struct ControlRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

