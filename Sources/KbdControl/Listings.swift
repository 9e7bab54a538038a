public import KbdJSON
public import KbdCore
public import KbdCommands
extension ControlReply {
    /// One row of a device listing (`list_devices`, `kbd-commandd devices --format json`):
    /// `{"path","name"[,"id"],"keyboard","reason"[,"integration","integration_reason"][,"switch"][,"error"][,"open"][,"grabbed"]}`,
    /// members in that order, each written only when the row has it.
    public struct ListedDevice: Sendable, Equatable {
        /// The classifier's verdict: `keyboard` and `reason`; for a keyboard `integration`
        /// (and why, when known); `switch` for a lid or tablet-mode switch.
        public struct Verdict: Sendable, Equatable {
            public var keyboard: Bool
            public var reason: String
            public var integration: KeyboardIntegration?
            public var integrationReason: String?
            public var isSwitch: Bool
            public init(keyboard: Bool, reason: String, integration: KeyboardIntegration? = nil, integrationReason: String? = nil, isSwitch: Bool = false) {
                self.keyboard = keyboard
                self.reason = reason
                self.integration = integration
                self.integrationReason = integrationReason
                self.isSwitch = isSwitch
            }
        }

        public var path: String
        public var name: String
        /// The bus, vendor, product and version (`bus 0003 046d:c52b v0111`), where shown.
        public var id: String?
        public var verdict: Verdict?
        /// Why the node could not be opened or read.
        public var error: String?
        /// Whether the service holds it open (the service's listing says, a one-off scan does not).
        public var open: Bool?
        /// Why the service grabbed it for itself (EVIOCGRAB), when it did.
        public var grabbed: String?

        public init(path: String, name: String, id: String? = nil, verdict: Verdict? = nil, error: String? = nil, open: Bool? = nil,
                    grabbed: String? = nil) {
            self.path = path
            self.name = name
            self.id = id
            self.verdict = verdict
            self.error = error
            self.open = open
            self.grabbed = grabbed
        }

        /// The row as the listing shows it (`integration` for keyboards only).
        public init(_ row: DeviceRow) {
            let verdict = row.verdict.map { v in
                Verdict(keyboard: v.isKeyboard, reason: v.reason, integration: v.isKeyboard ? v.integration : nil,
                        integrationReason: v.isKeyboard && !v.integrationReason.isEmpty ? v.integrationReason : nil, isSwitch: v.isSwitch)
            }
            self.init(path: row.path, name: row.name, id: row.inputID?.description, verdict: verdict, error: row.error,
                      open: row.reportsOpen ? row.id != nil : nil, grabbed: row.grabbed)
        }

        public var jsonValue: JSONValue {
            var o = JSONObject([("path", .string(path)), ("name", .string(name))])
            func put(_ key: String, _ value: JSONValue) { _ = o.updateValue(value, forKey: key) }
            if let id { put("id", .string(id)) }
            if let verdict {
                put("keyboard", .bool(verdict.keyboard))
                put("reason", .string(verdict.reason))
                if let integration = verdict.integration { put("integration", .string(integration.rawValue)) }
                if let why = verdict.integrationReason { put("integration_reason", .string(why)) }
                if verdict.isSwitch { put("switch", .bool(true)) }
            }
            if let error { put("error", .string(error)) }
            if let open { put("open", .bool(open)) }
            if let grabbed { put("grabbed", .string(grabbed)) }
            return .object(o)
        }

        static func decode(_ o: JSONObjectNode) throws(JSONDecodingError) -> ListedDevice {
            var verdict: Verdict?
            if let keyboard = o["keyboard"] {
                var integration: KeyboardIntegration?
                if let node = o["integration"] {
                    let name = try node.string()
                    guard let known = KeyboardIntegration(rawValue: name) else { throw node.error("unknown integration '\(name)'; expected internal, external or virtual") }
                    integration = known
                }
                verdict = Verdict(keyboard: try keyboard.bool(), reason: try o.required("reason").string(), integration: integration,
                                  integrationReason: try o["integration_reason"]?.string(), isSwitch: try o["switch"]?.bool() ?? false)
            }
            return ListedDevice(path: try o.required("path").string(), name: try o.required("name").string(), id: try o["id"]?.string(),
                                verdict: verdict, error: try o["error"]?.string(), open: try o["open"]?.bool(),
                                grabbed: try o["grabbed"]?.string())
        }
    }
}

/// The JSON of the listings, written once for the command line and the control socket.
extension DeviceRow {
    /// The row as `ControlReply.ListedDevice` writes it.
    public var jsonValue: JSONValue { ControlReply.ListedDevice(self).jsonValue }
}

extension CommandListing {
    /// One object per command in listing order: `scope`, `id`, `title`, `chord`, `repeat`,
    /// `group`, `discoverability_title` and `"action":"hud"` when the command has them, and
    /// `shadowed_by` (the scope that wins the chord instead, or null) when asked for.
    public func jsonValues(shadowing: Bool) -> [JSONValue] {
        var items: [JSONValue] = []
        for (scope, entries) in groups {
            for e in entries {
                var o = JSONObject([("scope", .string(scope)), ("id", .string(e.command.id)), ("title", .string(e.command.title)),
                                    ("chord", .string(e.command.chordText)), ("repeat", .bool(e.command.repeat))])
                if let caps = e.keycaps { _ = o.updateValue(.string(caps), forKey: "keycaps") }
                if let group = e.command.group { _ = o.updateValue(.string(group), forKey: "group") }
                if let title = e.command.discoverabilityTitle { _ = o.updateValue(.string(title), forKey: "discoverability_title") }
                if e.command.action != .run { _ = o.updateValue(.string(e.command.action.rawValue), forKey: "action") }
                if shadowing { _ = o.updateValue(e.shadowedBy.map { .string($0) } ?? .null, forKey: "shadowed_by") }
                items.append(.object(o))
            }
        }
        return items
    }

    /// JSON Lines, one command per line, with `shadowed_by` (`kbd-commandd commands --format json`).
    public func json() -> String {
        jsonValues(shadowing: true).map { $0.serialized() + "\n" }.joined()
    }
}
