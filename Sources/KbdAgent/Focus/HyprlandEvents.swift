import KbdSystem
import KbdJSON
import KbdKeymap
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// The focused window and the keyboard's layouts from Hyprland. Its event socket
/// (`$XDG_RUNTIME_DIR/hypr/$HYPRLAND_INSTANCE_SIGNATURE/.socket2.sock`; never the
/// `/tmp/hypr/` of Hyprland before 0.40, where another user could have put a socket
/// first) sends one line per event, `EVENT>>DATA`. `activewindow>>CLASS,TITLE` names the
/// focused window (a class has no comma; the title may), `activewindow>>,` none.
/// `activelayout>>KEYBOARD,LAYOUT` says a keyboard switched layout (LAYOUT is a
/// description, "German (no dead keys)", which may hold commas) and `configreloaded>>` that
/// the configuration (the layouts with it) was read again: both make the source ask the
/// command socket next to it (`.socket.sock`, served by the same uid) for `j/devices`, the
/// answer `hyprctl devices -j` prints, whose main keyboard has the layouts, variants,
/// options and the active layout (`DesktopLayouts.hyprland`). Every other event is skipped.
///
/// `fd` is an epoll of the event socket and the request in flight, so the agent waits on
/// one descriptor and a request never blocks it.
package final class HyprlandEvents: FocusSource {
    package let name = "Hyprland"
    package var fd: Int32 { poller.fd }
    private let poller: Epoll
    private let events: Int32
    private let commandPath: String?
    private let owner: UInt32
    private let lines = LineBuffer(maxLineBytes: 1 << 16)
    /// The `j/devices` request in flight (-1: none), its answer so far, and whether another
    /// event asked for the devices while it was out.
    private var request: Int32 = -1
    private var answer: [UInt8] = []
    private var askAgain = false
    /// The main keyboard's layouts as of the last answer (nil: none yet, or no command socket).
    package private(set) var keyboardLayouts: DesktopLayouts?
    /// Why the last answer gave no layouts (the agent logs it).
    package private(set) var layoutProblem: String?

    /// The longest `j/devices` answer read (a few KiB per keyboard).
    static let maxAnswerBytes = 1 << 20

    package static func socketPaths(signature: String, runtimeDirectory: String?) -> [String] {
        // The signature is a directory name: never a path of its own.
        guard !signature.contains("/"), signature != "..", signature != "." else { return [] }
        var paths: [String] = []
        if let runtimeDirectory, runtimeDirectory.hasPrefix("/") { paths.append("\(runtimeDirectory)/hypr/\(signature)/.socket2.sock") }
        return paths
    }

    /// The command socket beside an event socket.
    package static func commandSocketPath(eventSocket path: String) -> String? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return path[...slash] + ".socket.sock"
    }

    package init(path: String, owner: UInt32 = geteuid()) throws(FocusSourceError) {
        events = try connectStream(path, owner: owner)
        self.owner = owner
        commandPath = Self.commandSocketPath(eventSocket: path)
        do {
            poller = try Epoll()
            try poller.add(events, token: 0)
        } catch {
            close(events)
            throw FocusSourceError(message: error.message)
        }
        askDevices()
    }

    deinit {
        if request >= 0 { close(request) }
        close(events)
    }

    package func read() throws(FocusSourceError) -> FocusChange? {
        readAnswer()
        var change: FocusChange?
        var layoutsChanged = false
        reading: while true {
            switch lines.read(from: events, budget: 65536) {
            case .bytes: break
            case .again: break reading
            case .eof: throw FocusSourceError(message: "Hyprland closed its event socket")
            case .error(let e): throw FocusSourceError(message: "reading the event socket: \(String(cString: strerror(e)))")
            }
            while true {
                switch lines.nextLine() {
                case .line(let bytes):
                    if let c = Self.parse(bytes) { change = c }
                    if Self.isLayoutEvent(bytes) { layoutsChanged = true }
                    continue
                case .tooLong:
                    throw FocusSourceError(message: "a line from Hyprland's event socket longer than 64 KiB")
                case .none:
                    break
                }
                break
            }
        }
        if layoutsChanged { askDevices() }
        return change
    }

    /// One event line; nil unless it is `activewindow>>`.
    package static func parse(_ line: some Collection<UInt8>) -> FocusChange? {
        let prefix = Array("activewindow>>".utf8)
        guard line.count >= prefix.count, line.prefix(prefix.count).elementsEqual(prefix) else { return nil }
        let data = line.dropFirst(prefix.count)
        let comma = data.firstIndex(of: UInt8(ascii: ","))
        let app = String(decoding: comma.map { data[..<$0] } ?? data[...], as: UTF8.self)
        let title = comma.map { String(decoding: data[data.index(after: $0)...], as: UTF8.self) } ?? ""
        return FocusChange(window: app.isEmpty ? nil : FocusedWindow(app: app, title: title))
    }

    /// Whether a line says the layouts or the active one may have changed.
    package static func isLayoutEvent(_ line: some Collection<UInt8>) -> Bool {
        line.starts(with: "activelayout>>".utf8) || line.starts(with: "configreloaded>>".utf8)
    }

    // MARK: - The devices request

    /// Sends `j/devices` on a new connection to the command socket (one at a time).
    private func askDevices() {
        guard let commandPath else { return }
        guard request < 0 else { askAgain = true; return }
        let socket: Int32
        do { socket = try connectStream(commandPath, owner: owner) } catch {
            layoutProblem = "the command socket \(commandPath): \(error.message)"
            return
        }
        let text = Array("j/devices".utf8)
        let sent = text.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == text.count, (try? poller.add(socket, token: 1)) != nil else {
            layoutProblem = "the command socket \(commandPath): \(SystemError(operation: "send", errno: errno).message)"
            close(socket)
            return
        }
        request = socket
        answer = []
    }

    /// Reads what arrived of the answer; at its end (Hyprland closes the connection), reads
    /// the layouts from it.
    private func readAnswer() {
        guard request >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 16384)
        var ended = false
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(request, $0.baseAddress, $0.count) }
            if n > 0 {
                answer += buffer[0..<n]
                if answer.count > Self.maxAnswerBytes { layoutProblem = "j/devices answered more than 1 MiB"; answer = []; ended = true; break }
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
            if n < 0 { layoutProblem = "reading j/devices: \(String(cString: strerror(errno)))"; answer = [] }
            ended = true
            break
        }
        guard ended else { return }
        poller.remove(request)
        close(request)
        request = -1
        if !answer.isEmpty { takeAnswer(answer) }
        answer = []
        if askAgain {
            askAgain = false
            askDevices()
        }
    }

    /// Hyprland writes `"active_layout_index": none` (not JSON) for a keyboard without a
    /// keymap: the text with `null` there.
    static func nullForNone(_ bytes: [UInt8]) -> String {
        let none = Array("\"active_layout_index\": none".utf8)
        let null = Array("\"active_layout_index\": null".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == none[0], i + none.count <= bytes.count, bytes[i..<(i + none.count)].elementsEqual(none) {
                out += null
                i += none.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private func takeAnswer(_ bytes: [UInt8]) {
        let devices: JSONValue
        do { devices = try JSONValue.parse(Self.nullForNone(bytes)) } catch {
            layoutProblem = "j/devices answered JSON that does not parse (\(error))"
            return
        }
        // The rules list is read only for a Hyprland without active_layout_index, and not kept.
        guard let layouts = DesktopLayouts.hyprland(devices: devices, rules: { XkbRulesList.load(rules: nil) }) else {
            layoutProblem = "j/devices names no keyboard with layouts"
            keyboardLayouts = nil
            return
        }
        layoutProblem = nil
        keyboardLayouts = layouts
    }
}
