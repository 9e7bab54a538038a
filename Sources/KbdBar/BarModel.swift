public import KbdControl
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
///   The buttons are laid out in the bar's width (`resized`): what fits is shown, the rest on
///   further pages behind a More button (`nextPage`); titles are cut to
///   `BarMetrics.maxTitleCharacters`.
/// - The HUD is shown from a `hud` show event until the hide of the same trigger, with the
///   commands of the payload, shadowed and filtered ones dimmed, as many as the columns that
///   fit the bar's width hold (then a last row "… and N more").
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
    /// The bar's width in pixels (its surface spans the output), until the toolkit says.
    public private(set) var width = 1024
    /// The toolbar page shown (0-based; a new toolbar starts at the first).
    public private(set) var page = 0
    public var metrics = BarMetrics.standard

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
        let (height, width, metrics) = (toolbarHeight, width, metrics)
        self = BarModel()
        (toolbarHeight, self.width, self.metrics) = (height, width, metrics)
    }

    /// The bar's surface is `pixels` wide (the output's width).
    public mutating func resized(_ pixels: Int) { width = max(1, pixels) }

    /// The More button was tapped: the next of `pages` pages, the first after the last.
    public mutating func nextPage(of pages: Int) { page = pages > 1 ? (page + 1) % pages : 0 }

    public mutating func apply(_ event: ControlEvent) {
        switch event.payload {
        case .presence(let present, _): hardwareKeyboard = present
        case .geometry(let report): readGeometry(report)
        case .session(_, let active, _):
            sessionActive = active
            if !active { hud = nil }
        case .toolbar(let bar):
            if bar != toolbar { page = 0 }
            toolbar = bar
        case .hud(let h):
            if h.show { hud = h } else if hud?.trigger == h.trigger { hud = nil }
        default: break
        }
    }

    /// The mini toolbar's height from a layout guide: its `keyboard_frame` while the layout is
    /// `mini-toolbar` (other layouts say nothing about the bar).
    private mutating func readGeometry(_ report: GeometryReport) {
        guard report.layout == .miniToolbar, let frame = report.keyboardFrame else { return }
        toolbarHeight = Self.height(frame.height)
    }

    /// Points to whole pixels, at least 1 (a layer surface of height 0 would take the
    /// compositor's choice), at most 1000.
    static func height(_ points: Double) -> Int {
        guard points.isFinite else { return 55 }
        return Int(min(max(points.rounded(), 1), 1000))
    }

    /// What to show, texts measured with `BarMetrics.estimate`.
    public var view: BarView { view(measure: BarMetrics.estimate) }

    /// What to show, texts measured by `measure` (the toolkit's font, in pixels).
    public func view(measure: (String) -> Int) -> BarView {
        guard connected, sessionActive else { return BarView() }
        return BarView(toolbar: hardwareKeyboard ? toolbarView(measure: measure) : nil,
                       hud: hud.map { Self.hudView($0, width: width, metrics: metrics) })
    }

    func toolbarView(measure: (String) -> Int) -> ToolbarView {
        let all = allButtons
        let pages = ToolbarPaging.pages(all, width: width, metrics: metrics, measure: measure)
        let shown = min(page, pages.count - 1)
        return ToolbarView(height: toolbarHeight, groups: pages[shown], page: shown, pages: pages.count)
    }

    /// Every button of every page, in groups.
    var allButtons: [ToolbarView.Group] {
        var groups: [ToolbarView.Group] = []
        var index = 0
        let textInput = toolbar?.textInput ?? false
        for group in toolbar?.groups ?? [] {
            var buttons: [ToolbarView.Button] = []
            for c in group.commands where !c.shadowed && !(textInput && c.textInputFiltered) {
                buttons.append(ToolbarView.Button(index: index, label: BarMetrics.bounded(c.title, metrics.maxTitleCharacters),
                                                  detail: "\(c.discoverabilityTitle) (\(c.chord))",
                                                  command: CommandRef(id: c.id, table: c.table)))
                index += 1
            }
            if !buttons.isEmpty { groups.append(ToolbarView.Group(title: BarMetrics.bounded(group.title, metrics.maxTitleCharacters), buttons: buttons)) }
        }
        return groups
    }

    /// The HUD: at most as many rows (group titles count) as the columns that fit `width`
    /// hold, the last of them "… and N more" when some were left out; texts cut to
    /// `maxHudCharacters`.
    static func hudView(_ hud: ControlEvent.Hud, width: Int, metrics: BarMetrics) -> HudView {
        let heading: String
        if hud.trigger == .sequence, let pending = hud.pending {
            heading = "\(pending) …"
        } else {
            heading = "Shortcuts: " + (hud.scopes.isEmpty ? ["global"] : hud.scopes).joined(separator: " › ")
        }
        let limit = metrics.maxHudCharacters
        let columns = max(1, (width - metrics.edges) / max(1, metrics.hudColumnWidth))
        var room = columns * metrics.hudRowsPerColumn - 1  // the last row may say what was left out
        var groups: [HudView.Group] = []
        var left = 0
        for g in hud.groups {
            let fits = room >= 2 ? min(g.commands.count, room - 1) : 0
            if fits > 0 {
                groups.append(HudView.Group(title: BarMetrics.bounded(g.title, limit), rows: g.commands.prefix(fits).map {
                    HudView.Row(chord: BarMetrics.bounded($0.chord, limit), title: BarMetrics.bounded($0.discoverabilityTitle, limit),
                                dimmed: $0.shadowed || $0.textInputFiltered)
                }))
                room -= 1 + fits
            }
            left += g.commands.count - fits
        }
        if left > 0, !groups.isEmpty {
            groups[groups.count - 1].rows.append(HudView.Row(chord: "", title: "… and \(left) more", dimmed: true))
        }
        return HudView(heading: BarMetrics.bounded(heading, limit * 2), groups: groups)
    }
}
