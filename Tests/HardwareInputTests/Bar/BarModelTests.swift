import KbdJSON
import KbdCommands
import KbdControl
import KbdPipeline
@testable import KbdBar
import Testing

/// Issue 28: what the shortcuts bar shows, and when, from what the service says (pure: the
/// model is fed the lines a service sends, decoded by the wire's own types).
@Suite struct BarModelTests {
    static func event(_ line: String) throws -> ControlEvent { try ControlEvent.parse(line) }
    static func subscribed(_ present: Bool, geometry: JSONObject? = nil) -> ControlReply.Subscribed {
        ControlReply.Subscribed(events: [.presence, .toolbar, .hud], hardwareKeyboard: present, reason: "test", geometry: geometry)
    }
    static let toolbarLine = #"{"event":"toolbar","time":1,"scopes":["editor","global"],"text_input":false,"groups":[{"title":"Edit","commands":[{"table":"system","scope":"editor","id":"save","title":"Save","discoverability_title":"Save File","chord":"Ctrl+S","shadowed":false,"text_input_filtered":false},{"table":"user","scope":"editor","id":"undo","title":"Undo","discoverability_title":"Undo","chord":"Ctrl+Z","shadowed":true,"text_input_filtered":false}]},{"title":"Other","commands":[{"table":"user","scope":"global","id":"next","title":"Next","discoverability_title":"Next Line","chord":"Down","shadowed":false,"text_input_filtered":true}]}]}"#
    static let hudLine = #"{"event":"hud","time":2,"show":true,"trigger":"hold","pending":null,"scopes":["editor","global"],"text_input":false,"groups":[{"title":"Edit","commands":[{"table":"system","scope":"editor","id":"save","title":"Save","discoverability_title":"Save File","chord":"Ctrl+S","shadowed":false,"text_input_filtered":false},{"table":"user","scope":"editor","id":"undo","title":"Undo","discoverability_title":"Undo","chord":"Ctrl+Z","shadowed":true,"text_input_filtered":false}]}]}"#

    @Test func nothingBeforeTheServiceAnswers() throws {
        var m = BarModel()
        try m.apply(Self.event(Self.toolbarLine))
        #expect(m.view == BarView())
    }

    @Test func toolbarFollowsPresence() throws {
        var m = BarModel()
        m.subscribed(Self.subscribed(false))
        #expect(m.view.toolbar == nil)
        try m.apply(Self.event(#"{"event":"presence","time":1,"hardware_keyboard":true,"reason":"external keyboard"}"#))
        #expect(m.view.toolbar?.height == 55, "the geometry model's standard mini toolbar")
        try m.apply(Self.event(#"{"event":"presence","time":2,"hardware_keyboard":false,"reason":"none"}"#))
        #expect(m.view.toolbar == nil)
        m.subscribed(Self.subscribed(true))
        #expect(m.view.toolbar != nil, "a keyboard present when the bar connects")
    }

    @Test func heightFromTheMiniToolbarGeometry() throws {
        var m = BarModel()
        m.subscribed(Self.subscribed(true))
        try m.apply(Self.event(#"{"event":"geometry","time":1,"layout":"mini-toolbar","keyboard_frame":{"x":0,"y":700,"width":400,"height":68.4},"windows":[]}"#))
        #expect(m.view.toolbar?.height == 68)
        // Another layout says nothing about the bar: the height stays.
        try m.apply(Self.event(#"{"event":"geometry","time":2,"layout":"docked","keyboard_frame":{"x":0,"y":626,"width":1366,"height":398},"windows":[]}"#))
        #expect(m.view.toolbar?.height == 68)
        // Kept across a reconnection (the service's scenario did not change).
        m.disconnected()
        m.subscribed(Self.subscribed(true))
        #expect(m.view.toolbar?.height == 68)
    }

    @Test func buttonsAreTheCommandsThatWouldFire() throws {
        var m = BarModel()
        m.subscribed(Self.subscribed(true))
        try m.apply(Self.event(Self.toolbarLine))
        let bar = try #require(m.view.toolbar)
        #expect(bar.groups.map(\.title) == ["Edit", "Other"])
        #expect(bar.buttons.map(\.label) == ["Save", "Next"], "the shadowed Undo is not a button")
        #expect(bar.buttons.map(\.index) == [0, 1])
        #expect(bar.buttons[0].command == CommandRef(id: "save", table: .system))
        #expect(bar.buttons[0].detail == "Save File (Ctrl+S)")
        #expect(bar.buttons[1].command == CommandRef(id: "next", table: .user))
        // Text input on: the filtered Next goes, and its empty group with it.
        let typing = Self.toolbarLine.split(separator: #""text_input":false"#, maxSplits: 1, omittingEmptySubsequences: false)
            .joined(separator: #""text_input":true"#)
        try m.apply(Self.event(typing))
        #expect(m.view.toolbar?.buttons.map(\.label) == ["Save"])
        #expect(m.view.toolbar?.groups.map(\.title) == ["Edit"])
    }

    @Test func hudShowsEverythingDimmingWhatWouldNotFire() throws {
        var m = BarModel()
        m.subscribed(Self.subscribed(false))
        try m.apply(Self.event(Self.hudLine))
        let hud = try #require(m.view.hud)
        #expect(hud.heading == "Shortcuts: editor › global")
        #expect(hud.groups == [HudView.Group(title: "Edit", rows: [HudView.Row(chord: "Ctrl+S", title: "Save File", dimmed: false),
                                                                   HudView.Row(chord: "Ctrl+Z", title: "Undo", dimmed: true)])])
        #expect(m.view.toolbar == nil, "the HUD does not need a hardware keyboard (an action = \"hud\" chord)")
        // A hide of another trigger leaves it; the hide of its own trigger takes it away.
        try m.apply(Self.event(#"{"event":"hud","time":3,"show":false,"trigger":"sequence"}"#))
        #expect(m.view.hud != nil)
        try m.apply(Self.event(#"{"event":"hud","time":3,"show":false,"trigger":"hold"}"#))
        #expect(m.view.hud == nil)
    }

    @Test func sequenceHeadingIsThePendingPrefix() throws {
        var m = BarModel()
        m.subscribed(Self.subscribed(false))
        try m.apply(Self.event(#"{"event":"hud","time":1,"show":true,"trigger":"sequence","pending":"Ctrl+X","scopes":["global"],"text_input":false,"groups":[{"title":"Files","commands":[{"table":"system","scope":"global","id":"save","title":"Save","discoverability_title":"Save","chord":"Ctrl+X Ctrl+S","shadowed":false,"text_input_filtered":false}]}]}"#))
        #expect(m.view.hud?.heading == "Ctrl+X …")
        #expect(m.view.hud?.groups.first?.rows.first?.chord == "Ctrl+X Ctrl+S")
    }

    @Test func nothingWithoutTheServiceOrTheSeat() throws {
        var m = BarModel()
        m.subscribed(Self.subscribed(true))
        try m.apply(Self.event(Self.toolbarLine))
        try m.apply(Self.event(Self.hudLine))
        #expect(m.view.toolbar != nil && m.view.hud != nil)
        try m.apply(Self.event(#"{"event":"session","time":4,"seat":"seat0","active":false}"#))
        #expect(m.view == BarView(), "another user's session is active: nothing of this user's is shown")
        try m.apply(Self.event(#"{"event":"session","time":5,"seat":"seat0","active":true}"#))
        #expect(m.view.toolbar != nil && m.view.hud == nil)
        m.disconnected()
        #expect(m.view == BarView())
        #expect(m.toolbar == nil, "a new connection sends the toolbar again")
    }
}
