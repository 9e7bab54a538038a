/// `[scopes]` in a user's config: which scopes are active while an application has the
/// focus (the session agent sends them to the service on every focus change).
///
///     [scopes]
///     "org.gnome.TextEditor" = ["editor"]                 # app id (Wayland) or WM class (X11)
///     foot = { scopes = ["terminal"], text_input = true } # a terminal: text is typed there
///
///     [scopes.firefox]
///     scopes = ["browser"]
///     title."*YouTube*" = ["video"]                       # window-title patterns, first match wins
///
/// The chain for a focused window, most specific first: the scopes of the first title
/// pattern that matches, then the app's scopes; an app without an entry has its app id as
/// its only scope; `global` is always last (the router adds it).
public struct ScopeMap: Sendable, Equatable {
    public struct TitlePattern: Sendable, Equatable {
        /// A glob: `*` any run of characters, `?` one character, everything else itself.
        public var pattern: String
        public var scopes: [String]
        public init(pattern: String, scopes: [String]) {
            self.pattern = pattern
            self.scopes = scopes
        }
    }

    public struct App: Sendable, Equatable {
        public var scopes: [String]
        /// Whether text is typed in this app (terminals, editors): the text-input filter's
        /// fallback where the desktop tells nothing better. nil: not said (false).
        public var textInput: Bool?
        public var titles: [TitlePattern]
        public init(scopes: [String], textInput: Bool? = nil, titles: [TitlePattern] = []) {
            self.scopes = scopes
            self.textInput = textInput
            self.titles = titles
        }
    }

    /// What is active while a window has the focus.
    public struct Active: Sendable, Equatable {
        /// Most specific first, without `global` (always last anyway).
        public var scopes: [String]
        public var textInput: Bool
        public init(scopes: [String], textInput: Bool) {
            self.scopes = scopes
            self.textInput = textInput
        }
    }

    /// By app id (Wayland `app_id`) or WM class (X11 `WM_CLASS` class), compared exactly.
    public var apps: [String: App]

    public init(apps: [String: App] = [:]) { self.apps = apps }

    /// The scopes for a focused window; no window (nil app): none. `desktopTextInput` is
    /// what the desktop said of the focused widget (nil: it says nothing); an app's own
    /// `text_input` overrides it.
    public func resolve(app: String?, title: String?, desktopTextInput: Bool? = nil) -> Active {
        guard let app, !app.isEmpty else { return Active(scopes: [], textInput: desktopTextInput ?? false) }
        guard let entry = apps[app] else { return Active(scopes: Self.clean([app]), textInput: desktopTextInput ?? false) }
        var chain: [String] = []
        if let title, let match = entry.titles.first(where: { Self.glob($0.pattern, matches: title) }) {
            chain = match.scopes
        }
        chain += entry.scopes
        return Active(scopes: Self.clean(chain), textInput: entry.textInput ?? desktopTextInput ?? false)
    }

    /// Without duplicates and without `global`, which the router puts last.
    static func clean(_ scopes: [String]) -> [String] {
        var seen: Set<String> = []
        return scopes.filter { $0 != "global" && seen.insert($0).inserted }
    }

    /// Glob matching on characters: `*` (any run, also empty), `?` (one character).
    /// Iterative with one backtrack point: linear in practice, never exponential.
    public static func glob(_ pattern: String, matches text: String) -> Bool {
        let p = Array(pattern), t = Array(text)
        var i = 0, j = 0
        var star = -1, mark = 0
        while j < t.count {
            if i < p.count && (p[i] == "?" || p[i] == t[j]) {
                i += 1
                j += 1
            } else if i < p.count && p[i] == "*" {
                star = i
                mark = j
                i += 1
            } else if star >= 0 {
                i = star + 1
                mark += 1
                j = mark
            } else {
                return false
            }
        }
        while i < p.count && p[i] == "*" { i += 1 }
        return i == p.count
    }
}

/// `[text_input] source`: where the session agent learns whether the focused widget takes
/// text (the text-input filter: plain Shift+letter chords do not fire while it does).
public enum TextInputSource: String, Sendable, CaseIterable {
    /// KWin's `activeClientSupportsTextInput` when KWin is on the session bus, else the
    /// accessibility bus.
    case auto
    /// KDE: KWin's `org.kde.kwin.VirtualKeyboard` `activeClientSupportsTextInput`.
    case kwin
    /// AT-SPI focus events on the accessibility bus: a focused editable text or terminal.
    case accessibility
    /// Only the `[scopes]` entries marked `text_input`.
    case none
}
