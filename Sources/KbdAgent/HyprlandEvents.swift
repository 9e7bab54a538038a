import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// The focused window from Hyprland's event socket
/// (`$XDG_RUNTIME_DIR/hypr/$HYPRLAND_INSTANCE_SIGNATURE/.socket2.sock`; never the
/// `/tmp/hypr/` of Hyprland before 0.40, where another user could have put a socket
/// first): one line per event, `EVENT>>DATA`. `activewindow>>CLASS,TITLE`
/// names the focused window (a class has no comma; the title may), `activewindow>>,`
/// none. Every other event is skipped.
package final class HyprlandEvents: FocusSource {
    package let name = "Hyprland"
    package let fd: Int32
    private let lines = LineBuffer(maxLineBytes: 1 << 16)

    package static func socketPaths(signature: String, runtimeDirectory: String?) -> [String] {
        // The signature is a directory name: never a path of its own.
        guard !signature.contains("/"), signature != "..", signature != "." else { return [] }
        var paths: [String] = []
        if let runtimeDirectory, runtimeDirectory.hasPrefix("/") { paths.append("\(runtimeDirectory)/hypr/\(signature)/.socket2.sock") }
        return paths
    }

    package init(path: String, owner: UInt32 = geteuid()) throws(FocusSourceError) {
        fd = try connectStream(path, owner: owner)
    }

    deinit { close(fd) }

    package func read() throws(FocusSourceError) -> FocusChange? {
        var change: FocusChange?
        while true {
            switch lines.read(from: fd, budget: 65536) {
            case .bytes: break
            case .again: return change
            case .eof: throw FocusSourceError(message: "Hyprland closed its event socket")
            case .error(let e): throw FocusSourceError(message: "reading the event socket: \(String(cString: strerror(e)))")
            }
            while true {
                switch lines.nextLine() {
                case .line(let bytes):
                    if let c = Self.parse(bytes) { change = c }
                    continue
                case .tooLong:
                    throw FocusSourceError(message: "a line from Hyprland's event socket longer than 64 KiB")
                case .none:
                    break
                }
                break
            }
        }
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
}
