public import KbdJSON
public import KbdCommands
public import KbdGeometry

/// An event line as a client reads it: `{"event":KIND,"time":SECONDS,...}`. The service
/// writes events with `EventFormatter.json` (the per-event path, written for speed); this
/// type reads them back, and `line` writes the same fields again, so both ends agree and the
/// fuzz target checks it (every line the service sends decodes to one of these).
public struct ControlEvent: Sendable, Equatable {
    public var time: Double
    public var payload: Payload

    public enum Payload: Sendable, Equatable {
        /// `integration` (internal, external, virtual) and why, on keyboards.
        case attach(device: String, keyboard: Bool, integration: String?, integrationReason: String?)
        case detach(device: String, keyboard: Bool)
        /// Typed text: only with the service's `--allow-key-events`.
        case key(Key)
        case chord(device: String, chord: String)
        /// `phase`: when it fired (issue 36); nil (absent): a press of a command without phases.
        case command(id: String, title: String, scope: String, chord: String, phase: KeyPhase? = nil)
        case presence(hardwareKeyboard: Bool, reason: String)
        /// The layout guide (its fields `layout`, `keyboard_frame`, `windows` beside `event`
        /// and `time`).
        case geometry(GeometryReport)
        case dropped(device: String, count: Int, reason: String)
        /// The active session of `seat` changed hands: `active` says whether the reader's
        /// user now owns it (an agent); `uid` (operators' subscribers only) who does.
        case session(seat: String, active: Bool, uid: UInt32?)
        /// The discoverability HUD shown (with what it shows) or hidden.
        case hud(Hud)
        /// What the shortcuts bar shows.
        case toolbar(Toolbar)
    }

    /// One command as the HUD and the bar show it: `{"table","scope","id","title",
    /// "discoverability_title","chord","shadowed","text_input_filtered"}`. `chord` is the whole
    /// chord or sequence; `shadowed`: the same chord in a more specific scope of the chain wins
    /// (or the system table's, for a user's command); `text_input_filtered`: it would not fire
    /// now because text input is on.
    public struct GroupedCommand: Sendable, Equatable {
        public var table: CommandTableKind
        public var scope: String
        public var id: String
        public var title: String
        /// The title to show: the command's `discoverability_title`, else its `title`.
        public var discoverabilityTitle: String
        public var chord: String
        public var shadowed: Bool
        public var textInputFiltered: Bool

        public init(table: CommandTableKind, scope: String, id: String, title: String, discoverabilityTitle: String? = nil, chord: String,
                    shadowed: Bool = false, textInputFiltered: Bool = false) {
            self.table = table
            self.scope = scope
            self.id = id
            self.title = title
            self.discoverabilityTitle = discoverabilityTitle ?? title
            self.chord = chord
            self.shadowed = shadowed
            self.textInputFiltered = textInputFiltered
        }

        var jsonValue: JSONValue {
            .object(JSONObject([("table", .string(table.rawValue)), ("scope", .string(scope)), ("id", .string(id)), ("title", .string(title)),
                                ("discoverability_title", .string(discoverabilityTitle)), ("chord", .string(chord)),
                                ("shadowed", .bool(shadowed)), ("text_input_filtered", .bool(textInputFiltered))]))
        }

        static func decode(_ node: JSONNode) throws(JSONDecodingError) -> GroupedCommand {
            let o = try node.object()
            let tableNode = try o.required("table")
            guard let table = CommandTableKind(rawValue: try tableNode.string()) else { throw tableNode.error("expected \"system\" or \"user\"") }
            let title = try o.required("title").string()
            return GroupedCommand(table: table, scope: try o.required("scope").string(), id: try o.required("id").string(), title: title,
                                  discoverabilityTitle: try o["discoverability_title"]?.string() ?? title, chord: try o.required("chord").string(),
                                  shadowed: try o["shadowed"]?.bool() ?? false, textInputFiltered: try o["text_input_filtered"]?.bool() ?? false)
        }
    }

    /// A group of commands: `{"title","commands"}`. Commands without a group are in the last
    /// group, titled `Group.other`.
    public struct Group: Sendable, Equatable {
        public static let other = "Other"
        public var title: String
        public var commands: [GroupedCommand]
        public init(title: String, commands: [GroupedCommand]) {
            self.title = title
            self.commands = commands
        }

        var jsonValue: JSONValue {
            .object(JSONObject([("title", .string(title)), ("commands", .array(commands.map(\.jsonValue)))]))
        }

        static func decode(_ node: JSONNode) throws(JSONDecodingError) -> Group {
            let o = try node.object()
            var commands: [GroupedCommand] = []
            for item in try o.required("commands").array() { commands.append(try GroupedCommand.decode(item)) }
            return Group(title: try o.required("title").string(), commands: commands)
        }
    }

    /// A `hud` event. Shown: `{"show":true,"trigger","pending","scopes","text_input","groups"}`
    /// (`pending`: the pending sequence prefix for trigger `sequence`, else null; `scopes`: the
    /// active chain, most specific first, global last). Hidden: `{"show":false,"trigger"}` only.
    public struct Hud: Sendable, Equatable {
        public var show: Bool
        public var trigger: HudTrigger
        public var pending: String?
        public var scopes: [String]
        public var textInput: Bool
        public var groups: [Group]

        public init(show: Bool, trigger: HudTrigger, pending: String? = nil, scopes: [String] = [], textInput: Bool = false, groups: [Group] = []) {
            self.show = show
            self.trigger = trigger
            self.pending = pending
            self.scopes = scopes
            self.textInput = textInput
            self.groups = groups
        }

        /// The HUD hidden (what it hides was shown for `trigger`).
        public static func hidden(_ trigger: HudTrigger) -> Hud { Hud(show: false, trigger: trigger) }

        /// The fields after `event` and `time`, in the wire's order.
        public var fields: [(String, JSONValue)] {
            var out: [(String, JSONValue)] = [("show", .bool(show)), ("trigger", .string(trigger.rawValue))]
            guard show else { return out }
            out += [("pending", pending.map { .string($0) } ?? .null), ("scopes", .array(scopes.map { .string($0) })),
                    ("text_input", .bool(textInput)), ("groups", .array(groups.map(\.jsonValue)))]
            return out
        }
    }

    /// A `toolbar` event: `{"scopes","text_input","groups"}`, what the bar shows as buttons.
    public struct Toolbar: Sendable, Equatable {
        public var scopes: [String]
        public var textInput: Bool
        public var groups: [Group]
        public init(scopes: [String], textInput: Bool, groups: [Group]) {
            self.scopes = scopes
            self.textInput = textInput
            self.groups = groups
        }

        /// The fields after `event` and `time`, in the wire's order.
        public var fields: [(String, JSONValue)] {
            [("scopes", .array(scopes.map { .string($0) })), ("text_input", .bool(textInput)), ("groups", .array(groups.map(\.jsonValue)))]
        }
    }

    public struct Key: Sendable, Equatable {
        public var device: String
        public var code: String
        public var state: String
        public var keysym: String
        public var utf8: String
        public var mods: [String]
        public var layout: Int
        public var text: String?
        public var synthetic: Bool
    }

    public init(time: Double, payload: Payload) {
        self.time = time
        self.payload = payload
    }

    public var kind: ControlEventKind {
        switch payload {
        case .attach: return .attach
        case .detach: return .detach
        case .key: return .key
        case .chord: return .chord
        case .command: return .command
        case .presence: return .presence
        case .geometry: return .geometry
        case .dropped: return .dropped
        case .session: return .session
        case .hud: return .hud
        case .toolbar: return .toolbar
        }
    }

    /// The event as one line (without the newline), fields in the service's order.
    public var line: String {
        var o = JSONObject([("event", .string(kind.rawValue)), ("time", .number(time))])
        func put(_ key: String, _ value: JSONValue) { _ = o.updateValue(value, forKey: key) }
        switch payload {
        case .attach(let device, let keyboard, let integration, let reason):
            put("device", .string(device)); put("keyboard", .bool(keyboard))
            if let integration { put("integration", .string(integration)) }
            if let reason { put("integration_reason", .string(reason)) }
        case .detach(let device, let keyboard):
            put("device", .string(device)); put("keyboard", .bool(keyboard))
        case .key(let k):
            put("device", .string(k.device)); put("code", .string(k.code)); put("state", .string(k.state))
            put("keysym", .string(k.keysym)); put("utf8", .string(k.utf8)); put("mods", .array(k.mods.map { .string($0) }))
            put("layout", .number(Double(k.layout)))
            if let text = k.text { put("text", .string(text)) }
            if k.synthetic { put("synthetic", .bool(true)) }
        case .chord(let device, let chord):
            put("device", .string(device)); put("chord", .string(chord))
        case .command(let id, let title, let scope, let chord, let phase):
            put("id", .string(id)); put("title", .string(title)); put("scope", .string(scope)); put("chord", .string(chord))
            if let phase { put("phase", .string(phase.rawValue)) }
        case .presence(let present, let reason):
            put("hardware_keyboard", .bool(present)); put("reason", .string(reason))
        case .geometry(let report):
            for (key, value) in report.jsonObject() { put(key, value) }
        case .dropped(let device, let count, let reason):
            put("device", .string(device)); put("count", .number(Double(count))); put("reason", .string(reason))
        case .session(let seat, let active, let uid):
            put("seat", .string(seat)); put("active", .bool(active))
            if let uid { put("uid", .number(Double(uid))) }
        case .hud(let hud):
            for (key, value) in hud.fields { put(key, value) }
        case .toolbar(let bar):
            for (key, value) in bar.fields { put(key, value) }
        }
        return JSONValue.object(o).serialized()
    }

    /// Reads an event line; the error says what was expected.
    public static func parse(_ line: String) throws(ControlRequestError) -> ControlEvent {
        let value: JSONValue
        do { value = try JSONValue.parse(line, maximumDepth: 16) } catch {
            throw ControlRequestError(message: "invalid JSON: \(error.description)")
        }
        do { return try decode(JSONNode(value)) } catch { throw ControlRequestError(message: error.description) }
    }

    static func decode(_ node: JSONNode) throws(JSONDecodingError) -> ControlEvent {
        let o = try node.object()
        let name = try o.required("event").string()
        guard let kind = ControlEventKind(rawValue: name) else { throw o.error("unknown event '\(name)'") }
        let time = try o.required("time").nonNegativeNumber()
        func string(_ key: String) throws(JSONDecodingError) -> String { try o.required(key).string() }
        func strings(_ key: String) throws(JSONDecodingError) -> [String] {
            var out: [String] = []
            for item in try o.required(key).array() { out.append(try item.string()) }
            return out
        }
        func groups() throws(JSONDecodingError) -> [Group] {
            var out: [Group] = []
            for item in try o.required("groups").array() { out.append(try Group.decode(item)) }
            return out
        }
        let payload: Payload
        switch kind {
        case .attach:
            payload = .attach(device: try string("device"), keyboard: try o.required("keyboard").bool(), integration: try o["integration"]?.string(),
                              integrationReason: try o["integration_reason"]?.string())
        case .detach:
            payload = .detach(device: try string("device"), keyboard: try o.required("keyboard").bool())
        case .key:
            var mods: [String] = []
            for m in try o.required("mods").array() { mods.append(try m.string()) }
            payload = .key(Key(device: try string("device"), code: try string("code"), state: try string("state"),
                               keysym: try string("keysym"), utf8: try string("utf8"), mods: mods,
                               layout: try o.required("layout").nonNegativeInteger(), text: try o["text"]?.string(),
                               synthetic: try o["synthetic"]?.bool() ?? false))
        case .chord:
            payload = .chord(device: try string("device"), chord: try string("chord"))
        case .command:
            var phase: KeyPhase?
            if let name = try o["phase"]?.string() {
                guard let p = KeyPhase(rawValue: name) else {
                    throw o.error("phase: expected one of \(KeyPhase.allCases.map(\.rawValue).joined(separator: ", ")), found '\(name)'")
                }
                phase = p
            }
            payload = .command(id: try string("id"), title: try string("title"), scope: try string("scope"), chord: try string("chord"), phase: phase)
        case .presence:
            payload = .presence(hardwareKeyboard: try o.required("hardware_keyboard").bool(), reason: try string("reason"))
        case .geometry:
            payload = .geometry(try GeometryReport.decode(o))
        case .dropped:
            payload = .dropped(device: try string("device"), count: try o.required("count").nonNegativeInteger(), reason: try string("reason"))
        case .session:
            let uid = try o["uid"]?.nonNegativeInteger()
            if let uid, uid > Int(UInt32.max) { throw o.error("uid out of range") }
            payload = .session(seat: try string("seat"), active: try o.required("active").bool(), uid: uid.map { UInt32($0) })
        case .hud:
            let triggerNode = try o.required("trigger")
            let name = try triggerNode.string()
            guard let trigger = HudTrigger(rawValue: name) else {
                throw triggerNode.error("unknown trigger '\(name)'; expected \(HudTrigger.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard try o.required("show").bool() else { payload = .hud(.hidden(trigger)); break }
            var pending: String?
            if let p = o["pending"], p.value != .null { pending = try p.string() }
            payload = .hud(Hud(show: true, trigger: trigger, pending: pending, scopes: try strings("scopes"),
                               textInput: try o.required("text_input").bool(), groups: try groups()))
        case .toolbar:
            payload = .toolbar(Toolbar(scopes: try strings("scopes"), textInput: try o.required("text_input").bool(), groups: try groups()))
        }
        return ControlEvent(time: time, payload: payload)
    }
}

/// A line from the service: a reply to a request, or an event.
public enum ControlLine: Sendable, Equatable {
    case reply(ControlReply)
    case event(ControlEvent)

    /// Reads one line the service sent.
    public static func parse(_ line: String) throws(ControlRequestError) -> ControlLine {
        let value: JSONValue
        do { value = try JSONValue.parse(line, maximumDepth: 16) } catch {
            throw ControlRequestError(message: "invalid JSON: \(error.description)")
        }
        do {
            if case .object(let o) = value, o["reply"] != nil { return .reply(try ControlReply.decode(JSONNode(value))) }
            return .event(try ControlEvent.decode(JSONNode(value)))
        } catch {
            throw ControlRequestError(message: error.description)
        }
    }
}
