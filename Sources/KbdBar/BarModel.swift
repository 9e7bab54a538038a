public import KbdControl
import KbdJSON
import KbdGeometry
import KbdCommands

/// What the bar knows from the service, and what it shows because of it: pure, no I/O.
/// The controller feeds it the subscribe reply and every event, and draws `view` when it
/// changed.
///
/// - The toolbar is shown while a hardware keyboard is present (and this user's session is
///   the active one), as tall as the geometry model's mini toolbar (the `geometry` event's
///   `keyboard_frame` in the `mini-toolbar` layout, else `ToolbarMetrics.standard`), with the
///   `toolbar` event's commands as buttons; while text input is on, only the commands that
///   still fire (not `text_input_filtered`); never the shadowed ones (their chord runs
///   another command).
/// - The HUD is shown from a `hud` show event until the hide of the same trigger, with every
///   command of the payload, shadowed and filtered ones dimmed.
/// - Without the service (before the first answer, after it went away) nothing is shown.
public struct BarModel: Sendable, Equatable {
    public private(set) var connected = false
    public private(set) var hardwareKeyboard = false
    /// Whether this user's session is the active one of its seat (the `session` event); true
    /// until the service says otherwise (it sends the event on changes only).
    public private(set) var sessionActive = true
    public private(set) var toolbarHeight: Int
    public private(set) var toolbar: ControlEvent.Toolbar?
    public private(set) var hud: ControlEvent.Hud?

    public init() {
        toolbarHeight = Self.height(ToolbarMetrics.standard.height)
    }

    /// The service answered the subscribe request.
    public mutating func subscribed(_ reply: ControlReply.Subscribed) {
        connected = true
        hardwareKeyboard = reply.hardwareKeyboard
        if let geometry = reply.geometry { readGeometry(geometry) }
    }

    /// The connection ended: nothing is known, nothing is shown.
    public mutating func disconnected() {
        let height = toolbarHeight
        self = BarModel()
        toolbarHeight = height
    }

    public mutating func apply(_ event: ControlEvent) {
        switch event.payload {
        case .presence(let present, _): hardwareKeyboard = present
        case .geometry(let fields): readGeometry(fields)
        case .session(_, let active, _):
            sessionActive = active
            if !active { hud = nil }
        case .toolbar(let bar): toolbar = bar
        case .hud(let h):
            if h.show { hud = h } else if hud?.trigger == h.trigger { hud = nil }
        default: break
        }
    }

    /// The mini toolbar's height from a layout guide: its `keyboard_frame` while the layout is
    /// `mini-toolbar` (other layouts say nothing about the bar).
    private mutating func readGeometry(_ fields: JSONObject) {
        guard fields["layout"]?.stringValue == "mini-toolbar",
              case .object(let frame)? = fields["keyboard_frame"],
              case .number(let height)? = frame["height"] else { return }
        toolbarHeight = Self.height(height)
    }

    /// Points to whole pixels, at least 1 (a layer surface of height 0 would take the
    /// compositor's choice), at most 1000.
    static func height(_ points: Double) -> Int {
        guard points.isFinite else { return 55 }
        return Int(min(max(points.rounded(), 1), 1000))
    }

    public var view: BarView {
        guard connected, sessionActive else { return BarView() }
        return BarView(toolbar: hardwareKeyboard ? toolbarView : nil, hud: hud.map(Self.hudView))
    }

    var toolbarView: ToolbarView {
        var groups: [ToolbarView.Group] = []
        var index = 0
        let textInput = toolbar?.textInput ?? false
        for group in toolbar?.groups ?? [] {
            var buttons: [ToolbarView.Button] = []
            for c in group.commands where !c.shadowed && !(textInput && c.textInputFiltered) {
                buttons.append(ToolbarView.Button(index: index, label: c.title, detail: "\(c.discoverabilityTitle) (\(c.chord))",
                                                  command: CommandRef(id: c.id, table: c.table)))
                index += 1
            }
            if !buttons.isEmpty { groups.append(ToolbarView.Group(title: group.title, buttons: buttons)) }
        }
        return ToolbarView(height: toolbarHeight, groups: groups)
    }

    static func hudView(_ hud: ControlEvent.Hud) -> HudView {
        let heading: String
        if hud.trigger == .sequence, let pending = hud.pending {
            heading = "\(pending) …"
        } else {
            heading = "Shortcuts: " + (hud.scopes.isEmpty ? ["global"] : hud.scopes).joined(separator: " › ")
        }
        let groups = hud.groups.map { g in
            HudView.Group(title: g.title, rows: g.commands.map {
                HudView.Row(chord: $0.chord, title: $0.discoverabilityTitle, dimmed: $0.shadowed || $0.textInputFiltered)
            })
        }
        return HudView(heading: heading, groups: groups)
    }
}
