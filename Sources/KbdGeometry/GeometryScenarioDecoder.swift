import KbdJSON
/// Decodes the scenario format into ``GeometryState``s. With a `base` state
/// (a step), every key is optional and objects merge into the base.
enum GeometryScenarioDecoder {
    static let stateKeys = [
        "description", "screen", "near_threshold", "narrow_width_fraction",
        "hardware_keyboard", "toolbar", "keyboard", "windows",
    ]
    static let windowKeys = [
        "id", "frame", "safe_area", "follows_undocked_keyboard", "uses_bottom_safe_area",
        "dismiss_padding", "direction", "rules",
    ]
    static let toolbarKeys = ["buttons", "collapsed", "height", "button_width", "button_spacing", "padding", "handle_width"]
    static let edgeChoices = Edge.allCases.map { ($0.rawValue, $0) }

    static func state(_ object: JSONObjectNode, base: GeometryState?, defaultKeyboard: SoftwareKeyboard?) throws(JSONDecodingError) -> GeometryState {
        _ = try object["description"]?.string()
        let screen = try size(base == nil ? object.required("screen") : object["screen"], base: base?.screen)
        let nearThreshold = try object["near_threshold"]?.nonNegativeNumber()
            ?? base?.nearThreshold ?? GeometryState.defaultNearThreshold
        var narrowFraction = base?.narrowWidthFraction ?? GeometryState.defaultNarrowWidthFraction
        if let node = object["narrow_width_fraction"] {
            narrowFraction = try node.number()
            guard (0...1).contains(narrowFraction) else { throw node.error("expected a number from 0 to 1") }
        }
        let hardwareKeyboard = try object["hardware_keyboard"]?.bool() ?? base?.hardwareKeyboard ?? false
        let toolbar = try object["toolbar"].map { node throws(JSONDecodingError) in
            try self.toolbar(node, base: base?.toolbar ?? MiniToolbar())
        } ?? base?.toolbar ?? MiniToolbar()

        let keyboard: SoftwareKeyboard
        if let node = object["keyboard"] {
            keyboard = try self.keyboard(node, base: base?.keyboard)
        } else if let current = base?.keyboard ?? defaultKeyboard {
            keyboard = current
        } else {
            throw object.error("missing required key \"keyboard\"")
        }

        let windows: [AppWindow]
        if let base {
            windows = try object["windows"].map { node throws(JSONDecodingError) in
                try windowChanges(node, base: base.windows)
            } ?? base.windows
        } else {
            windows = try initialWindows(object.required("windows"))
        }
        return GeometryState(
            screen: screen, windows: windows, keyboard: keyboard, hardwareKeyboard: hardwareKeyboard,
            toolbar: toolbar, nearThreshold: nearThreshold, narrowWidthFraction: narrowFraction
        )
    }

    // MARK: Shapes

    /// A size; with a base, a missing node or missing keys keep the base's values.
    static func size(_ node: JSONNode?, base: Size?) throws(JSONDecodingError) -> Size {
        guard let node else { return base ?? .zero }
        let object = try node.object()
        try object.checkKeys(allowed: ["width", "height"])
        return Size(
            width: try number(object, "width", base: base?.width, positive: true),
            height: try number(object, "height", base: base?.height, positive: true)
        )
    }

    static func rect(_ node: JSONNode, base: Rect?) throws(JSONDecodingError) -> Rect {
        let object = try node.object()
        try object.checkKeys(allowed: ["x", "y", "width", "height"])
        return Rect(
            x: try number(object, "x", base: base?.x),
            y: try number(object, "y", base: base?.y),
            width: try number(object, "width", base: base?.width, nonNegative: true),
            height: try number(object, "height", base: base?.height, nonNegative: true)
        )
    }

    static func insets(_ node: JSONNode, base: EdgeInsets) throws(JSONDecodingError) -> EdgeInsets {
        let object = try node.object()
        try object.checkKeys(allowed: ["top", "bottom", "leading", "trailing"])
        return EdgeInsets(
            top: try number(object, "top", base: base.top, nonNegative: true),
            bottom: try number(object, "bottom", base: base.bottom, nonNegative: true),
            leading: try number(object, "leading", base: base.leading, nonNegative: true),
            trailing: try number(object, "trailing", base: base.trailing, nonNegative: true)
        )
    }

    /// The member `key` as a number, or `base` when absent (required when
    /// there is no base).
    static func number(
        _ object: JSONObjectNode, _ key: String, base: Double?, nonNegative: Bool = false, positive: Bool = false
    ) throws(JSONDecodingError) -> Double {
        guard let node = object[key] else {
            if let base { return base }
            throw object.error("missing required key \(JSONValue.quoted(key))")
        }
        if positive { return try node.positiveNumber() }
        if nonNegative { return try node.nonNegativeNumber() }
        return try node.number()
    }

    // MARK: Keyboard and toolbar

    static func keyboard(_ node: JSONNode, base: SoftwareKeyboard?) throws(JSONDecodingError) -> SoftwareKeyboard {
        let object = try node.object()
        let kind: String
        if let kindNode = object["kind"] {
            kind = try kindNode.oneOf([
                ("hidden", "hidden"), ("docked", "docked"), ("undocked", "undocked"),
                ("split", "split"), ("floating", "floating"),
            ])
        } else if let base {
            kind = base.kindName
        } else {
            throw object.error("missing required key \"kind\"")
        }
        let context = kind == "undocked" ? "an undocked keyboard" : "a \(kind) keyboard"
        switch kind {
        case "hidden":
            try object.checkKeys(allowed: ["kind"], context: context)
            return .hidden
        case "docked":
            try object.checkKeys(allowed: ["kind", "height"], context: context)
            var baseHeight: Double?
            if case .docked(let height) = base { baseHeight = height }
            guard let heightNode = object["height"] else {
                guard let baseHeight else {
                    throw object.error("missing required key \"height\" for a docked keyboard")
                }
                return .docked(height: baseHeight)
            }
            return .docked(height: try heightNode.nonNegativeNumber())
        default:
            try object.checkKeys(allowed: ["kind", "frame"], context: context)
            var baseFrame: Rect?
            switch base {
            case .undocked(let frame), .split(let frame), .floating(let frame): baseFrame = frame
            default: baseFrame = nil
            }
            let frame: Rect
            if let frameNode = object["frame"] {
                frame = try rect(frameNode, base: baseFrame)
            } else if let baseFrame {
                frame = baseFrame
            } else {
                throw object.error("missing required key \"frame\" for \(context)")
            }
            switch kind {
            case "undocked": return .undocked(frame: frame)
            case "split": return .split(frame: frame)
            default: return .floating(frame: frame)
            }
        }
    }

    static func toolbar(_ node: JSONNode, base: MiniToolbar) throws(JSONDecodingError) -> MiniToolbar {
        let object = try node.object()
        try object.checkKeys(allowed: toolbarKeys)
        var toolbar = base
        if let buttons = object["buttons"] {
            toolbar.buttons = try buttons.nonNegativeInteger()
        }
        if let collapsed = object["collapsed"] {
            toolbar.collapsed = try collapsed.oneOf(ToolbarCollapse.allCases.map { ($0.rawValue, $0) })
        }
        var metrics = toolbar.metrics
        metrics.height = try number(object, "height", base: metrics.height, nonNegative: true)
        metrics.buttonWidth = try number(object, "button_width", base: metrics.buttonWidth, nonNegative: true)
        metrics.buttonSpacing = try number(object, "button_spacing", base: metrics.buttonSpacing, nonNegative: true)
        metrics.padding = try number(object, "padding", base: metrics.padding, nonNegative: true)
        metrics.handleWidth = try number(object, "handle_width", base: metrics.handleWidth, nonNegative: true)
        toolbar.metrics = metrics
        return toolbar
    }

    // MARK: Windows

    static func initialWindows(_ node: JSONNode) throws(JSONDecodingError) -> [AppWindow] {
        let elements = try node.array()
        guard !elements.isEmpty else { throw node.error("expected at least one window") }
        var windows: [AppWindow] = []
        for element in elements {
            let object = try element.object()
            try object.checkKeys(allowed: windowKeys)
            let idNode = try object.required("id")
            let id = try idNode.string()
            guard !id.isEmpty else { throw idNode.error("expected a non-empty string") }
            guard !windows.contains(where: { $0.id == id }) else {
                throw idNode.error("duplicate window id \(JSONValue.quoted(id))")
            }
            let frame = try rect(object.required("frame"), base: nil)
            windows.append(try window(object, base: AppWindow(id: id, frame: frame)))
        }
        return windows
    }

    static func windowChanges(_ node: JSONNode, base: [AppWindow]) throws(JSONDecodingError) -> [AppWindow] {
        var windows = base
        for element in try node.array() {
            let object = try element.object()
            try object.checkKeys(allowed: windowKeys)
            let idNode = try object.required("id")
            let id = try idNode.string()
            guard let index = windows.firstIndex(where: { $0.id == id }) else {
                let known = windows.map { JSONValue.quoted($0.id) }.joined(separator: ", ")
                throw idNode.error("unknown window \(JSONValue.quoted(id)); expected one of \(known)")
            }
            windows[index] = try window(object, base: windows[index])
        }
        return windows
    }

    /// The window's options merged into `base` (whose id and frame are set).
    static func window(_ object: JSONObjectNode, base: AppWindow) throws(JSONDecodingError) -> AppWindow {
        var window = base
        if let frame = object["frame"] {
            window.frame = try rect(frame, base: base.frame)
        }
        if let safeArea = object["safe_area"] {
            window.safeArea = try insets(safeArea, base: base.safeArea)
        }
        if let follows = object["follows_undocked_keyboard"] {
            window.followsUndockedKeyboard = try follows.bool()
        }
        if let uses = object["uses_bottom_safe_area"] {
            window.usesBottomSafeArea = try uses.bool()
        }
        if let padding = object["dismiss_padding"] {
            window.dismissPadding = try padding.nonNegativeNumber()
        }
        if let direction = object["direction"] {
            window.direction = try direction.oneOf(LayoutDirection.allCases.map { ($0.rawValue, $0) })
        }
        if let rules = object["rules"] {
            window.rules = try self.rules(rules)
        }
        return window
    }

    static func rules(_ node: JSONNode) throws(JSONDecodingError) -> [TrackingRule] {
        var rules: [TrackingRule] = []
        for element in try node.array() {
            let object = try element.object()
            try object.checkKeys(allowed: ["name", "near", "away"])
            let nameNode = try object.required("name")
            let name = try nameNode.string()
            guard !name.isEmpty else { throw nameNode.error("expected a non-empty string") }
            guard !rules.contains(where: { $0.name == name }) else {
                throw nameNode.error("duplicate rule name \(JSONValue.quoted(name))")
            }
            guard object["near"] != nil || object["away"] != nil else {
                throw object.error("expected at least one of the keys \"near\" and \"away\"")
            }
            let near = try edges(object["near"])
            let away = try edges(object["away"])
            rules.append(TrackingRule(name: name, near: near, away: away))
        }
        return rules
    }

    static func edges(_ node: JSONNode?) throws(JSONDecodingError) -> EdgeSet {
        guard let node else { return [] }
        var set: EdgeSet = []
        for element in try node.array() {
            set.insert(EdgeSet(try element.oneOf(edgeChoices)))
        }
        return set
    }
}
