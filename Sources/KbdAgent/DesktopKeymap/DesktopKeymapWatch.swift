import CGio
import CLinux
import KbdSystem
import KbdProcess
#if canImport(Glibc)
import Glibc
#endif

/// The desktop's keyboard layouts and the active one on GNOME and KDE, read in a
/// long-lived child process of the agent (the agent itself never maps GIO or libsystemd:
/// its memory stays as measured, see DesktopProcess). The child writes a line whenever what
/// the desktop says changed, on a pipe the agent's epoll watches: it sleeps in poll between
/// changes (GSettings' change signals, D-Bus signals), so nothing wakes while nothing changes.
///
/// - GNOME (`XDG_CURRENT_DESKTOP` GNOME or Phosh): GSettings `org.gnome.desktop.input-sources`
///   (`sources`, `mru-sources`, `current`, `xkb-options`) through the default backend
///   (dconf), its `changed` signal (`DesktopLayouts.gnome`).
/// - KDE: `org.kde.keyboard` on the session bus (`/Layouts`, `org.kde.KeyboardLayouts`:
///   `getLayoutsList`, `getLayout`, the signals `layoutChanged` and `layoutListChanged`),
///   whoever owns the name (KWin on Wayland, kded on X11; NameOwnerChanged says when it
///   comes and goes), with variants and options from `kxkbrc` (`DesktopLayouts.kde`). KWin
///   serves the name only while there are two layouts or more: without it, kxkbrc's single
///   layout (when `Use=true`), read again on KDE's `reloadConfig` signal.
///
/// Lines: `source NAME` once, then `layouts …` (`DesktopLayouts.line`) or `none` (the
/// desktop names no layout) on every change, `warning MESSAGE`, and `error MESSAGE` before
/// the child exits. It ends when the agent does (PR_SET_PDEATHSIG and the pipe).
final class DesktopKeymapWatch {
    enum Desktop: Equatable {
        case gnome, kde
        var name: String { self == .gnome ? "GNOME's input sources" : "KDE's keyboard layouts" }
    }

    enum Line: Equatable {
        case source(String)
        case layouts(DesktopLayouts)
        case none
        case warning(String)
        case error(String)
    }

    let desktop: Desktop
    private let child: WatchChild
    var fd: Int32 { child.fd }

    /// Which desktop's layouts the session has, by `XDG_CURRENT_DESKTOP` (nil: neither).
    static func desktop(_ environment: [String: String]) -> Desktop? {
        switch DesktopStickyKeys.desktop(environment) {
        case .gnome?: return .gnome
        case .kde?: return .kde
        case nil: return nil
        }
    }

    /// Starts the child; `environment` is the session's (the child takes its GSettings and
    /// bus variables from it).
    init(desktop: Desktop, environment: [String: String]) throws(FocusSourceError) {
        self.desktop = desktop
        do throws(ChildProcessError) {
            child = try WatchChild(input: false) { output in
                DesktopKeymapProducer(output: output, environment: environment).run(desktop)
            }
        } catch { throw FocusSourceError(message: error.message) }
    }

    /// The lines that arrived; `ended` when the child closed the pipe (it exited).
    func read() -> (lines: [Line], ended: Bool) {
        let (texts, ended) = child.read()
        return (texts.map(Self.line), ended)
    }

    static func line(_ text: String) -> Line {
        switch ChildLine(decoding: text) {
        case .report("none"): return .none
        case .report(let report):
            if let layouts = DesktopLayouts(line: report[...]) { return .layouts(layouts) }
            return .error("the keymap watch said '\(report)'")
        case .source(let source): return .source(source)
        case .warning(let warning): return .warning(warning)
        case .error(let error): return .error(error)
        }
    }
}

/// The child's side: reads the desktop, writes the lines.
struct DesktopKeymapProducer {
    let output: Int32
    let environment: [String: String]

    static let gnomeSchema = "org.gnome.desktop.input-sources"
    static let kdeService = "org.kde.keyboard"
    static let kdePath = "/Layouts"
    static let kdeInterface = "org.kde.KeyboardLayouts"

    func emit(_ line: String) {
        ChildLine(decoding: line).write(to: output)
    }

    func run(_ desktop: DesktopKeymapWatch.Desktop) {
        // The session's view of GSettings and the bus (the agent's environment; a test's own).
        for key in ["GSETTINGS_BACKEND", "GSETTINGS_SCHEMA_DIR", "XDG_CONFIG_HOME", "XDG_DATA_DIRS", "XDG_DATA_HOME", "HOME",
                    "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"] {
            if let value = environment[key] { setenv(key, value, 1) } else { unsetenv(key) }
        }
        switch desktop {
        case .gnome: gnome()
        case .kde: kde()
        }
    }

    // MARK: - GNOME

    private func gnome() {
        var gio = kbd_gio()
        let loaded = kbd_gio_load(&gio)
        guard loaded == 0 else {
            return emit("error " + (loaded == -ENOENT ? "cannot load libgio-2.0.so.0 (install libglib2.0-0)"
                                                      : "libgio-2.0.so.0 lacks the GSettings calls (GLib 2.32 or later is needed)"))
        }
        let watch = UnsafeMutablePointer<kbd_input_sources>.allocate(capacity: 1)
        watch.initialize(to: kbd_input_sources())
        switch Int(kbd_input_sources_open(&gio, Self.gnomeSchema, watch)) {
        case Int(KBD_GSETTINGS_OK): break
        case Int(KBD_GSETTINGS_NO_SCHEMAS):
            return emit("error no GSettings schemas are installed; \(Self.gnomeSchema) comes with gsettings-desktop-schemas")
        case Int(KBD_GSETTINGS_NO_SCHEMA):
            return emit("error the GSettings schema \(Self.gnomeSchema) is not installed (it comes with gsettings-desktop-schemas)")
        default:
            return emit("error \(Self.gnomeSchema) lacks sources, mru-sources, current or xkb-options (gsettings-desktop-schemas is too old)")
        }
        // Without dconf's GIO module GIO falls back to a store of this process alone: the
        // desktop's settings would never be seen.
        var backend = [CChar](repeating: 0, count: 64)
        kbd_gsettings_backend_name(&gio, &backend, backend.count)
        if String(decoding: backend.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == "GMemorySettingsBackend",
           environment["GSETTINGS_BACKEND"] != "memory" {
            return emit("error GSettings has no backend but memory, so GNOME's settings cannot be read (install dconf-gsettings-backend)")
        }
        emit("source GSettings \(Self.gnomeSchema)")
        var last = ""
        while true {
            func key(_ name: String) -> [Substring] {
                var buffer = [CChar](repeating: 0, count: 8192)
                kbd_input_sources_key(&gio, watch, name, &buffer, buffer.count)
                let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return text.split(separator: "\n")
            }
            func pairs(_ lines: [Substring]) -> [(type: String, id: String)] {
                lines.map { line in
                    let parts = line.split(separator: " ", maxSplits: 1)
                    return (String(parts.first ?? ""), parts.count > 1 ? String(parts[1]) : "")
                }
            }
            let layouts = DesktopLayouts.gnome(sources: pairs(key("sources")), mru: pairs(key("mru-sources")),
                                               current: Int(key("current").first ?? "") ?? 0, options: key("xkb-options").map(String.init))
            let line = layouts?.line ?? "none"
            if line != last {
                emit(line)
                last = line
            }
            kbd_input_sources_wait(&gio, watch)
        }
    }

    // MARK: - KDE

    private func kde() {
        let bus: MessageBus
        do {
            bus = try MessageBus()
            try bus.addMatch("type='signal',path='\(Self.kdePath)',interface='\(Self.kdeInterface)'")
            try bus.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.kdeService)'")
            // What KDE's keyboard settings send after writing kxkbrc (KWin reloads it then).
            try bus.addMatch("type='signal',path='\(Self.kdePath)',interface='org.kde.keyboard',member='reloadConfig'")
        } catch {
            return emit("error \(error)")
        }
        emit("source \(Self.kdeService) \(Self.kdePath) on the session bus")
        var last = ""
        while true {
            let line = kdeLine(bus)
            if line != last {
                emit(line)
                last = line
            }
            do {
                _ = try bus.nextSignal()
            } catch {
                return emit("error the session bus: \(error)")
            }
        }
    }

    private func kdeLine(_ bus: MessageBus) -> String {
        var kxkbrc: String?
        if let path = Self.kxkbrcPath(environment), let bytes = try? readWholeFile(path: path, limit: 1 << 20) {
            kxkbrc = String(decoding: bytes, as: UTF8.self)
        }
        // KWin serves org.kde.keyboard only with two layouts or more: one layout is kxkbrc's.
        guard bus.hasOwner(Self.kdeService) else { return kxkbrc.flatMap(DesktopLayouts.kde(kxkbrc:))?.line ?? "none" }
        do {
            let list = try bus.callStringTriples(Self.kdeService, Self.kdePath, Self.kdeInterface, "getLayoutsList")
            let active = try bus.callUInt32(Self.kdeService, Self.kdePath, Self.kdeInterface, "getLayout")
            return DesktopLayouts.kde(shortNames: list.map { $0.first ?? "" }, active: Int(active), kxkbrc: kxkbrc)?.line ?? "none"
        } catch {
            emit("warning \(error)")
            return "none"
        }
    }

    /// `$XDG_CONFIG_HOME/kxkbrc`, else `~/.config/kxkbrc`.
    static func kxkbrcPath(_ environment: [String: String]) -> String? {
        if let c = environment["XDG_CONFIG_HOME"], c.hasPrefix("/") { return c + "/kxkbrc" }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return home + "/.config/kxkbrc"
    }
}
