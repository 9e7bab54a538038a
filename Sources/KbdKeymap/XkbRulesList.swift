import KbdCore
import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// The names a keymap may use, from the rules' list (`/usr/share/X11/xkb/rules/evdev.lst`,
/// the file desktop settings panels read): models, layouts, variants per layout, options.
/// Checking names against it catches `uk` (gb), `caps:escap` and `de` with a French variant
/// before xkbcommon would compile something else or ignore the name.
public struct XkbRulesList: Sendable {
    public struct Name: Sendable, Equatable {
        public var name: String
        /// The layout of a variant; nil otherwise.
        public var layout: String?
        public var description: String
    }

    public var models: [Name] = []
    public var layouts: [Name] = []
    public var variants: [Name] = []
    public var options: [Name] = []

    /// Parses the text of a `.lst` file: `! section` lines, then `  name  description`
    /// (variants: `  name  layout: description`).
    public init(text: String) {
        var section = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.hasPrefix("!") {
                section = line.dropFirst().split(separator: " ").first.map(String.init) ?? ""
                continue
            }
            let words = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard let first = words.first else { continue }
            var rest = words.count > 1 ? String(words[1]).trimmingLeadingBlanks() : ""
            let name = String(first)
            switch section {
            case "model": models.append(Name(name: name, description: rest))
            case "layout": layouts.append(Name(name: name, description: rest))
            case "variant":
                var layout: String?
                if let colon = rest.firstIndex(of: ":") {
                    layout = String(rest[..<colon])
                    rest = String(rest[rest.index(after: colon)...]).trimmingLeadingBlanks()
                }
                variants.append(Name(name: name, layout: layout, description: rest))
            case "option": options.append(Name(name: name, description: rest))
            default: break
            }
        }
    }

    /// Where the xkb data is: `$XKB_CONFIG_ROOT`, else /usr/share/X11/xkb (as xkbcommon looks).
    public static var root: String {
        if let r = getenv("XKB_CONFIG_ROOT"), r.pointee != 0 { return String(cString: r) }
        return "/usr/share/X11/xkb"
    }

    /// The list of rules `rules` (`evdev` by default); nil when it cannot be read. Read each
    /// time, not kept: the resident service would hold half a megabyte of names it used once.
    public static func load(rules: String?) -> XkbRulesList? {
        let name = rules.flatMap { $0.isEmpty ? nil : $0 } ?? "evdev"
        guard !name.contains("/") else { return nil }
        return read(root + "/rules/" + name + ".lst")
    }

    private static func read(_ path: String) -> XkbRulesList? {
        guard let bytes = try? readWholeFile(path: path, limit: 4 << 20) else { return nil }
        let list = XkbRulesList(text: String(decoding: bytes, as: UTF8.self))
        return list.layouts.isEmpty ? nil : list
    }

    /// A name that is not on the list: which field (`layout`, `variant`, `options`, `model`),
    /// the name, and the message, with the nearest names.
    public struct Problem: Sendable, Equatable {
        public var field: String
        public var name: String
        public var message: String
        /// The nearest names (`; did you mean …?`), or nothing.
        public var hint: String

        public init(field: String, name: String, message: String, hint: String = "") {
            self.field = field
            self.name = name
            self.message = message
            self.hint = hint
        }

        /// The text for a name libxkbcommon compiled although the list omits it: the rules
        /// define more models, options, layouts and variants than the list names.
        public var warning: String {
            let what = field == "options" ? "option" : field
            return "\(what) '\(name)' is not in \(XkbRulesList.root)/rules/evdev.lst, but libxkbcommon compiles it: using it\(hint)"
        }
    }

    /// Judges the list's problems by what libxkbcommon did with the names, since it, not the
    /// list, decides: when the keymap did not compile every problem is an error; when it did,
    /// an option libxkbcommon ignored (no rule matched it) is still an error, and every other
    /// name is accepted with a warning that keeps the nearest names.
    public static func judge(_ problems: [Problem], compiled keymap: XkbKeymap?) -> (errors: [Problem], warnings: [Problem]) {
        guard let keymap else { return (problems, []) }
        var errors: [Problem] = [], warnings: [Problem] = []
        for p in problems {
            if p.field == "options" && keymap.ignoredOptions.contains(p.name) { errors.append(p) } else { warnings.append(p) }
        }
        return (errors, warnings)
    }

    /// Every name of `names` that is not on the list. Empty entries (`us,` or `,phonetic`) are fine.
    public func problems(_ names: KeymapNames) -> [Problem] {
        var out: [Problem] = []
        func items(_ text: String?) -> [String] {
            (text ?? "").split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingLeadingBlanks() }
        }
        if let model = names.model, !model.isEmpty, !models.contains(where: { $0.name == model }) {
            let hint = Self.hint(model, models)
            out.append(Problem(field: "model", name: model, message: "unknown model '\(model)'\(hint)", hint: hint))
        }
        let layoutList = items(names.layout)
        for layout in layoutList where !layout.isEmpty && !layouts.contains(where: { $0.name == layout }) {
            // "uk" is "English (UK)", whose name is gb: a word in a description's parentheses.
            let byDescription = layouts.filter { l in
                l.description.split(whereSeparator: { "(), ".contains($0) }).contains { $0.lowercased() == layout.lowercased() }
            }
            let hint = Self.hint(layout, layouts, first: byDescription)
            out.append(Problem(field: "layout", name: layout, message: "unknown layout '\(layout)'\(hint) (see \(Self.root)/rules/evdev.lst)", hint: hint))
        }
        for (i, variant) in items(names.variant).enumerated() where !variant.isEmpty {
            let layout = i < layoutList.count ? layoutList[i] : (layoutList.first ?? "us")
            guard layouts.contains(where: { $0.name == layout }) else { continue }
            let own = variants.filter { $0.layout == layout }
            if !own.contains(where: { $0.name == variant }) {
                let hint = Self.hint(variant, own)
                let none = own.isEmpty ? "; layout '\(layout)' has no variants" : hint.isEmpty ? "; layout '\(layout)' has \(own.prefix(6).map(\.name).joined(separator: ", "))\(own.count > 6 ? ", …" : "")" : ""
                out.append(Problem(field: "variant", name: variant, message: "unknown variant '\(variant)' for layout '\(layout)'\(hint)\(none)", hint: hint))
            }
        }
        for option in items(names.options) where !option.isEmpty && !options.contains(where: { $0.name == option }) {
            let hint = Self.hint(option, options)
            out.append(Problem(field: "options", name: option, message: "unknown option '\(option)'\(hint) (see \(Self.root)/rules/evdev.lst)", hint: hint))
        }
        return out
    }

    /// `; did you mean 'gb' (English (UK))?`, or nothing.
    static func hint(_ word: String, _ list: [Name], first: [Name] = []) -> String {
        var picks = first
        for n in NearestNames.nearest(to: word, in: list.map(\.name), limit: 3) where !picks.contains(where: { $0.name == n }) {
            if let entry = list.first(where: { $0.name == n }) { picks.append(entry) }
        }
        guard !picks.isEmpty else { return "" }
        let items = picks.prefix(3).map { "'\($0.name)' (\($0.description))" }
        return "; did you mean \(NearestNames.list(Array(items), quote: ""))?"
    }
}

extension String {
    func trimmingLeadingBlanks() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
