public import KbdJSON
public import KbdCore
public import KbdCommands
/// The JSON of the listings, written once for the command line and the control socket.
extension DeviceRow {
    /// `{"path","name"[,"id"],"keyboard","reason"[,"integration","integration_reason"][,"switch"][,"error"][,"open"][,"grabbed"]}`.
    public var jsonValue: JSONValue {
        var o = JSONObject([("path", .string(path)), ("name", .string(name))])
        if let inputID { _ = o.updateValue(.string(inputID.description), forKey: "id") }
        if let verdict {
            _ = o.updateValue(.bool(verdict.isKeyboard), forKey: "keyboard")
            _ = o.updateValue(.string(verdict.reason), forKey: "reason")
            if verdict.isKeyboard {
                _ = o.updateValue(.string(verdict.integration.rawValue), forKey: "integration")
                if !verdict.integrationReason.isEmpty { _ = o.updateValue(.string(verdict.integrationReason), forKey: "integration_reason") }
            }
            if verdict.isSwitch { _ = o.updateValue(.bool(true), forKey: "switch") }
        }
        if let error { _ = o.updateValue(.string(error), forKey: "error") }
        if reportsOpen { _ = o.updateValue(.bool(id != nil), forKey: "open") }
        if let grabbed { _ = o.updateValue(.string(grabbed), forKey: "grabbed") }
        return .object(o)
    }
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
