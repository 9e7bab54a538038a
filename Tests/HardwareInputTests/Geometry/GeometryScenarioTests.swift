import Foundation
import KbdJSON
import KbdTOML
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdEvdev
import KbdConfig
import KbdControl
import Testing

@Suite("Geometry scenarios")
struct GeometryScenarioTests {
    /// The scenario of DESIGN.md's Geometry section, verbatim.
    static let designScenario = """
    {
      "screen": {"width": 1366, "height": 1024},
      "near_threshold": 20,
      "hardware_keyboard": false,
      "toolbar": {"buttons": 6, "collapsed": "none"},
      "keyboard": {"kind": "docked", "height": 398},
      "windows": [
        {"id": "main", "frame": {"x": 0, "y": 0, "width": 1366, "height": 1024},
         "safe_area": {"top": 24, "bottom": 20, "leading": 0, "trailing": 0},
         "follows_undocked_keyboard": false, "uses_bottom_safe_area": true,
         "dismiss_padding": 0, "direction": "ltr",
         "rules": [{"name": "awayTop", "away": ["top"]},
                   {"name": "nearTop", "near": ["top"]}]}
      ],
      "steps": [
        {"keyboard": {"kind": "floating", "frame": {"x": 500, "y": 0, "width": 320, "height": 260}}},
        {"hardware_keyboard": true},
        {"toolbar": {"collapsed": "trailing"}},
        {"windows": [{"id": "main", "frame": {"x": 0, "y": 0, "width": 455, "height": 1024}}]}
      ]
    }
    """

    /// DESIGN.md's output example for step 0, verbatim.
    static let designStep0 = """
    {"step": 0, "layout": "docked",
     "keyboard_frame": {"x": 0, "y": 626, "width": 1366, "height": 398},
     "windows": [{"id": "main",
       "guide": {"x": 0, "y": 626, "width": 1366, "height": 398},
       "bottom_offset": 398, "near": ["bottom"], "away": ["top", "leading", "trailing"],
       "dismissed": false, "dismiss_region": null,
       "active_rules": ["awayTop"], "activated": ["awayTop"], "deactivated": []}]}
    """

    @Test func designExampleStepZeroMatchesTheContract() throws {
        let lines = try GeometryScenarioRunner.run(text: Self.designScenario)
        #expect(lines.count == 5)
        #expect(lines[0] == (try JSONValue.parse(Self.designStep0)).serialized())
    }

    @Test func designExampleAllSteps() throws {
        let lines = try GeometryScenarioRunner.run(text: Self.designScenario)
        let rest = #","dismissed":false,"dismiss_region":null,"active_rules":["awayTop"],"activated":[],"deactivated":[]}]}"#
        #expect(lines == [
            #"{"step":0,"layout":"docked","keyboard_frame":{"x":0,"y":626,"width":1366,"height":398},"windows":[{"id":"main","guide":{"x":0,"y":626,"width":1366,"height":398},"bottom_offset":398,"near":["bottom"],"away":["top","leading","trailing"],"dismissed":false,"dismiss_region":null,"active_rules":["awayTop"],"activated":["awayTop"],"deactivated":[]}]}"#,
            #"{"step":1,"layout":"floating","keyboard_frame":{"x":500,"y":0,"width":320,"height":260},"windows":[{"id":"main","guide":{"x":0,"y":1004,"width":1366,"height":20},"bottom_offset":20,"near":[],"away":["top","bottom","leading","trailing"]"# + rest,
            #"{"step":2,"layout":"mini-toolbar","keyboard_frame":{"x":519,"y":969,"width":328,"height":55},"windows":[{"id":"main","guide":{"x":0,"y":969,"width":1366,"height":55},"bottom_offset":55,"near":["bottom"],"away":["top","leading","trailing"]"# + rest,
            #"{"step":3,"layout":"mini-toolbar","keyboard_frame":{"x":1302,"y":969,"width":64,"height":55},"windows":[{"id":"main","guide":{"x":0,"y":969,"width":1366,"height":55},"bottom_offset":55,"near":["bottom","trailing"],"away":["top","leading"]"# + rest,
            #"{"step":4,"layout":"mini-toolbar","keyboard_frame":{"x":1302,"y":969,"width":64,"height":55},"windows":[{"id":"main","guide":{"x":0,"y":969,"width":455,"height":55},"bottom_offset":55,"near":["bottom"],"away":["top","leading","trailing"]"# + rest,
        ])
    }

    /// A minimal valid scenario, with `extra` spliced into the top level and
    /// `window` into the window object.
    static func scenario(_ extra: String = "", window: String = "", keyboard: String = #"{"kind": "docked", "height": 398}"#) -> String {
        """
        {"screen": {"width": 1366, "height": 1024},
         "keyboard": \(keyboard),
         "windows": [{"id": "main", "frame": {"x": 0, "y": 0, "width": 1366, "height": 1024}\(window)}]\(extra)}
        """
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        let text: String
        let message: String
        var testDescription: String { message }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(text: "[]", message: "expected an object"),
        ErrorCase(text: #"{"screen": {"width": 1366, "height": 1024}, "keyboard": {"kind": "hidden"}}"#,
                  message: #"missing required key "windows""#),
        ErrorCase(text: #"{"screen": {"width": 1366, "height": 1024}, "windows": []}"#,
                  message: #"missing required key "keyboard""#),
        ErrorCase(text: #"{"keyboard": {"kind": "hidden"}, "windows": []}"#, message: #"missing required key "screen""#),
        ErrorCase(text: "{\"screen\": {\"width\": 1366, \"height\": 1024},\n \"windows\": [}", message: "line 2, column 14: expected a JSON value or ']'"),
        ErrorCase(text: scenario(#", "windows": []"#), message: "line 3, column 89: expected unique keys; \"windows\" appears twice in this object"),
        ErrorCase(text: scenario(#", "screem": 1"#), message: "screem: unknown key; expected one of description, screen, near_threshold, narrow_width_fraction, hardware_keyboard, toolbar, keyboard, windows, steps"),
        ErrorCase(text: #"{"screen": {"width": 0, "height": 1024}, "keyboard": {"kind": "hidden"}, "windows": []}"#,
                  message: "screen.width: expected a positive number"),
        ErrorCase(text: scenario(#", "near_threshold": -1"#), message: "near_threshold: expected a non-negative number"),
        ErrorCase(text: scenario(#", "narrow_width_fraction": 2"#), message: "narrow_width_fraction: expected a number from 0 to 1"),
        ErrorCase(text: scenario(#", "hardware_keyboard": "yes""#), message: "hardware_keyboard: expected true or false"),
        ErrorCase(text: scenario(keyboard: #"{"kind": "docked"}"#), message: #"keyboard: missing required key "height" for a docked keyboard"#),
        ErrorCase(text: scenario(keyboard: #"{"height": 300}"#), message: #"keyboard: missing required key "kind""#),
        ErrorCase(text: scenario(keyboard: #"{"kind": "flying"}"#), message: #"keyboard.kind: expected one of "hidden", "docked", "undocked", "split", "floating""#),
        ErrorCase(text: scenario(keyboard: #"{"kind": "floating", "height": 300}"#), message: "keyboard.height: unknown key for a floating keyboard; expected one of kind, frame"),
        ErrorCase(text: scenario(keyboard: #"{"kind": "undocked"}"#), message: #"keyboard: missing required key "frame" for an undocked keyboard"#),
        ErrorCase(text: scenario(keyboard: #"{"kind": "hidden", "height": 1}"#), message: "keyboard.height: unknown key for a hidden keyboard; expected one of kind"),
        ErrorCase(text: scenario(keyboard: #"{"kind": "split", "frame": {"x": 0, "y": 0, "width": 10}}"#), message: #"keyboard.frame: missing required key "height""#),
        ErrorCase(text: scenario(keyboard: #"{"kind": "docked", "height": "tall"}"#), message: "keyboard.height: expected a number"),
        ErrorCase(text: scenario(#", "toolbar": {"collapsed": "left"}"#), message: #"toolbar.collapsed: expected one of "none", "leading", "trailing""#),
        ErrorCase(text: scenario(#", "toolbar": {"buttons": 2.5}"#), message: "toolbar.buttons: expected an integer"),
        ErrorCase(text: scenario(#", "toolbar": {"buttons": -1}"#), message: "toolbar.buttons: expected a non-negative integer"),
        ErrorCase(text: scenario(#", "toolbar": {"button_width": -4}"#), message: "toolbar.button_width: expected a non-negative number"),
        ErrorCase(text: scenario(#", "toolbar": {"colour": "red"}"#), message: "toolbar.colour: unknown key; expected one of buttons, collapsed, height, button_width, button_spacing, padding, handle_width"),
        ErrorCase(text: scenario(#", "windows": {}"#.replacingOccurrences(of: "windows", with: "steps")), message: "steps: expected an array"),
        ErrorCase(text: #"{"screen": {"width": 1366, "height": 1024}, "keyboard": {"kind": "hidden"}, "windows": []}"#,
                  message: "windows: expected at least one window"),
        ErrorCase(text: #"{"screen": {"width": 1366, "height": 1024}, "keyboard": {"kind": "hidden"}, "windows": [{"id": "a", "frame": {"x": 0, "y": 0, "width": 1, "height": 1}}, {"id": "b", "frame": {"x": 0, "y": 0, "width": "wide", "height": 1}}]}"#,
                  message: "windows[1].frame.width: expected a number"),
        ErrorCase(text: #"{"screen": {"width": 1366, "height": 1024}, "keyboard": {"kind": "hidden"}, "windows": [{"id": "a", "frame": {"x": 0, "y": 0, "width": 1, "height": 1}}, {"id": "a", "frame": {"x": 0, "y": 0, "width": 1, "height": 1}}]}"#,
                  message: #"windows[1].id: duplicate window id "a""#),
        ErrorCase(text: #"{"screen": {"width": 1366, "height": 1024}, "keyboard": {"kind": "hidden"}, "windows": [{"frame": {"x": 0, "y": 0, "width": 1, "height": 1}}]}"#,
                  message: #"windows[0]: missing required key "id""#),
        ErrorCase(text: #"{"screen": {"width": 1366, "height": 1024}, "keyboard": {"kind": "hidden"}, "windows": [{"id": "a"}]}"#,
                  message: #"windows[0]: missing required key "frame""#),
        ErrorCase(text: #"{"screen": {"width": 1366, "height": 1024}, "keyboard": {"kind": "hidden"}, "windows": [{"id": "", "frame": {}}]}"#,
                  message: "windows[0].id: expected a non-empty string"),
        ErrorCase(text: scenario(window: #", "frame": {"x": 0}"#), message: "line 3, column 87: expected unique keys; \"frame\" appears twice in this object"),
        ErrorCase(text: scenario(window: #", "direction": "up""#), message: #"windows[0].direction: expected one of "ltr", "rtl""#),
        ErrorCase(text: scenario(window: #", "follows": true"#), message: "windows[0].follows: unknown key; expected one of id, frame, safe_area, follows_undocked_keyboard, uses_bottom_safe_area, dismiss_padding, direction, rules"),
        ErrorCase(text: scenario(window: #", "safe_area": {"bottom": -20}"#), message: "windows[0].safe_area.bottom: expected a non-negative number"),
        ErrorCase(text: scenario(window: #", "safe_area": {"left": 20}"#), message: "windows[0].safe_area.left: unknown key; expected one of top, bottom, leading, trailing"),
        ErrorCase(text: scenario(window: #", "dismiss_padding": "44""#), message: "windows[0].dismiss_padding: expected a number"),
        ErrorCase(text: scenario(window: #", "uses_bottom_safe_area": 1"#), message: "windows[0].uses_bottom_safe_area: expected true or false"),
        ErrorCase(text: scenario(window: #", "rules": [{"name": "a", "near": ["top", "middle"]}]"#), message: #"windows[0].rules[0].near[1]: expected one of "top", "bottom", "leading", "trailing""#),
        ErrorCase(text: scenario(window: #", "rules": [{"name": "a"}]"#), message: #"windows[0].rules[0]: expected at least one of the keys "near" and "away""#),
        ErrorCase(text: scenario(window: #", "rules": [{"near": ["top"]}]"#), message: #"windows[0].rules[0]: missing required key "name""#),
        ErrorCase(text: scenario(window: #", "rules": [{"name": "a", "away": ["top"]}, {"name": "a", "near": ["top"]}]"#), message: #"windows[0].rules[1].name: duplicate rule name "a""#),
        ErrorCase(text: scenario(window: #", "rules": [{"name": "a", "away": "top"}]"#), message: "windows[0].rules[0].away: expected an array"),
        ErrorCase(text: scenario(#", "steps": [{"hardware_keyboard": true}, {"steps": []}]"#), message: "steps[1].steps: unknown key; expected one of description, screen, near_threshold, narrow_width_fraction, hardware_keyboard, toolbar, keyboard, windows"),
        ErrorCase(text: scenario(#", "steps": [{"windows": [{"id": "side", "frame": {"x": 0}}]}]"#), message: #"steps[0].windows[0].id: unknown window "side"; expected one of "main""#),
        ErrorCase(text: scenario(#", "steps": [{"windows": [{"frame": {"x": 0}}]}]"#), message: #"steps[0].windows[0]: missing required key "id""#),
        ErrorCase(text: scenario(#", "steps": [{}, {"windows": [{"id": "main", "frame": {"width": -1}}]}]"#), message: "steps[1].windows[0].frame.width: expected a non-negative number"),
        ErrorCase(text: scenario(#", "steps": [{"keyboard": {"kind": "floating"}}]"#), message: #"steps[0].keyboard: missing required key "frame" for a floating keyboard"#),
        ErrorCase(text: scenario(#", "steps": [{"keyboard": {"kind": "hidden"}}, {"keyboard": {"kind": "docked"}}]"#), message: #"steps[1].keyboard: missing required key "height" for a docked keyboard"#),
        ErrorCase(text: scenario(#", "steps": [{"keyboard": {"frame": {"x": 1}}}]"#), message: "steps[0].keyboard.frame: unknown key for a docked keyboard; expected one of kind, height"),
        ErrorCase(text: scenario(#", "steps": [{"screen": {"height": 0}}]"#), message: "steps[0].screen.height: expected a positive number"),
        ErrorCase(text: scenario(#", "steps": [3]"#), message: "steps[0]: expected an object"),
    ]

    @Test(arguments: errorCases)
    func scenarioErrorsNameTheJSONPath(_ example: ErrorCase) {
        do {
            _ = try GeometryScenarioRunner.run(text: example.text)
            Issue.record("expected an error")
        } catch {
            #expect(error.description == example.message)
        }
    }

    @Test func syntaxAndShapeErrorsAreDistinguished() {
        #expect(throws: GeometryScenarioError.syntax(JSONParseError(line: 1, column: 2, offset: 1, message: "expected a string key or '}'"))) {
            try GeometryScenario.parse("{")
        }
        #expect(throws: GeometryScenarioError.invalid(JSONDecodingError(path: JSONPath(), message: "expected an object"))) {
            try GeometryScenario.parse("1")
        }
    }

    @Test func stepsChangeOnlyWhatTheyName() throws {
        let text = Self.scenario(#"""
        , "steps": [
            {"keyboard": {"kind": "floating", "frame": {"x": 10, "y": 20, "width": 320, "height": 260}}},
            {"keyboard": {"frame": {"y": 300}}},
            {"keyboard": {"kind": "split"}},
            {"windows": [{"id": "main", "frame": {"width": 683}, "follows_undocked_keyboard": true,
                          "rules": [{"name": "top", "near": ["top"]}]}]},
            {"windows": [{"id": "main", "safe_area": {"bottom": 34}}], "toolbar": {"buttons": 3, "height": 40}},
            {"screen": {"width": 1024, "height": 1366}, "near_threshold": 5, "description": "rotated"}
        ]
        """#, window: #", "dismiss_padding": 10, "rules": [{"name": "bottom", "near": ["bottom"]}]"#)
        let scenario = try GeometryScenario.parse(text)
        #expect(scenario.steps.count == 6)
        #expect(scenario.steps[0].keyboard == .floating(frame: rect(10, 20, 320, 260)))
        #expect(scenario.steps[1].keyboard == .floating(frame: rect(10, 300, 320, 260)))
        #expect(scenario.steps[2].keyboard == .split(frame: rect(10, 300, 320, 260)))
        let main3 = scenario.steps[3].windows[0]
        #expect(main3.frame == rect(0, 0, 683, 1024))
        #expect(main3.followsUndockedKeyboard)
        #expect(main3.dismissPadding == 10)
        #expect(main3.rules == [TrackingRule(name: "top", near: .top)])
        let main4 = scenario.steps[4].windows[0]
        #expect(main4.safeArea == EdgeInsets(top: 0, bottom: 34))
        #expect(main4.rules == main3.rules)
        #expect(scenario.steps[4].toolbar == MiniToolbar(buttons: 3, metrics: ToolbarMetrics(height: 40)))
        #expect(scenario.steps[5].screen == Size(width: 1024, height: 1366))
        #expect(scenario.steps[5].nearThreshold == 5)
        #expect(scenario.steps[5].toolbar.metrics.height == 40)
        #expect(scenario.steps[5].keyboard == scenario.steps[2].keyboard)
        #expect(scenario.initial.windows[0].rules == [TrackingRule(name: "bottom", near: .bottom)])
    }

    @Test func defaultsWhenKeysAreLeftOut() throws {
        let scenario = try GeometryScenario.parse(Self.scenario())
        let state = scenario.initial
        #expect(state.nearThreshold == 20)
        #expect(state.narrowWidthFraction == 0.4)
        #expect(state.hardwareKeyboard == false)
        #expect(state.toolbar == MiniToolbar(buttons: 6, collapsed: .expanded, metrics: .standard))
        #expect(state.windows[0] == AppWindow(id: "main", frame: rect(0, 0, 1366, 1024)))
        #expect(scenario.steps.isEmpty)
        #expect(scenario.outputLines().count == 1)
    }

    @Test func toolbarMetricsFromTheScenario() throws {
        let text = Self.scenario(#", "hardware_keyboard": true, "toolbar": {"buttons": 4, "collapsed": "none", "height": 40, "button_width": 30, "button_spacing": 0, "padding": 5, "handle_width": 50}"#)
        let report = try #require(GeometryScenario.parse(text).reports().first)
        #expect(report.keyboardFrame == rect(618, 984, 130, 40))
    }

    @Test func rulesActivateAndDeactivateAcrossSteps() throws {
        let text = Self.scenario(#"""
        , "steps": [
            {"keyboard": {"kind": "floating", "frame": {"x": 523, "y": 382, "width": 320, "height": 260}}},
            {"keyboard": {"frame": {"x": 0, "y": 0}}},
            {"keyboard": {"frame": {"x": 523}}},
            {"keyboard": {"kind": "hidden"}}
        ]
        """#, window: #"""
        , "follows_undocked_keyboard": true, "rules": [
            {"name": "awayTop", "away": ["top"]}, {"name": "nearTop", "near": ["top"]},
            {"name": "nearTopLeading", "near": ["top", "leading"]},
            {"name": "awaySides", "away": ["leading", "trailing"]}, {"name": "nearBottom", "near": ["bottom"]}]
        """#)
        let reports = try GeometryScenario.parse(text).reports().map { $0.windows[0] }
        let table = reports.map { [$0.activeRules, $0.activated, $0.deactivated] }
        #expect(table == [
            [["awayTop", "awaySides", "nearBottom"], ["awayTop", "awaySides", "nearBottom"], []],
            [["awayTop", "awaySides"], [], ["nearBottom"]],
            [["nearTop", "nearTopLeading"], ["nearTop", "nearTopLeading"], ["awayTop", "awaySides"]],
            [["nearTop", "awaySides"], ["awaySides"], ["nearTopLeading"]],
            [["awayTop", "awaySides"], ["awayTop"], ["nearTop"]],
        ])
    }

    @Test func stateFromAConfigurationSection() throws {
        let json = try JSONValue.parse(#"{"screen": {"width": 1280, "height": 800}, "toolbar": {"buttons": 4}, "windows": [{"id": "shell", "frame": {"x": 0, "y": 0, "width": 1280, "height": 800}}]}"#)
        let state = try GeometryState(json: json, defaultKeyboard: .docked(height: 300))
        #expect(state.keyboard == .docked(height: 300))
        #expect(state.toolbar.buttons == 4)
        #expect(throws: JSONDecodingError(path: JSONPath(), message: #"missing required key "keyboard""#)) {
            try GeometryState(json: json)
        }
        #expect(throws: JSONDecodingError(path: JSONPath([.key("steps")]), message: "unknown key; expected one of description, screen, near_threshold, narrow_width_fraction, hardware_keyboard, toolbar, keyboard, windows")) {
            try GeometryState(json: ["steps": [], "screen": ["width": 1, "height": 1]], defaultKeyboard: .hidden)
        }
    }

    static let examplesDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("examples/geometry")

    @Test(arguments: [("design-example.json", 5), ("split-view.json", 8), ("stage-manager.json", 9)])
    func exampleScenariosRun(file: String, lines: Int) throws {
        let text = try String(contentsOf: Self.examplesDirectory.appendingPathComponent(file), encoding: .utf8)
        let output = try GeometryScenarioRunner.run(text: text)
        #expect(output.count == lines)
        for (index, line) in output.enumerated() {
            let value = try JSONValue.parse(line)
            #expect(value.objectValue?.keys == ["step", "layout", "keyboard_frame", "windows"])
            #expect(value["step"] == .number(Double(index)))
        }
        #expect(try GeometryScenarioRunner.svg(text: text).hasSuffix("</svg>\n"))
    }

    @Test func designExampleFileMatchesDesignScenario() throws {
        let text = try String(contentsOf: Self.examplesDirectory.appendingPathComponent("design-example.json"), encoding: .utf8)
        #expect(try GeometryScenarioRunner.run(text: text) == GeometryScenarioRunner.run(text: Self.designScenario))
    }
}
