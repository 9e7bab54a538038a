import KbdCore
import CXkb

/// The names a chord's key may use, for "did you mean …?" when one is unknown: every keysym
/// xkbcommon names (enumerated through `xkb_keysym_get_name`, so the list is the installed
/// library's), the kernel's key names (`KEY_VOLUMEUP`, through libevdev) mapped to the keysym
/// that key gives on a US keyboard, and a few names other tools use (`PrintScreen`).
public enum KeysymNames {
    /// Every named keysym (no `U+` Unicode or `0x` numeric forms), in keysym order.
    public static let all: [String] = {
        var names: [String] = []
        let ranges: [ClosedRange<UInt32>] = [0x20...0xFFFF, 0x1008_1000...0x1008_13FF, 0x1008_FE00...0x1008_FFFF]
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buf in
            for range in ranges {
                for sym in range {
                    guard xkb_keysym_get_name(sym, buf.baseAddress, 64) > 0 else { continue }
                    let name = String(cString: buf.baseAddress!)
                    if name.hasPrefix("0x") || name.hasPrefix("U+") { continue }
                    names.append(name)
                }
            }
        }
        return names
    }()

    /// Names other tools and keycaps use that neither xkbcommon nor the kernel has.
    static let otherNames: [String: String] = [
        "printscreen": "Print", "prtsc": "Print", "prtscr": "Print", "prntscrn": "Print", "printscr": "Print",
        "arrowup": "Up", "arrowdown": "Down", "arrowleft": "Left", "arrowright": "Right",
        "uparrow": "Up", "downarrow": "Down", "leftarrow": "Left", "rightarrow": "Right",
        "break": "Pause", "apps": "Menu", "application": "Menu", "contextmenu": "Menu",
    ]

    /// A US keymap for the kernel's key names (compiled on first use).
    nonisolated(unsafe) private static var usKeymap: XkbKeymap? = {
        guard let context = try? XkbContext() else { return nil }
        return try? XkbKeymap(context: context, names: .builtIn)
    }()

    /// The keysym a kernel key name (`KEY_VOLUMEUP`, or `VOLUMEUP`) types at level one on a US
    /// keymap, with the kernel's name; nil for names the kernel lacks or keys without a keysym.
    public static func kernelKeysym(_ text: String) -> (Keysym, String)? {
        var name = text.uppercased()
        if !name.hasPrefix("KEY_") { name = "KEY_" + name }
        guard let code = EventCodeNames.keyCode(named: name), let keymap = usKeymap else { return nil }
        let sym = keymap.levelOneKeysym(code: code, layout: 0)
        return sym == .noSymbol ? nil : (sym, EventCodeNames.keyName(code))
    }

    /// Suggestions for an unknown key name, best first, each with why when it is an alias:
    /// `("XF86AudioRaiseVolume", "the kernel's KEY_VOLUMEUP")`.
    public static func suggestions(for text: String) -> [(name: String, note: String?)] {
        var out: [(String, String?)] = []
        let folded = text.lowercased().filter { $0 != "_" && $0 != "-" && $0 != " " }
        if let name = otherNames[folded] { out.append((name, nil)) }
        for candidate in [text.uppercased(), folded.uppercased()] {
            guard let code = EventCodeNames.keyCode(named: "KEY_" + candidate), let keymap = usKeymap else { continue }
            let sym = keymap.levelOneKeysym(code: code, layout: 0)
            if sym != .noSymbol, !out.contains(where: { $0.0 == sym.name }) {
                out.append((sym.name, "the kernel's \(EventCodeNames.keyName(code))"))
                break
            }
        }
        for name in NearestNames.nearest(to: text, in: all) where !out.contains(where: { $0.0 == name }) {
            out.append((name, nil))
        }
        return Array(out.prefix(3))
    }

    /// ` Did you mean X (the kernel's KEY_Y)?`-style text, empty when there is nothing near.
    public static func didYouMean(_ text: String) -> String? {
        let s = suggestions(for: text)
        guard !s.isEmpty else { return nil }
        let items = s.map { item in "'\(item.name)'" + (item.note.map { " (\($0))" } ?? "") }
        return NearestNames.list(items, quote: "")
    }
}
