import KbdJSON
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdConfig
import KbdControl
import Testing

@Suite("Geometry model")
struct GeometryModelTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let state: GeometryState
        let guide: Rect
        let bottomOffset: Double
        let near: EdgeSet
        var dismissed = false
        var dismissRegion: Rect? = nil
        var testDescription: String { name }
    }

    static let docked = SoftwareKeyboard.docked(height: 398)
    static let centre = rect(523, 382, 320, 260)

    static let keyboardCases: [Case] = [
        // Hidden: the bottom strip, as tall as the bottom safe area.
        Case(name: "hidden, safe area on", state: state(.hidden, fullScreen),
             guide: rect(0, 1004, 1366, 20), bottomOffset: 20, near: [], dismissed: true),
        Case(name: "hidden, uses_bottom_safe_area false", state: state(.hidden, window(0, 0, 1366, 1024, usesBottomSafeArea: false)),
             guide: rect(0, 1024, 1366, 0), bottomOffset: 0, near: [], dismissed: true),
        Case(name: "hidden, no bottom inset", state: state(.hidden, window(0, 0, 1366, 1024, safeBottom: 0)),
             guide: rect(0, 1024, 1366, 0), bottomOffset: 0, near: [], dismissed: true),
        Case(name: "hidden, offset window", state: state(.hidden, offsetWindow),
             guide: rect(0, 680, 800, 20), bottomOffset: 20, near: [], dismissed: true),

        // Docked: the keyboard's part over the window, near bottom only.
        Case(name: "docked, full screen", state: state(docked, fullScreen),
             guide: rect(0, 626, 1366, 398), bottomOffset: 398, near: .bottom),
        Case(name: "docked, full screen, safe area off", state: state(docked, window(0, 0, 1366, 1024, usesBottomSafeArea: false)),
             guide: rect(0, 626, 1366, 398), bottomOffset: 398, near: .bottom),
        Case(name: "docked, offset window", state: state(docked, offsetWindow),
             guide: rect(0, 526, 800, 174), bottomOffset: 174, near: .bottom),
        Case(name: "docked, window above the keyboard", state: state(docked, window(200, 50, 800, 500)),
             guide: rect(0, 480, 800, 20), bottomOffset: 20, near: [], dismissed: true),
        Case(name: "docked, left third", state: state(docked, leftThird),
             guide: rect(0, 626, 455, 398), bottomOffset: 398, near: .bottom),
        Case(name: "docked, right half", state: state(docked, rightHalf),
             guide: rect(0, 626, 683, 398), bottomOffset: 398, near: .bottom),
        Case(name: "docked, full-screen keyboard", state: state(.docked(height: 1024), fullScreen),
             guide: rect(0, 0, 1366, 1024), bottomOffset: 1024, near: .bottom),
        Case(name: "docked, height beyond the screen is clamped", state: state(.docked(height: 2000), fullScreen),
             guide: rect(0, 0, 1366, 1024), bottomOffset: 1024, near: .bottom),

        // Not following: undocked, split and floating drop to the bottom strip.
        Case(name: "floating centre, not following", state: state(.floating(frame: centre), fullScreen),
             guide: rect(0, 1004, 1366, 20), bottomOffset: 20, near: []),
        Case(name: "undocked, not following", state: state(.undocked(frame: rect(0, 347, 1366, 330)), fullScreen),
             guide: rect(0, 1004, 1366, 20), bottomOffset: 20, near: []),
        Case(name: "split near the top, not following", state: state(.split(frame: rect(0, 0, 1366, 300)), fullScreen),
             guide: rect(0, 1004, 1366, 20), bottomOffset: 20, near: []),
        Case(name: "floating, not following, safe area off", state: state(.floating(frame: centre), window(0, 0, 1366, 1024, usesBottomSafeArea: false)),
             guide: rect(0, 1024, 1366, 0), bottomOffset: 0, near: []),

        // Floating, following: near any edge by distance (≤ 20 points).
        Case(name: "floating centre", state: state(.floating(frame: centre), following(fullScreen)),
             guide: centre, bottomOffset: 642, near: []),
        Case(name: "floating top-left corner", state: state(.floating(frame: rect(5, 10, 320, 260)), following(fullScreen)),
             guide: rect(5, 10, 320, 260), bottomOffset: 1014, near: [.top, .leading]),
        Case(name: "floating top-right corner", state: state(.floating(frame: rect(1041, 0, 320, 260)), following(fullScreen)),
             guide: rect(1041, 0, 320, 260), bottomOffset: 1024, near: [.top, .trailing]),
        Case(name: "floating bottom-left corner", state: state(.floating(frame: rect(0, 764, 320, 260)), following(fullScreen)),
             guide: rect(0, 764, 320, 260), bottomOffset: 260, near: [.bottom, .leading]),
        Case(name: "floating bottom-right corner", state: state(.floating(frame: rect(1041, 759, 320, 260)), following(fullScreen)),
             guide: rect(1041, 759, 320, 260), bottomOffset: 265, near: [.bottom, .trailing]),
        Case(name: "floating exactly 20 from leading is near", state: state(.floating(frame: rect(20, 382, 320, 260)), following(fullScreen)),
             guide: rect(20, 382, 320, 260), bottomOffset: 642, near: .leading),
        Case(name: "floating 21 from leading is away", state: state(.floating(frame: rect(21, 382, 320, 260)), following(fullScreen)),
             guide: rect(21, 382, 320, 260), bottomOffset: 642, near: []),
        Case(name: "floating exactly 20 from top is near", state: state(.floating(frame: rect(523, 20, 320, 260)), following(fullScreen)),
             guide: rect(523, 20, 320, 260), bottomOffset: 1004, near: .top),
        Case(name: "floating, full screen, same spot as the half-screen case", state: state(.floating(frame: rect(600, 382, 320, 260)), following(fullScreen)),
             guide: rect(600, 382, 320, 260), bottomOffset: 642, near: []),
        Case(name: "floating over the right half's leading edge", state: state(.floating(frame: rect(600, 382, 320, 260)), following(rightHalf)),
             guide: rect(0, 382, 237, 260), bottomOffset: 642, near: .leading),
        Case(name: "floating over the wider app's trailing edge", state: state(.floating(frame: rect(600, 382, 320, 260)), following(leftTwoThirds)),
             guide: rect(600, 382, 311, 260), bottomOffset: 642, near: .trailing),
        Case(name: "floating in a narrow third: top plays, leading does not", state: state(.floating(frame: rect(0, 5, 320, 260)), following(leftThird)),
             guide: rect(0, 5, 320, 260), bottomOffset: 1019, near: .top),
        Case(name: "floating across a narrow third's trailing edge", state: state(.floating(frame: rect(200, 382, 320, 260)), following(leftThird)),
             guide: rect(200, 382, 255, 260), bottomOffset: 642, near: []),
        Case(name: "floating outside the window counts as dismissed", state: state(.floating(frame: rect(100, 382, 320, 260)), following(rightHalf)),
             guide: rect(0, 1004, 683, 20), bottomOffset: 20, near: [], dismissed: true),
        Case(name: "floating touching the window's edge is not over it", state: state(.floating(frame: rect(363, 382, 320, 260)), following(rightHalf)),
             guide: rect(0, 1004, 683, 20), bottomOffset: 20, near: [], dismissed: true),
        Case(name: "floating in the offset window's corner", state: state(.floating(frame: rect(190, 90, 320, 260)), following(offsetWindow)),
             guide: rect(0, 0, 310, 250), bottomOffset: 700, near: [.top, .leading]),
        Case(name: "floating at the left, rtl: near trailing", state: state(.floating(frame: rect(5, 400, 320, 260)), following(window(0, 0, 1366, 1024, direction: .rtl))),
             guide: rect(5, 400, 320, 260), bottomOffset: 624, near: .trailing),
        Case(name: "floating at the right, rtl: near leading", state: state(.floating(frame: rect(1041, 400, 320, 260)), following(window(0, 0, 1366, 1024, direction: .rtl))),
             guide: rect(1041, 400, 320, 260), bottomOffset: 624, near: .leading),
        Case(name: "floating bottom-left, rtl", state: state(.floating(frame: rect(0, 764, 320, 260)), following(window(0, 0, 1366, 1024, direction: .rtl))),
             guide: rect(0, 764, 320, 260), bottomOffset: 260, near: [.bottom, .trailing]),

        // Undocked and split, following: away from all until near the top.
        Case(name: "undocked centre", state: state(.undocked(frame: rect(0, 347, 1366, 330)), following(fullScreen)),
             guide: rect(0, 347, 1366, 330), bottomOffset: 677, near: []),
        Case(name: "undocked near the top", state: state(.undocked(frame: rect(0, 15, 1366, 330)), following(fullScreen)),
             guide: rect(0, 15, 1366, 330), bottomOffset: 1009, near: .top),
        Case(name: "undocked just above the bottom is still away", state: state(.undocked(frame: rect(0, 689, 1366, 330)), following(fullScreen)),
             guide: rect(0, 689, 1366, 330), bottomOffset: 335, near: []),
        Case(name: "split centre", state: state(.split(frame: rect(0, 400, 1366, 300)), following(fullScreen)),
             guide: rect(0, 400, 1366, 300), bottomOffset: 624, near: []),
        Case(name: "split at the top", state: state(.split(frame: rect(0, 0, 1366, 300)), following(fullScreen)),
             guide: rect(0, 0, 1366, 300), bottomOffset: 1024, near: .top),
        Case(name: "split 21 from the top", state: state(.split(frame: rect(0, 21, 1366, 300)), following(fullScreen)),
             guide: rect(0, 21, 1366, 300), bottomOffset: 1003, near: []),
        Case(name: "undocked near the offset window's top", state: state(.undocked(frame: rect(0, 110, 1366, 330)), following(offsetWindow)),
             guide: rect(0, 10, 800, 330), bottomOffset: 690, near: .top),
        Case(name: "undocked in a narrow third near the top", state: state(.undocked(frame: rect(0, 10, 1366, 330)), following(rightThird)),
             guide: rect(0, 10, 455, 330), bottomOffset: 1014, near: .top),
        Case(name: "split below the offset window is dismissed", state: state(.split(frame: rect(0, 820, 1366, 200)), following(offsetWindow)),
             guide: rect(0, 680, 800, 20), bottomOffset: 20, near: [], dismissed: true),
    ]

    @Test(arguments: keyboardCases)
    func softwareKeyboard(_ example: Case) throws {
        try check(example)
    }

    static func toolbar(_ buttons: Int = 6, _ collapsed: ToolbarCollapse = .expanded) -> MiniToolbar {
        MiniToolbar(buttons: buttons, collapsed: collapsed)
    }

    static let rtlFull = window(0, 0, 1366, 1024, direction: .rtl)

    static let toolbarCases: [Case] = [
        Case(name: "3 buttons, not following: window width at the bar's height", state: state(docked, fullScreen, hardware: true, toolbar: toolbar(3)),
             guide: rect(0, 969, 1366, 55), bottomOffset: 55, near: .bottom),
        Case(name: "3 buttons, following: the bar's real edges", state: state(docked, following(fullScreen), hardware: true, toolbar: toolbar(3)),
             guide: rect(597, 969, 172, 55), bottomOffset: 55, near: .bottom),
        Case(name: "6 buttons, following", state: state(docked, following(fullScreen), hardware: true),
             guide: rect(519, 969, 328, 55), bottomOffset: 55, near: .bottom),
        Case(name: "40 buttons: full screen width", state: state(docked, following(fullScreen), hardware: true, toolbar: toolbar(40)),
             guide: rect(0, 969, 1366, 55), bottomOffset: 55, near: .bottom),
        Case(name: "collapsed leading, following", state: state(docked, following(fullScreen), hardware: true, toolbar: toolbar(6, .leading)),
             guide: rect(0, 969, 64, 55), bottomOffset: 55, near: [.bottom, .leading]),
        Case(name: "collapsed trailing, following", state: state(docked, following(fullScreen), hardware: true, toolbar: toolbar(6, .trailing)),
             guide: rect(1302, 969, 64, 55), bottomOffset: 55, near: [.bottom, .trailing]),
        Case(name: "collapsed leading, not following", state: state(docked, fullScreen, hardware: true, toolbar: toolbar(6, .leading)),
             guide: rect(0, 969, 1366, 55), bottomOffset: 55, near: [.bottom, .leading]),
        Case(name: "collapsed to the screen's left, rtl window: near trailing", state: state(docked, following(rtlFull), hardware: true, toolbar: toolbar(6, .leading)),
             guide: rect(0, 969, 64, 55), bottomOffset: 55, near: [.bottom, .trailing]),
        Case(name: "collapsed to the screen's right, rtl window: near leading", state: state(docked, following(rtlFull), hardware: true, toolbar: toolbar(6, .trailing)),
             guide: rect(1302, 969, 64, 55), bottomOffset: 55, near: [.bottom, .leading]),
        Case(name: "collapsed trailing, not over the left third", state: state(docked, following(leftThird), hardware: true, toolbar: toolbar(6, .trailing)),
             guide: rect(0, 1004, 455, 20), bottomOffset: 20, near: [], dismissed: true),
        Case(name: "collapsed trailing, right third is narrow", state: state(docked, following(rightThird), hardware: true, toolbar: toolbar(6, .trailing)),
             guide: rect(391, 969, 64, 55), bottomOffset: 55, near: .bottom),
        Case(name: "collapsed trailing, right half", state: state(docked, following(rightHalf), hardware: true, toolbar: toolbar(6, .trailing)),
             guide: rect(619, 969, 64, 55), bottomOffset: 55, near: [.bottom, .trailing]),
        Case(name: "collapsed leading, left third not following", state: state(docked, leftThird, hardware: true, toolbar: toolbar(6, .leading)),
             guide: rect(0, 969, 455, 55), bottomOffset: 55, near: .bottom),
        Case(name: "expanded, window reaching the bottom off the corner", state: state(docked, following(window(200, 324, 800, 700)), hardware: true, toolbar: toolbar(3)),
             guide: rect(397, 645, 172, 55), bottomOffset: 55, near: .bottom),
        Case(name: "expanded, offset window above the bar", state: state(docked, offsetWindow, hardware: true),
             guide: rect(0, 680, 800, 20), bottomOffset: 20, near: [], dismissed: true),
        Case(name: "hardware keyboard while no text input: hidden", state: state(.hidden, fullScreen, hardware: true),
             guide: rect(0, 1004, 1366, 20), bottomOffset: 20, near: [], dismissed: true),
        Case(name: "hardware keyboard replaces a floating keyboard", state: state(.floating(frame: centre), following(fullScreen), hardware: true),
             guide: rect(519, 969, 328, 55), bottomOffset: 55, near: .bottom),
    ]

    @Test(arguments: toolbarCases)
    func miniToolbar(_ example: Case) throws {
        try check(example)
    }

    static let paddingCases: [Case] = [
        Case(name: "docked, padding 44", state: state(docked, window(0, 0, 1366, 1024, dismissPadding: 44)),
             guide: rect(0, 626, 1366, 398), bottomOffset: 398, near: .bottom, dismissRegion: rect(0, 582, 1366, 44)),
        Case(name: "docked in the offset window, padding 30", state: state(docked, window(200, 100, 800, 700, dismissPadding: 30)),
             guide: rect(0, 526, 800, 174), bottomOffset: 174, near: .bottom, dismissRegion: rect(0, 496, 800, 30)),
        Case(name: "floating near the top: region clipped to the window", state: state(.floating(frame: rect(523, 10, 320, 260)), window(0, 0, 1366, 1024, follows: true, dismissPadding: 44)),
             guide: rect(523, 10, 320, 260), bottomOffset: 1014, near: .top, dismissRegion: rect(523, 0, 320, 10)),
        Case(name: "floating at the top: no room for a region", state: state(.floating(frame: rect(523, 0, 320, 260)), window(0, 0, 1366, 1024, follows: true, dismissPadding: 44)),
             guide: rect(523, 0, 320, 260), bottomOffset: 1024, near: .top),
        Case(name: "hidden: no region", state: state(.hidden, window(0, 0, 1366, 1024, dismissPadding: 44)),
             guide: rect(0, 1004, 1366, 20), bottomOffset: 20, near: [], dismissed: true),
        Case(name: "floating, not following: no region", state: state(.floating(frame: centre), window(0, 0, 1366, 1024, dismissPadding: 44)),
             guide: rect(0, 1004, 1366, 20), bottomOffset: 20, near: []),
        Case(name: "toolbar, not following, padding 30", state: state(docked, window(0, 0, 1366, 1024, dismissPadding: 30), hardware: true),
             guide: rect(0, 969, 1366, 55), bottomOffset: 55, near: .bottom, dismissRegion: rect(0, 939, 1366, 30)),
        Case(name: "toolbar, following, padding 30", state: state(docked, window(0, 0, 1366, 1024, follows: true, dismissPadding: 30), hardware: true),
             guide: rect(519, 969, 328, 55), bottomOffset: 55, near: .bottom, dismissRegion: rect(519, 939, 328, 30)),
    ]

    @Test(arguments: paddingCases)
    func dismissPadding(_ example: Case) throws {
        try check(example)
    }

    private func check(_ example: Case) throws {
        let report = try #require(GeometryModel.report(for: example.state).windows.first)
        #expect(report.guide == example.guide)
        #expect(report.bottomOffset == example.bottomOffset)
        #expect(report.near == example.near)
        #expect(report.away == example.near.complement)
        #expect(report.dismissed == example.dismissed)
        #expect(report.dismissRegion == example.dismissRegion)
    }

    struct LayoutCase: Sendable, CustomTestStringConvertible {
        let state: GeometryState
        let layout: GeometryLayout
        let frame: Rect?
        var testDescription: String { "\(layout.rawValue) \(frame.map(\.description) ?? "nil")" }
    }

    @Test(arguments: [
        LayoutCase(state: state(.hidden, fullScreen), layout: .hidden, frame: nil),
        LayoutCase(state: state(.hidden, fullScreen, hardware: true), layout: .hidden, frame: nil),
        LayoutCase(state: state(docked, fullScreen), layout: .docked, frame: rect(0, 626, 1366, 398)),
        LayoutCase(state: state(.undocked(frame: rect(0, 300, 1366, 330)), fullScreen), layout: .undocked, frame: rect(0, 300, 1366, 330)),
        LayoutCase(state: state(.split(frame: rect(0, 300, 1366, 300)), fullScreen), layout: .split, frame: rect(0, 300, 1366, 300)),
        LayoutCase(state: state(.floating(frame: centre), fullScreen), layout: .floating, frame: centre),
        LayoutCase(state: state(docked, fullScreen, hardware: true), layout: .miniToolbar, frame: rect(519, 969, 328, 55)),
        LayoutCase(state: state(.split(frame: rect(0, 300, 1366, 300)), fullScreen, hardware: true, toolbar: toolbar(6, .leading)),
                   layout: .miniToolbar, frame: rect(0, 969, 64, 55)),
    ])
    func overallLayoutAndKeyboardFrame(_ example: LayoutCase) {
        let report = GeometryModel.report(for: example.state)
        #expect(report.layout == example.layout)
        #expect(report.keyboardFrame == example.frame)
    }

    @Test(arguments: [
        (0, 24.0), (1, 68.0), (3, 172.0), (6, 328.0), (10, 536.0), (25, 1316.0), (26, 1366.0), (100, 1366.0),
    ])
    func toolbarWidthGrowsWithButtonsUpToTheScreen(buttons: Int, width: Double) {
        let frame = MiniToolbar(buttons: buttons).frame(onScreen: iPadScreen)
        #expect(frame.width == width)
        #expect(frame.midX == 683)
        #expect(frame.maxY == 1024)
        #expect(frame.height == 55)
    }

    @Test func toolbarMetricsAreConfigurable() {
        let metrics = ToolbarMetrics(height: 40, buttonWidth: 30, buttonSpacing: 0, padding: 5, handleWidth: 50)
        #expect(MiniToolbar(buttons: 4, metrics: metrics).frame(onScreen: iPadScreen) == rect(618, 984, 130, 40))
        #expect(MiniToolbar(buttons: 4, collapsed: .leading, metrics: metrics).frame(onScreen: iPadScreen) == rect(0, 984, 50, 40))
        #expect(MiniToolbar(buttons: 4, collapsed: .trailing, metrics: metrics).frame(onScreen: iPadScreen) == rect(1316, 984, 50, 40))
        #expect(ToolbarMetrics.standard.expandedWidth(buttons: 6) == 328)
    }

    @Test(arguments: [
        (455.0, true), (546.0, true), (546.4, false), (683.0, false), (911.0, false), (320.0, true),
    ])
    func narrowBelowFortyPercentOfTheScreen(width: Double, narrow: Bool) {
        let state = state(.hidden, window(0, 0, width, 1024))
        #expect(state.isNarrow(state.windows[0]) == narrow)
    }

    @Test func nearThresholdIsConfigurable() {
        var wide = state(.floating(frame: rect(30, 382, 320, 260)), following(fullScreen))
        #expect(GeometryModel.report(for: wide).windows[0].near == [])
        wide.nearThreshold = 30
        #expect(GeometryModel.report(for: wide).windows[0].near == .leading)
        wide.nearThreshold = 0
        wide.keyboard = .floating(frame: rect(0, 382, 320, 260))
        #expect(GeometryModel.report(for: wide).windows[0].near == .leading)
    }

    @Test func windowsAreReportedIndependently() {
        let chat = window(916, 0, 450, 1024, id: "chat", direction: .rtl)
        let notes = window(0, 0, 906, 1024, id: "notes", follows: true)
        let report = GeometryModel.report(for: state(.floating(frame: rect(760, 600, 320, 260)), notes, chat))
        #expect(report.windows.map(\.id) == ["notes", "chat"])
        #expect(report.window("notes")?.guide == rect(760, 600, 146, 260))
        #expect(report.window("notes")?.near == .trailing)
        #expect(report.window("chat")?.guide == rect(0, 1004, 450, 20))
        #expect(report.window("chat")?.dismissed == false)
        #expect(report.window("missing") == nil)
    }

    struct RuleCase: Sendable, CustomTestStringConvertible {
        let near: EdgeSet
        let rule: TrackingRule
        let active: Bool
        var testDescription: String { "\(rule.name) near \(near)" }
    }

    @Test(arguments: [
        RuleCase(near: [], rule: TrackingRule(name: "awayTop", away: .top), active: true),
        RuleCase(near: .top, rule: TrackingRule(name: "awayTop", away: .top), active: false),
        RuleCase(near: .top, rule: TrackingRule(name: "nearTop", near: .top), active: true),
        RuleCase(near: [.top, .leading], rule: TrackingRule(name: "nearTopLeading", near: [.top, .leading]), active: true),
        RuleCase(near: .top, rule: TrackingRule(name: "nearTopLeading", near: [.top, .leading]), active: false),
        RuleCase(near: .bottom, rule: TrackingRule(name: "awaySides", away: .horizontal), active: true),
        RuleCase(near: [.bottom, .trailing], rule: TrackingRule(name: "awaySides", away: .horizontal), active: false),
        RuleCase(near: .bottom, rule: TrackingRule(name: "bottomNotTop", near: .bottom, away: .top), active: true),
        RuleCase(near: [.top, .bottom], rule: TrackingRule(name: "bottomNotTop", near: .bottom, away: .top), active: false),
    ])
    func rulesNeedAllTheirEdges(_ example: RuleCase) {
        #expect(example.rule.isActive(near: example.near) == example.active)
    }

    @Test func edgeSetsListEdgesInOrder() {
        let set: EdgeSet = [.trailing, .top, .leading]
        #expect(set.edges == [.top, .leading, .trailing])
        #expect(set.complement.edges == [.bottom])
        #expect(EdgeSet(Edge.allCases.reversed()) == .all)
        #expect(set.jsonValue.serialized() == #"["top","leading","trailing"]"#)
        #expect(set.description == "[top, leading, trailing]")
        #expect(Edge.allCases.sorted() == [.top, .bottom, .leading, .trailing])
        #expect(LayoutDirection.rtl.leftEdge == .trailing)
        #expect(LayoutDirection.ltr.leftEdge == .leading)
    }

    @Test func rectIntersectionNeedsArea() {
        #expect(rect(0, 0, 10, 10).intersection(rect(5, 5, 10, 10)) == rect(5, 5, 5, 5))
        #expect(rect(0, 0, 10, 10).intersection(rect(10, 0, 10, 10)) == nil)
        #expect(rect(0, 0, 10, 10).intersection(rect(20, 20, 1, 1)) == nil)
        #expect(rect(0, 0, 10, 0).isEmpty)
        #expect(rect(1.5, 2, 3, 4).jsonValue.serialized() == #"{"x":1.5,"y":2,"width":3,"height":4}"#)
        #expect(rect(1.5, 2, 3, 4).description == "(1.5, 2, 3×4)")
    }
}
