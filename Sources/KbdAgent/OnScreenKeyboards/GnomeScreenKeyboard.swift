import Logging
import KbdConfig
import KbdSystem
import KbdProcess
#if canImport(Glibc)
import Glibc
#endif


/// GNOME Shell: the setting `org.gnome.desktop.a11y.applications screen-keyboard-enabled`
/// (GNOME Shell shows its keyboard only while it is true; squeekboard obeys it too).
final class GnomeScreenKeyboard: KeyboardSwitch {
    static let shellBusName = "org.gnome.Shell"
    static let schema = "org.gnome.desktop.a11y.applications"
    static let key = "screen-keyboard-enabled"
    let name = "GNOME's screen keyboard (\(GnomeScreenKeyboard.schema) \(GnomeScreenKeyboard.key))"
    private let open: () throws -> GSettings
    private let inChild: Bool

    /// The desktop's GSettings (dconf), used from a child process.
    init(environment: [String: String]) {
        open = { try GSettings(environment: environment) }
        inChild = true
    }

    /// A GSettings of this process (tests: GIO's memory backend lives in one process).
    init(settings: GSettings) {
        open = { settings }
        inChild = false
    }

    private func run(_ body: @escaping () throws -> Bool) throws -> Bool {
        inChild ? try DesktopProcess.bool(body) : try body()
    }

    func switchOff() throws -> Bool {
        try run { [open] in
            let settings = try open()
            guard try settings.bool(schema: Self.schema, key: Self.key) else { return false }
            try settings.set(schema: Self.schema, key: Self.key, false)
            return true
        }
    }

    func switchOn() throws {
        _ = try run { [open] in
            try open().set(schema: Self.schema, key: Self.key, true)
            return true
        }
    }
}
