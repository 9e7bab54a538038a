import KbdKeymap
import KbdGeometry
public import KbdCore
import KbdJSON
import KbdSystem
public import KbdCommands
public import KbdPipeline
/// Formats pipeline events as JSON Lines (the replay and socket contract) or
/// as readable text for terminals.
public enum EventFormatter {
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    /// One line, without the newline.
    public static func line(_ event: PipelineEvent, format: Format) -> String {
        format == .json ? json(event) : text(event)
    }

    /// `{"event":…,"time":…,…}`: `event` first, then the fields of DESIGN's replay contract.
    public static func json(_ event: PipelineEvent) -> String {
        var o = "{\"event\":\"" + event.kind + "\",\"time\":" + event.time.description
        func field(_ name: String, _ value: String) {
            o += ",\"" + name + "\":"
            JSONValue.appendQuoted(value, to: &o)
        }
        switch event {
        case .attach(_, let device, let keyboard, let integration, let integrationReason):
            field("device", device)
            o += ",\"keyboard\":" + (keyboard ? "true" : "false")
            if let integration { field("integration", integration.rawValue) }
            if let integrationReason, !integrationReason.isEmpty { field("integration_reason", integrationReason) }
        case .detach(_, let device, let keyboard):
            field("device", device)
            o += ",\"keyboard\":" + (keyboard ? "true" : "false")
        case .key(let key, let device):
            field("device", device)
            field("code", key.codeName)
            field("state", key.state.rawValue)
            field("keysym", key.keysym.name)
            field("utf8", key.utf8 ?? "")
            o += ",\"mods\":[" + key.modifiers.names.map { "\"" + $0 + "\"" }.joined(separator: ",") + "]"
            o += ",\"layout\":" + String(key.layout)
            if let text = key.composedText { field("text", text) }
            if key.synthetic { o += ",\"synthetic\":true" }
        case .chord(_, let device, let chord):
            field("device", device)
            field("chord", chord)
        case .command(_, _, let command, let chord, let phase), .ownedCommand(_, _, _, let command, let chord, let phase):
            field("id", command.id)
            field("title", command.title)
            field("scope", command.scope)
            field("chord", chord)
            if let phase = shownPhase(command, phase) { field("phase", phase.rawValue) }
        case .presence(_, let present, let reason):
            o += ",\"hardware_keyboard\":" + (present ? "true" : "false")
            field("reason", reason.rawValue)
        case .geometry(_, let report):
            for (key, value) in report.jsonObject().members {
                o += ",\"" + key + "\":" + value.serialized()
            }
        case .dropped(_, let device, let count, let reason):
            field("device", device)
            o += ",\"count\":" + String(count)
            field("reason", reason)
        case .hud(_, let trigger, let view):
            // What the HUD shows from the service's own table (replay; the daemon writes each
            // reader's own with HudPayload). Titles and chords only: never a typed key.
            for (key, value) in ControlEvent.Hud(trigger: trigger, view: view).fields {
                o += ",\"" + key + "\":" + value.serialized()
            }
        }
        return o + "}"
    }

    /// `TIME  KIND  details`, aligned for reading; TIME is seconds since `origin` (replay passes
    /// its first event's time, so one clock runs through the output).
    public static func text(_ event: PipelineEvent, since origin: EventTime = .zero) -> String {
        let time = EventTime(microseconds: event.time.microseconds - origin.microseconds).description
        let pad = String(repeating: " ", count: max(1, 12 - time.count))
        let head = time + pad + event.kind + String(repeating: " ", count: max(1, 10 - event.kind.count))
        switch event {
        case .attach(_, let device, let keyboard, let integration, _):
            return head + "\"\(device.escapingControlCharacters)\""
                + (keyboard ? " (\(integration?.rawValue ?? "external") keyboard)" : " (not a keyboard)")
        case .detach(_, let device, _):
            return head + "\"\(device.escapingControlCharacters)\""
        case .key(let key, let device):
            var s = head + "\(key.codeName) \(key.state.rawValue) keysym=\(key.keysym.name)"
            if let u = key.utf8, !u.isEmpty { s += " utf8=" + JSONValue.quoted(u) }
            if let t = key.composedText { s += " text=" + JSONValue.quoted(t) }
            if !key.modifiers.isEmpty { s += " mods=" + key.modifiers.description }
            s += " layout=\(key.layout)"
            if key.synthetic { s += " (synthetic)" }
            return s + " [\(device.escapingControlCharacters)]"
        case .chord(_, let device, let chord):
            return head + chord.escapingControlCharacters + " [\(device.escapingControlCharacters)]"
        case .command(_, _, let command, let chord, let phase), .ownedCommand(_, _, _, let command, let chord, let phase):
            // Ids, titles and scopes come from the config: escaped like device names.
            return head + "\(command.id.escapingControlCharacters) \"\(command.title.escapingControlCharacters)\" \(chord.escapingControlCharacters)"
                + (command.scope == CommandTable.globalScope ? "" : " [\(command.scope.escapingControlCharacters)]")
                + (shownPhase(command, phase).map { " (\($0.rawValue))" } ?? "")
        case .presence(_, let present, let reason):
            return head + "hardware keyboard " + (present ? "present" : "absent") + " (\(reason.rawValue))"
        case .geometry(_, let report):
            let fields = report.jsonObject()
            return head + (fields["layout"].map { $0.serialized() } ?? "") + " " + (fields["keyboard_frame"]?.serialized() ?? "")
        case .dropped(_, let device, let count, let reason):
            return head + "\(count) events (\(reason)) [\(device.escapingControlCharacters)]"
        case .hud(_, let trigger, let view):
            guard let view else { return head + "hide (\(trigger.rawValue))" }
            let count = view.groups.reduce(0) { $0 + $1.entries.count }
            return head + "show (\(trigger.rawValue))" + (view.pending.map { " after " + $0.text.escapingControlCharacters } ?? "")
                + " \(count) command\(count == 1 ? "" : "s") in [" + view.groups.map { ($0.title ?? Discoverability.otherGroupTitle).escapingControlCharacters }.joined(separator: ", ") + "]"
        }
    }

    /// The `phase` a command event shows: every phase of a command with key phases, and any
    /// phase but `press` (the repeats of `repeat = true`); a press of a command without
    /// phases shows none, its line as before issue 36 (read it as `press`).
    public static func shownPhase(_ command: Command, _ phase: KeyPhase) -> KeyPhase? {
        phase != .press || command.hasPhases ? phase : nil
    }
}

extension PipelineEvent {
    /// The wire's kind of this event: what a subscription names (`event` in its JSON form).
    /// The daemon hands an event to the clients subscribed to this kind.
    public var eventKind: ControlEventKind {
        switch self {
        case .attach: return .attach
        case .detach: return .detach
        case .key: return .key
        case .chord: return .chord
        case .command, .ownedCommand: return .command
        case .presence: return .presence
        case .geometry: return .geometry
        case .dropped: return .dropped
        case .hud: return .hud
        }
    }
}
