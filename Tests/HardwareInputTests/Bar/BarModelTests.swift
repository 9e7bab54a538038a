import KbdJSON
import KbdCommands
import KbdControl
import KbdGeometry
@testable import KbdBar
import Testing

/// Issue 28: what the shortcuts bar shows, and when, from what the service says (pure: the
/// model is fed the lines a service sends, decoded by the wire's own types).
@Suite struct BarModelTests {
    static func event(_ line: String) throws -> ControlEvent { try ControlEvent.parse(line) }
    static func subscribed(_ present: Bool, geometry: GeometryReport? = nil) -> ControlReply.Subscribed {
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

/// Issue 33 item 6a: 300 short commands made the bar ask GTK for a surface as wide as all of
/// their buttons (38,000 pixels on a 1024-pixel output; cairo makes at most 32,767) and die
/// in libgdk (SIGSEGV). The model lays out what fits the bar's width; the rest goes on
/// further pages behind a More button; titles are bounded.
@Suite struct BarPagingTests {
    /// A `toolbar` event line with `count` global commands "Command N" (ids cN), as the service
    /// sends it for a table of that many commands without a group.
    static func toolbarLine(_ count: Int, title: (Int) -> String = { "Command \($0)" }) -> String {
        let commands = (1...count).map { i in
            #"{"table":"system","scope":"global","id":"c\#(i)","title":"\#(title(i))","discoverability_title":"\#(title(i))","chord":"Ctrl+Alt+Shift+A F1","shadowed":false,"text_input_filtered":false}"#
        }
        return #"{"event":"toolbar","time":1,"scopes":["global"],"text_input":false,"groups":[{"title":"Other","commands":["# + commands.joined(separator: ",") + "]}]}"
    }

    static func model(_ count: Int, width: Int) throws -> BarModel {
        var m = BarModel()
        m.subscribed(BarModelTests.subscribed(true))
        try m.apply(BarModelTests.event(toolbarLine(count)))
        m.resized(width)
        return m
    }

    /// What a page takes, measured as the model measured it (`BarMetrics.estimate`).
    static func pageWidth(_ bar: ToolbarView, _ metrics: BarMetrics = .standard) -> Int {
        let titles = bar.groups.reduce(0) { $0 + BarMetrics.estimate($1.title) + metrics.groupExtra }
        let buttons = bar.buttons.reduce(0) { $0 + BarMetrics.estimate($1.label) + metrics.buttonExtra }
        let more = bar.more.map { BarMetrics.estimate($0) + metrics.buttonExtra } ?? 0
        return titles + buttons + more
    }

    @Test func threeHundredCommandsArePagedToTheBarsWidth() throws {
        var m = try Self.model(300, width: 1024)
        let first = try #require(m.view.toolbar)
        // 1024 px less the edges (16) and the widest More (154): the group's title (67) and
        // Command 1…7 (109 each) fit; Command 8 would not.
        #expect(first.buttons.map(\.label) == (1...7).map { "Command \($0)" })
        #expect(first.buttons.map(\.index) == Array(0..<7))
        #expect(first.groups.map(\.title) == ["Other"])
        #expect(first.pages == 50, "the other 293 commands, 6 a page (Command 10 and on are wider)")
        #expect(first.more == "More (1/50)")
        #expect(Self.pageWidth(first) <= 1024 - 16)
        // Every page fits, every command is on exactly one page, in order, with its index.
        var seen: [String] = []
        for page in 0..<first.pages {
            let bar = try #require(m.view.toolbar)
            #expect(bar.page == page)
            #expect(bar.more == "More (\(page + 1)/50)")
            #expect(Self.pageWidth(bar) <= 1024 - 16, "page \(page + 1) is \(Self.pageWidth(bar)) px")
            #expect(bar.groups.map(\.title) == ["Other"], "the group's title on each page it continues on")
            seen += bar.buttons.map(\.command.id)
            #expect(bar.buttons.map(\.index) == bar.buttons.map { Int($0.command.id.dropFirst())! - 1 })
            m.nextPage(of: bar.pages)
        }
        #expect(seen == (1...300).map { "c\($0)" })
        #expect(m.view.toolbar?.page == 0, "the last page leads back to the first")
    }

    @Test func aWiderBarShowsMoreAndAFewCommandsNeedNoMoreButton() throws {
        let wide = try #require(try Self.model(300, width: 3840).view.toolbar)
        #expect(wide.buttons.count > 4 * 7 && wide.pages < 12, "\(wide.buttons.count) buttons, \(wide.pages) pages")
        #expect(Self.pageWidth(wide) <= 3840 - 16)
        let few = try #require(try Self.model(6, width: 1024).view.toolbar)
        #expect(few.buttons.count == 6 && few.pages == 1 && few.more == nil)
        // A bar narrower than one button still shows one button a page (and its More).
        let narrow = try #require(try Self.model(3, width: 50).view.toolbar)
        #expect(narrow.buttons.count == 1 && narrow.pages == 3)
    }

    @Test func theMeasureIsTheToolkits() throws {
        // A font twice as wide: half as many buttons a page.
        let m = try Self.model(300, width: 1024)
        let bar = try #require(m.view(measure: { 18 * $0.count }).toolbar)
        #expect(bar.buttons.count == 3, "\(bar.buttons.map(\.label))")
    }

    @Test func aNewToolbarStartsAtTheFirstPageAndAResizeKeepsThePage() throws {
        var m = try Self.model(300, width: 1024)
        m.nextPage(of: 50)
        m.nextPage(of: 50)
        #expect(m.view.toolbar?.page == 2)
        m.resized(1280)
        #expect(m.view.toolbar?.page == 2)
        try m.apply(BarModelTests.event(Self.toolbarLine(200)))
        #expect(m.view.toolbar?.page == 0)
        // The width is kept across a reconnection.
        m.disconnected()
        #expect(m.width == 1280)
    }

    @Test func titlesAreBounded() throws {
        var m = BarModel()
        m.subscribed(BarModelTests.subscribed(true))
        let long = String(repeating: "Very long title ", count: 8)
        try m.apply(BarModelTests.event(Self.toolbarLine(2, title: { $0 == 1 ? long : "Short" })))
        let bar = try #require(m.view.toolbar)
        #expect(bar.buttons.map(\.label) == ["Very long title Very lo…", "Short"])
        #expect(bar.buttons[0].label.count == 24)
        #expect(bar.buttons[0].detail == long + " (Ctrl+Alt+Shift+A F1)", "the tooltip keeps the whole title")
    }

    @Test func theHudOfThreeHundredCommandsIsBoundedToTheColumnsThatFit() throws {
        let commands = (1...300).map { i in
            #"{"table":"system","scope":"global","id":"c\#(i)","title":"Command \#(i)","discoverability_title":"Command \#(i)","chord":"Ctrl+Alt+Shift+A F1","shadowed":false,"text_input_filtered":false}"#
        }
        let line = #"{"event":"hud","time":2,"show":true,"trigger":"hold","pending":null,"scopes":["global"],"text_input":false,"groups":[{"title":"Other","commands":["# + commands.joined(separator: ",") + "]}]}"
        var m = BarModel()
        m.subscribed(BarModelTests.subscribed(false))
        try m.apply(BarModelTests.event(line))
        m.resized(1024)
        // Two columns of 14 rows fit 1024 px: the group's title, 26 commands and the rest counted.
        let hud = try #require(m.view.hud)
        #expect(hud.groups.count == 1)
        #expect(hud.groups[0].rows.count == 27)
        #expect(hud.groups[0].rows.last == HudView.Row(chord: "", title: "… and 274 more", dimmed: true))
        m.resized(3840)
        #expect(m.view.hud?.groups[0].rows.count == 9 * 14 - 1)
    }
}
