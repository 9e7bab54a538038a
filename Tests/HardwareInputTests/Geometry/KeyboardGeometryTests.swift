import KbdJSON
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdControl
import Testing

@Suite("Keyboard geometry with memory")
struct KeyboardGeometryTests {
    static let rules = [
        TrackingRule(name: "nearBottom", near: .bottom),
        TrackingRule(name: "awaySides", away: .horizontal),
        TrackingRule(name: "nearTrailing", near: .trailing),
        TrackingRule(name: "nearTop", near: .top),
    ]

    static func start(_ keyboard: SoftwareKeyboard = .docked(height: 398)) -> KeyboardGeometry {
        KeyboardGeometry(state(keyboard, window(0, 0, 1366, 1024, id: "main", follows: true, rules: rules)))
    }

    @Test func firstReportActivatesEveryActiveRule() {
        let geometry = Self.start()
        let main = geometry.report.windows[0]
        #expect(geometry.report.layout == .docked)
        #expect(main.activeRules == ["nearBottom", "awaySides"])
        #expect(main.activated == ["nearBottom", "awaySides"])
        #expect(main.deactivated == [])
    }

    @Test func attachAndDetachInASequence() throws {
        var geometry = Self.start()

        let attachedReport = geometry.setHardwareKeyboard(true)
        let attached = try #require(attachedReport)
        #expect(attached.layout == .miniToolbar)
        #expect(attached.keyboardFrame == rect(519, 969, 328, 55))
        #expect(attached.windows[0].guide == rect(519, 969, 328, 55))
        #expect(attached.windows[0].activated == [])
        #expect(attached.windows[0].deactivated == [])

        #expect(geometry.setHardwareKeyboard(true) == nil, "same presence again: nothing changed")

        let collapsed = geometry.update { $0.toolbar.collapsed = .trailing }
        #expect(collapsed.windows[0].near == [.bottom, .trailing])
        #expect(collapsed.windows[0].activeRules == ["nearBottom", "nearTrailing"])
        #expect(collapsed.windows[0].activated == ["nearTrailing"])
        #expect(collapsed.windows[0].deactivated == ["awaySides"])

        let detachedReport = geometry.setHardwareKeyboard(false)
        let detached = try #require(detachedReport)
        #expect(detached.layout == .docked)
        #expect(detached.keyboardFrame == rect(0, 626, 1366, 398))
        #expect(detached.windows[0].activated == ["awaySides"])
        #expect(detached.windows[0].deactivated == ["nearTrailing"])
        #expect(geometry.state.toolbar.collapsed == .trailing, "the toolbar keeps its state for next time")
    }

    @Test func theSoftwareKeyboardFromBeforeComesBack() throws {
        var geometry = Self.start(.floating(frame: rect(10, 10, 320, 260)))
        #expect(geometry.report.windows[0].near == [.top, .leading])
        #expect(geometry.report.windows[0].activeRules == ["nearTop"])

        let attachedReport = geometry.setHardwareKeyboard(true)
        let attached = try #require(attachedReport)
        #expect(attached.layout == .miniToolbar)
        #expect(attached.windows[0].activated == ["nearBottom", "awaySides"])
        #expect(attached.windows[0].deactivated == ["nearTop"])

        // The shell moves the (invisible) floating keyboard meanwhile: the
        // toolbar stays put, so nothing changes for the windows.
        #expect(geometry.setSoftwareKeyboard(.floating(frame: rect(600, 400, 320, 260))) == nil)

        let detachedReport = geometry.setHardwareKeyboard(false)
        let detached = try #require(detachedReport)
        #expect(detached.layout == .floating)
        #expect(detached.keyboardFrame == rect(600, 400, 320, 260))
        #expect(detached.windows[0].near == [])
        #expect(detached.windows[0].activated == [])
        #expect(detached.windows[0].deactivated == ["nearBottom"])
    }

    @Test func noToolbarWithoutTextInput() throws {
        var geometry = Self.start(.hidden)
        #expect(geometry.setHardwareKeyboard(true) == nil, "hidden stays hidden")
        #expect(geometry.state.hardwareKeyboard)
        let shownReport = geometry.setSoftwareKeyboard(.docked(height: 398))
        let shown = try #require(shownReport)
        #expect(shown.layout == .miniToolbar)
        #expect(shown.windows[0].activated == ["nearBottom"])
        #expect(geometry.setSoftwareKeyboard(.docked(height: 398)) == nil)
        let hiddenReport = geometry.setSoftwareKeyboard(.hidden)
        let hidden = try #require(hiddenReport)
        #expect(hidden.layout == .hidden)
        #expect(hidden.windows[0].deactivated == ["nearBottom"])
    }

    @Test func reportFieldsForTheDaemonsGeometryEvent() throws {
        var geometry = Self.start()
        let reportReport = geometry.setHardwareKeyboard(true)
        let report = try #require(reportReport)
        let line = report.jsonLine(leading: ["event": "geometry", "time": 12.5])
        #expect(line.hasPrefix(#"{"event":"geometry","time":12.5,"layout":"mini-toolbar","keyboard_frame":{"x":519,"y":969,"width":328,"height":55},"windows":[{"id":"main","#))
        let object = report.jsonObject()
        #expect(object.keys == ["layout", "keyboard_frame", "windows"])
        #expect(JSONValue.object(object)["windows"]?[0]?.objectValue?.keys == [
            "id", "guide", "bottom_offset", "near", "away", "dismissed", "dismiss_region",
            "active_rules", "activated", "deactivated",
        ])
    }

    @Test func updateToANewStateDiffsRulesByWindowID() {
        var geometry = Self.start()
        var next = geometry.state
        next.windows.insert(window(0, 0, 455, 1024, id: "side", rules: [TrackingRule(name: "sideBottom", near: .bottom)]), at: 0)
        let report = geometry.update(to: next)
        #expect(report.windows.map(\.id) == ["side", "main"])
        #expect(report.window("side")?.activated == ["sideBottom"])
        #expect(report.window("main")?.activated == [])
    }
}
