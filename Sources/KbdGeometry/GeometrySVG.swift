import KbdJSON
/// Draws geometry states as SVG, so people can look at a layout instead of
/// reading numbers.
///
/// Each panel shows the screen (grey), the windows (white, blue outline,
/// labelled with id, direction, near edges and active rules), the keyboard,
/// toolbar or handle (dark), each window's guide (green, dashed outline; a
/// zero-height guide is a dashed green line), dismiss regions (orange) and
/// near edges (thick red lines along the window's edges). Coordinates in the
/// drawing are screen points.
public enum GeometrySVG {
    /// One picture: a state, its report and a caption above it.
    public struct Panel: Sendable {
        /// The state drawn.
        public var state: GeometryState
        /// The model's report for `state`.
        public var report: GeometryReport
        /// The caption above the screen.
        public var caption: String

        /// A panel; the caption defaults to the layout and keyboard frame.
        public init(state: GeometryState, report: GeometryReport, caption: String? = nil) {
            self.state = state
            self.report = report
            self.caption = caption ?? GeometrySVG.defaultCaption(state: state, report: report)
        }
    }

    /// The whole scenario, one panel per step from step 0 down.
    public static func render(scenario: GeometryScenario) -> String {
        let panels = zip(scenario.states, scenario.reports()).enumerated().map { index, pair in
            Panel(state: pair.0, report: pair.1, caption: "step \(index): " + defaultCaption(state: pair.0, report: pair.1))
        }
        return render(panels: panels)
    }

    /// A single state.
    public static func render(state: GeometryState, report: GeometryReport, caption: String? = nil) -> String {
        render(panels: [Panel(state: state, report: report, caption: caption)])
    }

    /// Panels under a legend, in rows of `columns` (default: one column for
    /// a single panel, two otherwise), each with its caption above it.
    public static func render(panels: [Panel], columns: Int? = nil) -> String {
        let columnCount = max(1, columns ?? (panels.count > 1 ? 2 : 1))
        let widest = panels.map(\.state.screen.width).max() ?? 800
        let font = max(12, (widest / 60).rounded())
        let pad = font
        let captionHeight = font * 2.2
        let totalWidth = Double(columnCount) * (widest + pad) + pad
        var body = ""
        legend(into: &body, y: pad, font: font, x: pad)
        var y = pad + font * 2
        var start = 0
        while start < panels.count {
            let row = panels[start..<min(start + columnCount, panels.count)]
            for (column, panel) in row.enumerated() {
                let x = pad + Double(column) * (widest + pad)
                text(into: &body, panel.caption, x: x, y: y + font * 1.6, size: font, weight: "bold")
                body += "<g transform=\"translate(\(n(x)) \(n(y + captionHeight)))\">\n"
                draw(panel, into: &body, font: font)
                body += "</g>\n"
            }
            y += captionHeight + (row.map(\.state.screen.height).max() ?? 0) + pad
            start += columnCount
        }
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(totalWidth))\" height=\"\(n(y))\" "
        svg += "viewBox=\"0 0 \(n(totalWidth)) \(n(y))\" font-family=\"sans-serif\">\n"
        svg += "<rect x=\"0\" y=\"0\" width=\"\(n(totalWidth))\" height=\"\(n(y))\" fill=\"#ffffff\"/>\n"
        svg += body
        svg += "</svg>\n"
        return svg
    }

    /// `layout mini-toolbar, keyboard (519, 969, 328×55), hardware keyboard`.
    public static func defaultCaption(state: GeometryState, report: GeometryReport) -> String {
        var caption = "layout \(report.layout.rawValue)"
        if let frame = report.keyboardFrame { caption += ", keyboard \(frame)" }
        if state.hardwareKeyboard { caption += ", hardware keyboard" }
        return caption
    }

    // MARK: Drawing

    private static let windowStroke = "#2563eb"
    private static let keyboardFill = "#374151"
    private static let guideFill = "#22c55e"
    private static let guideStroke = "#15803d"
    private static let dismissFill = "#f97316"
    private static let nearStroke = "#dc2626"

    private static func draw(_ panel: Panel, into svg: inout String, font: Double) {
        let state = panel.state
        let screen = Rect(origin: .zero, size: state.screen)
        rect(into: &svg, screen, fill: "#e5e7eb", stroke: "#111827", strokeWidth: 2)

        for window in state.windows {
            rect(into: &svg, window.frame, fill: "#ffffff", fillOpacity: 0.92, stroke: windowStroke, strokeWidth: 3)
        }
        if let frame = panel.report.keyboardFrame {
            rect(into: &svg, frame, fill: keyboardFill, fillOpacity: 0.6, stroke: "#111827", strokeWidth: 2)
        }

        for (window, report) in zip(state.windows, panel.report.windows) {
            let guide = report.guide.offsetBy(dx: window.frame.x, dy: window.frame.y)
            if guide.height > 0 {
                rect(into: &svg, guide, fill: guideFill, fillOpacity: 0.35, stroke: guideStroke, strokeWidth: 2, dashed: true)
            } else {
                line(into: &svg, x1: guide.minX, y1: guide.minY, x2: guide.maxX, y2: guide.minY,
                     stroke: guideStroke, width: 3, dashed: true)
            }
            if let region = report.dismissRegion {
                let onScreen = region.offsetBy(dx: window.frame.x, dy: window.frame.y)
                rect(into: &svg, onScreen, fill: dismissFill, fillOpacity: 0.35, stroke: dismissFill, strokeWidth: 2, dashed: true)
            }
            let thick = max(6, font / 2.5)
            let f = window.frame
            for edge in report.near.edges {
                switch edge {
                case .top:
                    line(into: &svg, x1: f.minX, y1: f.minY, x2: f.maxX, y2: f.minY, stroke: nearStroke, width: thick)
                case .bottom:
                    line(into: &svg, x1: f.minX, y1: f.maxY, x2: f.maxX, y2: f.maxY, stroke: nearStroke, width: thick)
                case .leading, .trailing:
                    let x = edge == window.direction.leftEdge ? f.minX : f.maxX
                    line(into: &svg, x1: x, y1: f.minY, x2: x, y2: f.maxY, stroke: nearStroke, width: thick)
                }
            }
        }

        if let frame = panel.report.keyboardFrame {
            let label = panel.report.layout == .miniToolbar
                ? (state.toolbar.collapsed == .expanded
                    ? "toolbar (\(state.toolbar.buttons) button\(state.toolbar.buttons == 1 ? "" : "s"))" : "handle")
                : "\(panel.report.layout.rawValue) keyboard"
            let labelY = min(frame.maxY - font * 0.4, frame.minY + font * 1.3)
            text(into: &svg, label, x: frame.midX, y: labelY, size: font * 0.8, weight: "bold", fill: "#111827", anchor: "middle")
        }
        for (window, report) in zip(state.windows, panel.report.windows) {
            var title = window.id
            var flags: [String] = []
            if window.direction == .rtl { flags.append("rtl") }
            if state.isNarrow(window) { flags.append("narrow") }
            if window.followsUndockedKeyboard { flags.append("follows") }
            if report.dismissed { flags.append("dismissed") }
            if !flags.isEmpty { title += " (" + flags.joined(separator: ", ") + ")" }
            let x = window.frame.minX + font * 0.5
            var y = window.frame.minY + font * 1.3
            text(into: &svg, title, x: x, y: y, size: font, weight: "bold", fill: windowStroke)
            y += font * 1.2
            let near = report.near.isEmpty ? "none" : report.near.edges.map(\.rawValue).joined(separator: ", ")
            text(into: &svg, "near: \(near)", x: x, y: y, size: font * 0.8)
            y += font
            text(into: &svg, "guide \(report.guide), bottom offset \(JSONValue.formatNumber(report.bottomOffset))", x: x, y: y, size: font * 0.8)
            if !report.activeRules.isEmpty {
                y += font
                text(into: &svg, "rules: " + report.activeRules.joined(separator: ", "), x: x, y: y, size: font * 0.8)
            }
        }
    }

    private static func legend(into svg: inout String, y: Double, font: Double, x: Double) {
        let items: [(String, String, Double)] = [
            ("window", "#ffffff", 1), ("keyboard / toolbar", keyboardFill, 0.6), ("guide", guideFill, 0.35),
            ("dismiss region", dismissFill, 0.35), ("near edge", nearStroke, 1),
        ]
        var cursor = x
        for (label, color, opacity) in items {
            let swatch = Rect(x: cursor, y: y, width: font * 1.4, height: font)
            rect(into: &svg, swatch, fill: color, fillOpacity: opacity, stroke: label == "window" ? windowStroke : color, strokeWidth: 2)
            text(into: &svg, label, x: cursor + font * 1.8, y: y + font * 0.85, size: font * 0.8)
            cursor += font * 1.8 + Double(label.count) * font * 0.5 + font * 1.5
        }
    }

    // MARK: Primitives

    private static func n(_ value: Double) -> String {
        JSONValue.formatNumber((value * 100).rounded() / 100)
    }

    private static func rect(
        into svg: inout String, _ r: Rect, fill: String, fillOpacity: Double = 1,
        stroke: String, strokeWidth: Double, dashed: Bool = false
    ) {
        svg += "<rect x=\"\(n(r.x))\" y=\"\(n(r.y))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\" "
        svg += "fill=\"\(fill)\" fill-opacity=\"\(n(fillOpacity))\" stroke=\"\(stroke)\" stroke-width=\"\(n(strokeWidth))\""
        if dashed { svg += " stroke-dasharray=\"8 5\"" }
        svg += "/>\n"
    }

    private static func line(
        into svg: inout String, x1: Double, y1: Double, x2: Double, y2: Double,
        stroke: String, width: Double, dashed: Bool = false
    ) {
        svg += "<line x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\" "
        svg += "stroke=\"\(stroke)\" stroke-width=\"\(n(width))\" stroke-linecap=\"round\""
        if dashed { svg += " stroke-dasharray=\"8 5\"" }
        svg += "/>\n"
    }

    private static func text(
        into svg: inout String, _ content: String, x: Double, y: Double, size: Double,
        weight: String = "normal", fill: String = "#111827", anchor: String = "start"
    ) {
        svg += "<text x=\"\(n(x))\" y=\"\(n(y))\" font-size=\"\(n(size))\" font-weight=\"\(weight)\" "
        svg += "fill=\"\(fill)\" text-anchor=\"\(anchor)\" stroke=\"#ffffff\" stroke-width=\"\(n(size / 5))\" "
        svg += "stroke-opacity=\"0.8\" paint-order=\"stroke\">\(escapeXML(content))</text>\n"
    }

    /// `content` with `&`, `<`, `>`, `"` and `'` escaped for XML text and attributes.
    static func escapeXML(_ content: String) -> String {
        var escaped = ""
        for character in content {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
