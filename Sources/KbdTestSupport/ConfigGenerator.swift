/// Command tables of any size for the scale tests and `kbd-bench toml`: `[[command]]`
/// entries with ids `c0`, `c1`…, a title, a modifier chord over F-keys, letters and
/// digits (384 distinct chords), spread over enough scopes that no chord repeats in a
/// scope, and a `run` argv on every tenth. The same count gives the same text.
public enum ConfigGenerator {
    static let modifiers = ["Ctrl+Alt", "Ctrl+Alt+Shift", "Super+Shift", "Alt+Super", "Ctrl+Super", "Ctrl+Alt+Super",
                            "Alt+Shift+Super", "Ctrl+Shift+Super"]
    static let keys = (1...12).map { "F\($0)" } + (0..<26).map { String(UnicodeScalar(UInt8(97 + $0))) } + (0...9).map(String.init)

    /// The number of scopes `commands(_:)` spreads `count` commands over (at least 300, as the plan asks).
    public static func scopes(for count: Int) -> Int {
        max(300, (count + chords - 1) / chords)
    }

    static var chords: Int { modifiers.count * keys.count }

    public static func commands(_ count: Int) -> String {
        let scopes = scopes(for: count)
        var out = "[keymap]\nlayout = \"us\"\n\n"
        out.reserveCapacity(count * 96)
        for i in 0..<count {
            let chord = (i / scopes) % chords
            out += "[[command]]\nid = \"c\(i)\"\ntitle = \"Command \(i)\"\nkeys = \"\(modifiers[chord / keys.count])+\(keys[chord % keys.count])\"\nscope = \"s\(i % scopes)\"\n"
            if i % 10 == 0 { out += "run = [\"notify-send\", \"c\(i)\"]\n" }
            out += "\n"
        }
        return out
    }
}
