package import KbdJSON
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// The focused window from sway's or i3's IPC socket (`$SWAYSOCK`, `$I3SOCK`): one
/// protocol for sway on Wayland and i3 on X11. The agent subscribes to window events and
/// asks for the tree once (the window focused before it started); after that it reads
/// only when the window manager writes.
///
/// Wire format (native byte order): `"i3-ipc"`, u32 payload length, u32 type, then the
/// JSON payload. Replies carry the request's type; events have the high bit set
/// (window events: `0x80000003`). A window's app is its Wayland `app_id`, else (an X11
/// window, in i3 or in sway's Xwayland) `window_properties.class`; its title is `name`.
///
/// sway also names the keyboards' layouts: with `inputs`, the agent subscribes to input
/// events as well and asks for the inputs once (`GET_INPUTS`); `xkb_layout` and
/// `xkb_keymap` input events (`0x80000015`) carry a keyboard's `xkb_layout_names` and
/// `xkb_active_layout_index` (i3 has neither: its layouts are the X server's).
package final class WindowManagerIPC: FocusSource {
    package static let subscribe: UInt32 = 2
    package static let getTree: UInt32 = 4
    package static let getInputs: UInt32 = 100
    package static let windowEvent: UInt32 = 0x8000_0003
    package static let inputEvent: UInt32 = 0x8000_0015
    package static let magic: [UInt8] = Array("i3-ipc".utf8)
    /// A tree of thousands of windows is a few MiB; more is not a window manager talking.
    package static let maxPayload = 64 << 20

    package let name: String
    package let fd: Int32
    private var buffer: [UInt8] = []
    /// The container that has the focus (title changes of others are not ours).
    private var focusedID: Int?
    /// Whether a focus event came before the tree's reply (then the tree is stale).
    private var sawFocusEvent = false
    /// The keyboards' layouts (sway), nil until known.
    package private(set) var keyboardLayouts: DesktopLayouts?
    /// Whether an input event came before the inputs' reply (then the reply is stale).
    private var sawInputEvent = false
    /// i3: its windows' processes from the X server (i3's IPC names the X11 window, not its pid).
    private let x11: X11WindowProcess?

    /// `display`: the X display whose windows i3 manages (their `_NET_WM_PID`); nil on sway,
    /// whose IPC names the pid itself.
    package init(path: String, name: String, inputs: Bool = false, owner: UInt32 = geteuid(), display: String? = nil) throws(FocusSourceError) {
        self.name = name
        x11 = display.flatMap { X11WindowProcess(display: $0) }
        fd = try connectStream(path, owner: owner)
        do {
            try write(type: Self.subscribe, payload: inputs ? #"["window","input"]"# : #"["window"]"#)
            try write(type: Self.getTree, payload: "")
            if inputs { try write(type: Self.getInputs, payload: "") }
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// A request: small enough for an empty socket buffer, so it is written at once.
    private func write(type: UInt32, payload: String) throws(FocusSourceError) {
        var message = Self.magic
        let body = Array(payload.utf8)
        withUnsafeBytes(of: UInt32(body.count)) { message += $0 }
        withUnsafeBytes(of: type) { message += $0 }
        message += body
        var sent = 0
        while sent < message.count {
            let n = message.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            if n < 0 && errno == EINTR { continue }
            throw FocusSourceError(message: "cannot send to the IPC socket: \(String(cString: strerror(errno)))")
        }
    }

    package func read() throws(FocusSourceError) -> FocusChange? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                buffer += chunk[0..<n]
                if n < chunk.count { break }
                continue
            }
            if n == 0 { throw FocusSourceError(message: "the window manager closed its IPC socket") }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { break }
            throw FocusSourceError(message: "reading the IPC socket: \(String(cString: strerror(errno)))")
        }
        return try messages()
    }

    /// Takes the complete messages out of the buffer; the last focus change among them.
    package func messages() throws(FocusSourceError) -> FocusChange? {
        var change: FocusChange?
        var offset = 0
        defer { buffer.removeFirst(offset) }
        while buffer.count - offset >= 14 {
            guard buffer[offset..<(offset + 6)].elementsEqual(Self.magic) else {
                throw FocusSourceError(message: "the IPC socket sent something that is not i3-ipc")
            }
            let (length, type) = buffer.withUnsafeBytes {
                (Int($0.loadUnaligned(fromByteOffset: offset + 6, as: UInt32.self)), $0.loadUnaligned(fromByteOffset: offset + 10, as: UInt32.self))
            }
            guard length <= Self.maxPayload else { throw FocusSourceError(message: "an IPC message of \(length) bytes") }
            guard buffer.count - offset - 14 >= length else { break }
            let payload = String(decoding: buffer[(offset + 14)..<(offset + 14 + length)], as: UTF8.self)
            offset += 14 + length
            if let c = try handle(type: type, payload: payload) { change = c }
        }
        return change
    }

    private func handle(type: UInt32, payload: String) throws(FocusSourceError) -> FocusChange? {
        guard type == Self.subscribe || type == Self.getTree || type == Self.windowEvent || type == Self.getInputs
              || type == Self.inputEvent else { return nil }
        guard let value = try? JSONValue.parse(payload) else {
            throw FocusSourceError(message: "the IPC socket sent JSON that does not parse")
        }
        switch type {
        case Self.subscribe:
            guard value["success"] == .bool(true) else { throw FocusSourceError(message: "the window manager refused the subscription to window events") }
            return nil
        case Self.getTree:
            guard !sawFocusEvent else { return nil }
            guard let node = Self.focusedNode(value) else { return FocusChange(window: nil) }
            focusedID = node["id"]?.intValue
            return FocusChange(window: withProcess(Self.window(node), node))
        case Self.getInputs:
            guard !sawInputEvent, case .array(let inputs) = value else { return nil }
            if let layouts = inputs.lazy.compactMap(Self.layouts).first { keyboardLayouts = layouts }
            return nil
        case Self.inputEvent:
            inputEvent(value)
            return nil
        default:
            return windowEvent(value)
        }
    }

    /// An input event: a keyboard's layouts or active layout changed (`xkb_layout`,
    /// `xkb_keymap`), or a keyboard came (`added`).
    package func inputEvent(_ event: JSONValue) {
        guard ["xkb_layout", "xkb_keymap", "added"].contains(event["change"]?.stringValue ?? ""),
              let input = event["input"], let layouts = Self.layouts(input) else { return }
        sawInputEvent = true
        keyboardLayouts = layouts
    }

    /// A keyboard input's layouts (their descriptions, as sway names them) and the active one.
    package static func layouts(_ input: JSONValue) -> DesktopLayouts? {
        guard input["type"]?.stringValue == "keyboard", case .array(let names)? = input["xkb_layout_names"] else { return nil }
        let layouts = names.compactMap(\.stringValue)
        guard !layouts.isEmpty else { return nil }
        return DesktopLayouts(layouts: layouts, described: true, active: input["xkb_active_layout_index"]?.intValue ?? 0)
    }

    /// A window event: `focus` changes the focused window, `title` of the focused one
    /// changes its title, `close` of the focused one leaves none until the next focus.
    package func windowEvent(_ event: JSONValue) -> FocusChange? {
        guard let container = event["container"] else { return nil }
        let id = container["id"]?.intValue
        switch event["change"]?.stringValue {
        case "focus":
            sawFocusEvent = true
            focusedID = id
            return FocusChange(window: withProcess(Self.window(container), container))
        case "title":
            guard id != nil, id == focusedID else { return nil }
            return FocusChange(window: withProcess(Self.window(container), container))
        case "close":
            guard id != nil, id == focusedID else { return nil }
            focusedID = nil
            return FocusChange(window: nil)
        default:
            return nil
        }
    }

    /// `window` with its process from the X server when the IPC did not name it (i3: the
    /// container's X11 `window`).
    private func withProcess(_ window: FocusedWindow?, _ container: JSONValue) -> FocusedWindow? {
        guard var window, window.pid == nil, let x11, let id = container["window"]?.intValue, id > 0, id <= Int(UInt32.max) else { return window }
        window.pid = x11.pid(window: UInt32(id))
        return window
    }

    /// A container's app (`app_id`, else `window_properties.class`), title (`name`) and
    /// process (`pid`, when positive); nil for a container that is not a window (a workspace,
    /// a split).
    package static func window(_ container: JSONValue) -> FocusedWindow? {
        let app = container["app_id"]?.stringValue ?? container["window_properties"]?["class"]?.stringValue
        guard let app else { return nil }
        let pid = container["pid"]?.intValue.flatMap { $0 > 0 && $0 <= Int(Int32.max) ? Int32($0) : nil }
        return FocusedWindow(app: app, title: container["name"]?.stringValue ?? "", pid: pid)
    }

    /// The node with `"focused": true` in a `GET_TREE` reply (tiled or floating).
    package static func focusedNode(_ tree: JSONValue) -> JSONValue? {
        var stack = [tree]
        while let node = stack.popLast() {
            if node["focused"] == .bool(true) { return node }
            for key in ["nodes", "floating_nodes"] {
                if case .array(let children)? = node[key] { stack += children }
            }
        }
        return nil
    }
}
