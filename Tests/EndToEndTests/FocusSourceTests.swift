import KbdSystem
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdEvdev
import KbdCommands
import KbdConfig
import KbdControl
import KbdDaemon
import KbdAgent
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A fake window-manager socket in a temp directory: the focus source connects to it and
/// the test plays the window manager with real recorded payloads.
private final class FakeWindowManager {
    let directory: String
    let path: String
    let listener: Int32
    var peer: Int32 = -1
    private var made: [String] = []

    init(name: String, under subdirectory: String = "") {
        var template = Array("/tmp/kbd-focus-XXXXXX".utf8CString)
        _ = mkdtemp(&template)
        directory = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if !subdirectory.isEmpty {
            var dir = directory
            for part in subdirectory.split(separator: "/") {
                dir += "/" + part
                mkdir(dir, 0o700)
                made.append(dir)
            }
        }
        path = directory + (subdirectory.isEmpty ? "" : "/" + subdirectory) + "/" + name
        listener = try! UnixSocketAddress.streamSocket()
        try! UnixSocketAddress(path: path).bind(listener)
        listen(listener, 4)
    }

    deinit {
        if peer >= 0 { close(peer) }
        close(listener)
        unlink(path)
        for dir in made.reversed() { rmdir(dir) }
        rmdir(directory)
    }

    func accept() { peer = Glibc.accept(listener, nil, nil) }

    func write(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(peer, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return }
            sent += n
        }
    }

    /// Reads exactly `count` bytes (blocking).
    func read(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: count)
        while out.count < count {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(peer, $0.baseAddress, count - out.count) }
            guard n > 0 else { break }
            out += chunk[0..<n]
        }
        return out
    }

    func hangUp() {
        close(peer)
        peer = -1
    }
}

/// Waits until `fd` is readable (the source is read when epoll says so in the agent).
private func readable(_ fd: Int32, milliseconds: Int32 = 2000) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&p, 1, milliseconds) > 0
}

/// An i3-ipc frame: "i3-ipc", u32 length, u32 type (native order), payload.
private func frame(_ type: UInt32, _ payload: String) -> [UInt8] {
    var out = Array("i3-ipc".utf8)
    let body = Array(payload.utf8)
    withUnsafeBytes(of: UInt32(body.count)) { out += $0 }
    withUnsafeBytes(of: type) { out += $0 }
    return out + body
}

private func fixture(_ name: String) -> String { slurpFile(Paths.fixtures + "/desktop/" + name) }
private func lines(_ name: String) -> [String] { fixture(name).split(separator: "\n").map(String.init) }

/// sway's and i3's IPC with payloads recorded from the real window managers
/// (Fixtures/desktop/PROVENANCE.md).
@Suite struct WindowManagerIPCTests {
    // The windows with their processes (sway's `pid`): in the tree and the close events, and
    // in the window events (recorded in another session).
    static let swayA = FocusedWindow(app: "AppA", title: "title A", pid: 2926)
    static let swayB = FocusedWindow(app: "AppB", title: "title B", pid: 2945)
    static let eventsA = FocusedWindow(app: "AppA", title: "title A", pid: 9224)
    static let eventsB = FocusedWindow(app: "AppB", title: "title B", pid: 9277)
    static let prompt = "kbdtest@vm: /"

    /// Per recorded event, what the source reports (nil: nothing changed).
    static let cases: [(String, String, FocusedWindow?, String, [FocusChange?])] = [
        ("sway", "sway-tree.json", swayB, "sway-window-events.jsonl", [
            nil,  // new AppA
            nil,  // title of AppA, not the focused window yet
            FocusChange(window: eventsA),
            nil,  // new AppB
            nil,  // title of AppB, not focused
            FocusChange(window: eventsB),
            FocusChange(window: eventsA),
            FocusChange(window: eventsB),
        ]),
        ("sway", "sway-tree.json", swayB, "sway-close-events.jsonl", [
            FocusChange(window: swayA),
            FocusChange(window: nil),  // the focused window closed
            FocusChange(window: swayB),
        ]),
        ("i3", "i3-tree.json", FocusedWindow(app: "Bar", title: "bar term"), "i3-window-events.jsonl", [
            nil,
            FocusChange(window: FocusedWindow(app: "Foo", title: "foo term")),
            FocusChange(window: FocusedWindow(app: "Foo", title: prompt)),  // the focused window's title changed
            nil,
            FocusChange(window: FocusedWindow(app: "Bar", title: "bar term")),
            FocusChange(window: FocusedWindow(app: "Bar", title: prompt)),
            FocusChange(window: FocusedWindow(app: "Foo", title: prompt)),
            FocusChange(window: FocusedWindow(app: "Bar", title: prompt)),
        ]),
        ("i3", "i3-tree.json", FocusedWindow(app: "Bar", title: "bar term"), "i3-close-events.jsonl", [
            FocusChange(window: FocusedWindow(app: "Foo", title: "foo term")),
            FocusChange(window: nil),
            FocusChange(window: FocusedWindow(app: "Bar", title: "bar term")),
        ]),
    ]

    /// Connects a source to a fake window manager and checks its two requests.
    private func connected(_ server: FakeWindowManager) throws -> WindowManagerIPC {
        let source = try WindowManagerIPC(path: server.path, name: "test")
        server.accept()
        // SUBSCRIBE ["window"], then GET_TREE with no payload.
        #expect(server.read(24) == frame(2, #"["window"]"#))
        #expect(server.read(14) == frame(4, ""))
        return source
    }

    @Test(arguments: cases.indices)
    func recordedEventsGiveTheFocusedWindow(_ index: Int) throws {
        let (_, tree, focused, events, expected) = Self.cases[index]
        let server = FakeWindowManager(name: "ipc.sock")
        let source = try connected(server)
        server.write(frame(2, #"{"success": true}"#) + frame(4, fixture(tree)))
        #expect(readable(source.fd))
        #expect(try source.read() == FocusChange(window: focused))
        for (line, want) in zip(lines(events), expected) {
            server.write(frame(0x8000_0003, line))
            #expect(readable(source.fd))
            #expect(try source.read() == want, "\(line.prefix(40))")
        }
        // Idle: nothing to read, nothing reported.
        #expect(!readable(source.fd, milliseconds: 0))
        #expect(try source.read() == nil)
    }

    @Test func aBurstSplitAnywhereGivesTheLastFocus() throws {
        let all = frame(2, #"{"success": true}"#) + frame(4, fixture("sway-tree.json"))
            + lines("sway-window-events.jsonl").flatMap { frame(0x8000_0003, $0) }
        for cut in [1, 7, 13, 14, 200, all.count - 1] {
            let server = FakeWindowManager(name: "ipc.sock")
            let source = try connected(server)
            server.write(Array(all[..<cut]))
            _ = readable(source.fd)
            let first = try source.read()
            server.write(Array(all[cut...]))
            #expect(readable(source.fd))
            let last = try source.read()
            #expect(last == FocusChange(window: Self.eventsB) || (last == nil && first == FocusChange(window: Self.eventsB)), "cut at \(cut)")
        }
    }

    @Test func aFocusEventBeforeTheTreeWins() throws {
        let server = FakeWindowManager(name: "ipc.sock")
        let source = try connected(server)
        // The tree (AppB focused) answers after a focus event for AppA: the tree is stale.
        server.write(frame(2, #"{"success": true}"#) + frame(0x8000_0003, lines("sway-close-events.jsonl")[0]) + frame(4, fixture("sway-tree.json")))
        #expect(readable(source.fd))
        #expect(try source.read() == FocusChange(window: Self.swayA))
    }

    @Test(arguments: [
        ("refused", frame(2, #"{"success": false}"#), "refused the subscription"),
        ("not i3-ipc", Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8), "not i3-ipc"),
        ("bad JSON", frame(0x8000_0003, "{\"change\": "), "does not parse"),
        ("huge", Array("i3-ipc".utf8) + [0xFF, 0xFF, 0xFF, 0x7F, 3, 0, 0, 0x80], "bytes"),
    ])
    func aWindowManagerThatMisbehavesEndsTheSource(_ name: String, _ bytes: [UInt8], _ message: String) throws {
        let server = FakeWindowManager(name: "ipc.sock")
        let source = try connected(server)
        server.write(bytes)
        #expect(readable(source.fd))
        #expect { _ = try source.read() } throws: { ($0 as? FocusSourceError)?.message.contains(message) == true }
    }

    @Test func theWindowManagerLeavingEndsTheSource() throws {
        let server = FakeWindowManager(name: "ipc.sock")
        let source = try connected(server)
        server.hangUp()
        #expect(readable(source.fd))
        #expect { _ = try source.read() } throws: { ($0 as? FocusSourceError)?.message.contains("closed") == true }
    }

    /// Issue 26: sway's keyboards' layouts through the same socket: `GET_INPUTS` once, then
    /// `xkb_layout` input events (recorded from sway 1.7), resolved to xkb names with the
    /// system's rules list (descriptions: "German (no dead keys)" is `de` variant `nodeadkeys`).
    @Test func swaysLayoutsAndTheActiveOneComeWithTheFocus() throws {
        let server = FakeWindowManager(name: "ipc.sock")
        let source = try WindowManagerIPC(path: server.path, name: "sway IPC", inputs: true)
        server.accept()
        #expect(server.read(32) == frame(2, #"["window","input"]"#))
        #expect(server.read(14) == frame(4, ""))
        #expect(server.read(14) == frame(100, ""))
        #expect(source.keyboardLayouts == nil)
        server.write(frame(2, #"{"success": true}"#) + frame(4, fixture("sway-tree.json")) + frame(100, fixture("sway-inputs.json")))
        #expect(readable(source.fd))
        #expect(try source.read() == FocusChange(window: Self.swayB))
        let rules = XkbRulesList.load(rules: nil)
        #expect(source.keyboardLayouts == DesktopLayouts(layouts: ["English (US)", "German (no dead keys)"], described: true, active: 0))
        #expect(source.keyboardLayouts?.keymap(rules: rules).keymap == ControlRequest.Keymap(layout: "us,de", variant: ",nodeadkeys", group: 0))
        for (line, active) in zip(lines("sway-input-events.jsonl"), [1, 0]) {
            server.write(frame(0x8000_0015, line))
            #expect(readable(source.fd))
            #expect(try source.read() == nil)  // no focus change
            #expect(source.keyboardLayouts?.active == active)
            #expect(source.keyboardLayouts?.keymap(rules: rules).keymap?.group == active)
        }
    }

    /// i3 has no input events: only window events are asked for (an i3 refuses `input`).
    @Test func i3IsNotAskedForInputs() throws {
        let server = FakeWindowManager(name: "ipc.sock")
        let source = try connected(server)
        server.write(frame(2, #"{"success": true}"#) + frame(4, fixture("i3-tree.json")))
        #expect(readable(source.fd))
        _ = try source.read()
        #expect(source.keyboardLayouts == nil)
    }

    @Test func noSocketIsAnErrorNotAHang() {
        #expect(throws: FocusSourceError.self) { _ = try WindowManagerIPC(path: "/tmp/kbd-focus-none/ipc.sock", name: "sway IPC") }
    }
}

/// Hyprland's event socket, played by a fake server writing Hyprland's own line formats
/// (Hyprland is not in Debian 12): `EVENT>>DATA`, one per line.
@Suite struct HyprlandEventsTests {
    @Test(arguments: [
        (["activewindow>>foot,~/src/kbd-commandd"], FocusChange(window: FocusedWindow(app: "foot", title: "~/src/kbd-commandd"))),
        // The title may hold commas; the class cannot.
        (["activewindow>>firefox,Cats, dogs - YouTube — Mozilla Firefox"],
         FocusChange(window: FocusedWindow(app: "firefox", title: "Cats, dogs - YouTube — Mozilla Firefox"))),
        // No window focused (an empty workspace).
        (["activewindow>>,"], FocusChange(window: nil)),
        // What Hyprland sends around a focus change: only activewindow counts, the last wins.
        (["workspace>>2", "focusedmon>>DP-1,2", "activewindow>>kitty,fish", "activewindowv2>>55c4f6a0c2b0",
          "openwindow>>55c4f6a0d410,2,org.gnome.TextEditor,Untitled", "activewindow>>org.gnome.TextEditor,Untitled",
          "activewindowv2>>55c4f6a0d410"],
         FocusChange(window: FocusedWindow(app: "org.gnome.TextEditor", title: "Untitled"))),
        (["closewindow>>55c4f6a0d410", "activewindowv2>>,"], nil),
    ] as [([String], FocusChange?)])
    func linesGiveTheFocusedWindow(_ events: [String], _ expected: FocusChange?) throws {
        let server = FakeWindowManager(name: ".socket2.sock")
        let source = try HyprlandEvents(path: server.path)
        server.accept()
        server.write(Array((events.joined(separator: "\n") + "\n").utf8))
        #expect(readable(source.fd))
        #expect(try source.read() == expected)
    }

    @Test func aLineSplitAcrossReadsWaitsForItsEnd() throws {
        let server = FakeWindowManager(name: ".socket2.sock")
        let source = try HyprlandEvents(path: server.path)
        server.accept()
        server.write(Array("activewindow>>foo".utf8))
        #expect(readable(source.fd))
        #expect(try source.read() == nil)
        server.write(Array("t,~\n".utf8))
        #expect(readable(source.fd))
        #expect(try source.read() == FocusChange(window: FocusedWindow(app: "foot", title: "~")))
        server.hangUp()
        #expect(readable(source.fd))
        #expect(throws: FocusSourceError.self) { _ = try source.read() }
    }

    /// Issue 26: the layouts come from the command socket beside the event socket
    /// (`j/devices`), asked at start and after `activelayout>>`; an answer that is not JSON
    /// leaves no layouts and says why, and the event socket goes on.
    @Test func theCommandSocketsAnswerGivesTheLayouts() throws {
        let events = FakeWindowManager(name: ".socket2.sock")
        let commandPath = events.directory + "/.socket.sock"
        let commands = try UnixSocketAddress.streamSocket()
        try UnixSocketAddress(path: commandPath).bind(commands)
        listen(commands, 4)
        defer { close(commands); unlink(commandPath) }
        #expect(HyprlandEvents.commandSocketPath(eventSocket: events.path) == commandPath)
        func answer(_ text: String) {
            let c = accept(commands, nil, nil)
            var request = [UInt8](repeating: 0, count: 64)
            let n = request.withUnsafeMutableBytes { Glibc.read(c, $0.baseAddress, $0.count) }
            #expect(n > 0 && String(decoding: request[0..<n], as: UTF8.self) == "j/devices")
            _ = Array(text.utf8).withUnsafeBytes { send(c, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(c)
        }
        let source = try HyprlandEvents(path: events.path)
        events.accept()
        answer("ok")  // what a Hyprland that does not know the request says
        #expect(readable(source.fd))
        #expect(try source.read() == nil)
        #expect(source.keyboardLayouts == nil)
        #expect(source.layoutProblem?.hasPrefix("j/devices answered JSON that does not parse") == true, "\(source.layoutProblem ?? "")")
        events.write(Array("activelayout>>at-translated-set-2-keyboard,Russian\n".utf8))
        #expect(readable(source.fd))
        #expect(try source.read() == nil)
        answer(#"{"keyboards": [{"name": "at-translated-set-2-keyboard", "layout": "us,ru", "variant": "", "options": "grp:alt_shift_toggle", "active_layout_index": 1, "active_keymap": "Russian", "main": true}]}"#)
        #expect(readable(source.fd))
        #expect(try source.read() == nil)
        #expect(source.keyboardLayouts == DesktopLayouts(layouts: ["us", "ru"], described: false, options: "grp:alt_shift_toggle", active: 1))
        #expect(source.layoutProblem == nil)
    }

    @Test func theSessionPicksItsSourceFromTheEnvironment() throws {
        // $XDG_RUNTIME_DIR/hypr/$HYPRLAND_INSTANCE_SIGNATURE/.socket2.sock
        let server = FakeWindowManager(name: ".socket2.sock", under: "hypr/v0.41_1718000000_abcdef")
        var tried: [String] = []
        let env = ["HYPRLAND_INSTANCE_SIGNATURE": "v0.41_1718000000_abcdef", "XDG_RUNTIME_DIR": server.directory]
        let source = FocusSources.open(environment: env, tried: &tried)
        #expect(source?.name == "Hyprland")
        // sway's socket comes first; one that is not there is reported, and the next is used.
        let source2 = FocusSources.open(environment: env.merging(["SWAYSOCK": server.directory + "/none.sock"]) { $1 }, tried: &tried)
        #expect(source2?.name == "Hyprland")
        #expect(tried.count == 1 && tried[0].hasPrefix("sway IPC at \(server.directory)/none.sock"))
        // A signature is a directory name, never a path.
        #expect(HyprlandEvents.socketPaths(signature: "../../etc", runtimeDirectory: "/run/user/1000").isEmpty)
        // Issue 25 item 7: never /tmp/hypr (another user could have made it first), and only a
        // socket served by the agent's own uid.
        #expect(HyprlandEvents.socketPaths(signature: "v0.41_1718000000_abcdef", runtimeDirectory: nil).isEmpty)
        #expect(HyprlandEvents.socketPaths(signature: "v0.41_1718000000_abcdef", runtimeDirectory: "/run/user/1000")
                == ["/run/user/1000/hypr/v0.41_1718000000_abcdef/.socket2.sock"])
        var foreign: [String] = []
        #expect(FocusSources.open(environment: env, tried: &foreign, owner: geteuid() &+ 4242) == nil)
        #expect(foreign.count == 1 && foreign[0].hasSuffix("served by uid \(geteuid()), not by uid \(geteuid() &+ 4242) (this agent's user); not using it"), "\(foreign)")
        var none: [String] = []
        #expect(FocusSources.open(environment: [:], tried: &none) == nil && none.isEmpty)
        // In a Wayland session $DISPLAY is Xwayland's: not a focus source.
        #expect(FocusSources.open(environment: ["DISPLAY": ":987", "WAYLAND_DISPLAY": "wayland-1"], tried: &none) == nil && none.isEmpty)
        // On X11 it is (here an X server that is not there: reported, not a hang).
        #expect(FocusSources.open(environment: ["DISPLAY": ":987"], tried: &none) == nil)
        #expect(none == ["EWMH on :987: cannot connect to the X server"])
    }
}

/// Issue 26: the desktops' layout names and sticky-keys settings as the agent reads them.
@Suite struct DesktopLayoutTests {
    @Test func namesAndDescriptionsBecomeXkbNames() {
        let rules = XkbRulesList.load(rules: nil)
        #expect(DesktopLayouts(layouts: ["us", "de(nodeadkeys)"], described: false, options: "ctrl:nocaps", active: 1).keymap(rules: nil).keymap
                == ControlRequest.Keymap(layout: "us,de", variant: ",nodeadkeys", options: "ctrl:nocaps", group: 1))
        #expect(DesktopLayouts(layouts: ["Russian", "English (US)"], described: true, active: 0).keymap(rules: rules).keymap
                == ControlRequest.Keymap(layout: "ru,us", group: 0))
        let unknown = DesktopLayouts(layouts: ["Klingon"], described: true, active: 0).keymap(rules: rules)
        #expect(unknown.keymap == nil && unknown.problem == "the layout 'Klingon' is not on the xkb rules list")
        #expect(DesktopLayouts(layouts: [], described: false, active: 0).keymap(rules: nil).keymap == nil)
    }

    /// More sources than xkb's 4 groups (GNOME allows them): the first and the active one.
    @Test func moreThanFourLayoutsKeepTheFirstAndTheActive() {
        let many = DesktopLayouts(layouts: ["us", "de", "fr", "ru", "ua"], described: false, active: 3)
        #expect(many.keymap(rules: nil).keymap == ControlRequest.Keymap(layout: "us,ru", group: 1))
        #expect(DesktopLayouts(layouts: ["us", "de", "fr", "ru", "ua"], described: false, active: 0).keymap(rules: nil).keymap
                == ControlRequest.Keymap(layout: "us", group: 0))
    }

    /// GNOME's input sources: xkb sources in order (`de+nodeadkeys` is layout de, variant
    /// nodeadkeys), the active one first in mru-sources (else `current`), input methods skipped.
    @Test func gnomesInputSources() {
        let sources = [("xkb", "us"), ("ibus", "anthy"), ("xkb", "de+nodeadkeys")].map { (type: $0.0, id: $0.1) }
        let mru = [("xkb", "de+nodeadkeys"), ("xkb", "us")].map { (type: $0.0, id: $0.1) }
        #expect(DesktopLayouts.gnome(sources: sources, mru: mru, current: 0, options: ["ctrl:nocaps"])
                == DesktopLayouts(layouts: ["us", "de(nodeadkeys)"], described: false, options: "ctrl:nocaps", active: 1))
        // No mru-sources (GNOME before 3.30, or never switched): the deprecated current index into sources.
        #expect(DesktopLayouts.gnome(sources: sources, mru: [], current: 2, options: [])?.active == 1)
        // An input method active: the first layout.
        #expect(DesktopLayouts.gnome(sources: sources, mru: [(type: "ibus", id: "anthy")], current: 0, options: [])?.active == 0)
        #expect(DesktopLayouts.gnome(sources: [(type: "ibus", id: "anthy")], mru: [], current: 0, options: []) == nil)
        #expect(DesktopLayouts.gnome(sources: [], mru: [], current: 0, options: []) == nil)
    }

    /// KDE: the bus names the layouts; kxkbrc adds variants and options when its list is that one.
    @Test func kdesLayoutsAndKxkbrc() {
        let kxkbrc = "[$Version]\nupdate_info=kxkb.upd:remove-empty-lists\n\n[Layout]\nDisplayNames=,\nLayoutList=us,de\n"
            + "Options=grp:alt_shift_toggle,ctrl:nocaps\nResetOldOptions=true\nUse=true\nVariantList=,nodeadkeys\n"
        #expect(DesktopLayouts.kde(shortNames: ["us", "de"], active: 1, kxkbrc: kxkbrc)
                == DesktopLayouts(layouts: ["us", "de(nodeadkeys)"], described: false, options: "grp:alt_shift_toggle,ctrl:nocaps", active: 1))
        // kxkbrc lists other layouts than the ones in use: only the bus's names.
        #expect(DesktopLayouts.kde(shortNames: ["fr"], active: 0, kxkbrc: kxkbrc)
                == DesktopLayouts(layouts: ["fr"], described: false, active: 0))
        #expect(DesktopLayouts.kde(shortNames: ["us", "de"], active: 7, kxkbrc: nil)?.active == 1)
        #expect(DesktopLayouts.kde(shortNames: [], active: 0, kxkbrc: kxkbrc) == nil)
        // No org.kde.keyboard (KWin with one layout): kxkbrc's, when Use=true.
        #expect(DesktopLayouts.kde(kxkbrc: "[Layout]\nLayoutList=fr\nVariantList=bepo\nUse=true\n")
                == DesktopLayouts(layouts: ["fr(bepo)"], described: false, active: 0))
        #expect(DesktopLayouts.kde(kxkbrc: "[Layout]\nLayoutList=fr\nUse=false\n") == nil)
        #expect(DesktopLayouts.kde(kxkbrc: "[Layout]\nUse=true\n") == nil)
    }

    /// The lines of the keymap child.
    @Test func keymapLinesRoundTrip() {
        let layouts = DesktopLayouts(layouts: ["us", "de(nodeadkeys)"], described: false, options: "ctrl:nocaps", active: 1)
        #expect(layouts.line == "layouts 1 ctrl:nocaps us de(nodeadkeys)")
        #expect(DesktopLayouts(line: layouts.line[...]) == layouts)
        #expect(DesktopLayouts(line: "layouts 0 - ru"[...]) == DesktopLayouts(layouts: ["ru"], described: false, active: 0))
        #expect(DesktopLayouts(line: "layouts 2 - us de"[...]) == nil)
        #expect(DesktopLayouts(line: "layouts x - us"[...]) == nil)
    }

    @Test func kaccessrcStickyKeys() {
        #expect(DesktopStickyKeys.kaccessrc("[Bell]\nSystemBell=true\n\n[Keyboard]\nStickyKeys=true\nStickyKeysLatch=true\n"))
        #expect(!DesktopStickyKeys.kaccessrc("[Keyboard]\nStickyKeys=false\n"))
        #expect(!DesktopStickyKeys.kaccessrc("[Mouse]\nStickyKeys=true\n"))  // another group's key
        #expect(DesktopStickyKeys.kaccessrc("[Keyboard]\r\nStickyKeys[$i]= True\r\n"))
        #expect(!DesktopStickyKeys.kaccessrc(""))
    }

    @Test func whichDesktopsSettingApplies() {
        #expect(DesktopStickyKeys.desktop(["XDG_CURRENT_DESKTOP": "KDE"]) == .kde)
        #expect(DesktopStickyKeys.desktop(["XDG_CURRENT_DESKTOP": "Phosh:GNOME"]) == .gnome)
        #expect(DesktopStickyKeys.desktop(["XDG_CURRENT_DESKTOP": "ubuntu:GNOME"]) == .gnome)
        #expect(DesktopStickyKeys.desktop(["XDG_CURRENT_DESKTOP": "sway"]) == nil)
    }
}
