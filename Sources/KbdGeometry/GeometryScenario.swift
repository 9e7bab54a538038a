public import KbdJSON
/// A geometry scenario: an initial state and the states after each step.
///
/// The JSON format (DESIGN.md, "Geometry"): an object with `screen`,
/// `keyboard` and `windows` (required) and optionally `description` (ignored
/// text), `near_threshold`, `narrow_width_fraction`, `hardware_keyboard`,
/// `toolbar` and `steps`. Each step is an object with any of the keys of the
/// scenario except `steps`, and changes only what it names: objects merge key
/// by key (`{"keyboard":{"frame":{"y":300}}}` moves the keyboard down and
/// keeps the rest), windows are matched by `id`, a window's `rules` list is
/// replaced as a whole. Unknown keys are errors. Every error names the JSON
/// path of the offending value: `steps[2].windows[0].frame.width: expected a
/// non-negative number`.
///
/// - `screen`: `{"width", "height"}`, positive numbers.
/// - `keyboard`: `{"kind": "hidden"}`, `{"kind": "docked", "height": H}`, or
///   `{"kind": "undocked"|"split"|"floating", "frame": {"x","y","width","height"}}`.
///   In a step, `kind` may be left out to keep the current kind, and a new
///   undocked, split or floating keyboard keeps the previous frame if it had one.
/// - `toolbar`: `buttons` (integer ≥ 0, default 6), `collapsed` (`none`,
///   `leading`, `trailing`), and the metrics `height`, `button_width`,
///   `button_spacing`, `padding`, `handle_width` (see ``ToolbarMetrics``).
/// - `windows`: objects with `id` and `frame` (required), `safe_area`
///   (`top`, `bottom`, `leading`, `trailing`, default 0),
///   `follows_undocked_keyboard` (false), `uses_bottom_safe_area` (true),
///   `dismiss_padding` (0), `direction` (`ltr`, `rtl`) and `rules`
///   (`[{"name": N, "near": [edges], "away": [edges]}]`, names unique per
///   window, at least one of `near` and `away`).
public struct GeometryScenario: Sendable, Equatable {
    /// The state before any step (reported as step 0).
    public var initial: GeometryState
    /// The full state after each step, in order.
    public var steps: [GeometryState]

    /// A scenario from its states.
    public init(initial: GeometryState, steps: [GeometryState] = []) {
        self.initial = initial
        self.steps = steps
    }

    /// Parses scenario text.
    public static func parse(_ text: String) throws(GeometryScenarioError) -> GeometryScenario {
        let value: JSONValue
        do throws(JSONParseError) {
            value = try JSONValue.parse(text)
        } catch {
            throw .syntax(error)
        }
        do throws(JSONDecodingError) {
            return try GeometryScenario(json: value)
        } catch {
            throw .invalid(error)
        }
    }

    /// Decodes a parsed scenario.
    public init(json: JSONValue) throws(JSONDecodingError) {
        let root = try JSONNode(json).object()
        try root.checkKeys(allowed: GeometryScenarioDecoder.stateKeys + ["steps"])
        let initial = try GeometryScenarioDecoder.state(root, base: nil, defaultKeyboard: nil)
        var steps: [GeometryState] = []
        if let stepsNode = root["steps"] {
            var current = initial
            for stepNode in try stepsNode.array() {
                let step = try stepNode.object()
                try step.checkKeys(allowed: GeometryScenarioDecoder.stateKeys)
                current = try GeometryScenarioDecoder.state(step, base: current, defaultKeyboard: nil)
                steps.append(current)
            }
        }
        self.init(initial: initial, steps: steps)
    }

    /// The initial state followed by the state after each step.
    public var states: [GeometryState] {
        [initial] + steps
    }

    /// One report per state: step 0 lists every active rule as activated,
    /// later ones the rules each step activated and deactivated.
    public func reports() -> [GeometryReport] {
        var geometry = KeyboardGeometry(initial)
        var reports = [geometry.report]
        for state in steps {
            reports.append(geometry.update(to: state))
        }
        return reports
    }

    /// The output lines: `{"step":N,"layout":…,"keyboard_frame":…,"windows":[…]}`.
    public func outputLines() -> [String] {
        reports().enumerated().map { index, report in
            report.jsonLine(leading: ["step": .number(Double(index))])
        }
    }
}

extension GeometryState {
    /// Decodes a state from the scenario format without `steps` (for example
    /// a `[geometry]` configuration section converted to JSON). `keyboard` may
    /// be left out when `defaultKeyboard` is given.
    public init(json: JSONValue, defaultKeyboard: SoftwareKeyboard? = nil) throws(JSONDecodingError) {
        let root = try JSONNode(json).object()
        try root.checkKeys(allowed: GeometryScenarioDecoder.stateKeys)
        self = try GeometryScenarioDecoder.state(root, base: nil, defaultKeyboard: defaultKeyboard)
    }
}
