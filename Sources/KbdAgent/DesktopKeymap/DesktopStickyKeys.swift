import KbdSystem
import KbdProcess

/// The desktop's own sticky-keys setting, which the agent reports to the service
/// (`set_sticky_keys`): GNOME's `org.gnome.desktop.a11y.keyboard stickykeys-enable` (mutter
/// latches with it; Phosh too), KDE's `kaccessrc` `[Keyboard] StickyKeys` (KWin's). sway,
/// i3 and Hyprland have none: nothing is reported and the config's
/// `[accessibility] sticky_keys` stays.
package enum DesktopStickyKeys {
    package static let gnomeSchema = "org.gnome.desktop.a11y.keyboard"
    package static let gnomeKey = "stickykeys-enable"

    /// Which desktop's setting applies, by `XDG_CURRENT_DESKTOP` (nil: none).
    package enum Desktop: Equatable { case gnome, kde }

    package static func desktop(_ environment: [String: String]) -> Desktop? {
        let names = (environment["XDG_CURRENT_DESKTOP"] ?? "").split(separator: ":").map { $0.uppercased() }
        if names.contains("KDE") { return .kde }
        if names.contains("GNOME") || names.contains("PHOSH") { return .gnome }
        return nil
    }

    /// `$XDG_CONFIG_HOME/kaccessrc`, else `~/.config/kaccessrc`.
    package static func kaccessrcPath(_ environment: [String: String]) -> String? {
        if let c = environment["XDG_CONFIG_HOME"], c.hasPrefix("/") { return c + "/kaccessrc" }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return home + "/.config/kaccessrc"
    }

    /// `StickyKeys` of the `[Keyboard]` group of a KConfig file (KDE's default: false). KConfig
    /// booleans are true, on, yes or 1, any case; `StickyKeys[$i]` (immutable) counts too.
    package static func kaccessrc(_ text: String) -> Bool {
        var group = ""
        var value = false
        for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("[") {
                group = String(line.dropFirst().prefix { $0 != "]" })
                continue
            }
            guard group == "Keyboard", let eq = line.firstIndex(of: "=") else { continue }
            var key = line[..<eq].trimmingCharacters()
            if let bracket = key.firstIndex(of: "[") { key = String(key[..<bracket]) }
            guard key == "StickyKeys" else { continue }
            value = ["true", "on", "yes", "1"].contains(line[line.index(after: eq)...].trimmingCharacters().lowercased())
        }
        return value
    }

    /// The setting of the session's desktop, nil when it has none (or it cannot be read:
    /// `problem` says why).
    static func read(_ environment: [String: String]) -> (enabled: Bool?, problem: String?) {
        switch desktop(environment) {
        case nil:
            return (nil, nil)
        case .kde:
            guard let path = kaccessrcPath(environment) else { return (nil, "no HOME or XDG_CONFIG_HOME to find kaccessrc") }
            guard let bytes = try? readWholeFile(path: path, limit: 1 << 20) else { return (false, nil) }  // never written: KDE's default
            return (kaccessrc(String(decoding: bytes, as: UTF8.self)), nil)
        case .gnome:
            do {
                let on = try DesktopProcess.bool { try GSettings(environment: environment).bool(schema: gnomeSchema, key: gnomeKey) }
                return (on, nil)
            } catch {
                return (nil, "\(gnomeSchema) \(gnomeKey): \(error)")
            }
        }
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
