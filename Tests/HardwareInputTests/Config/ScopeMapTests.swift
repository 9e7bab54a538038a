import KbdKeymap
import KbdEvdev
import KbdCommands
import KbdConfig
import KbdControl
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `[scopes]`: the scopes the session agent activates for the focused window.
@Suite struct ScopeMapTests {
    static let config = """
        [scopes]
        "org.gnome.TextEditor" = ["editor"]
        foot = { scopes = ["terminal"], text_input = true }
        global-only = ["global"]

        [scopes.firefox]
        scopes = ["browser"]
        title."*YouTube*" = ["video"]
        title."GitHub ?ull*" = ["review", "browser"]
        title."*" = ["web"]

        """

    @Test(arguments: [
        ("org.gnome.TextEditor", "notes.txt", ["editor"], false),
        ("foot", "~", ["terminal"], true),
        // No entry: the app id itself is the scope.
        ("AppC", "anything", ["AppC"], false),
        // `global` is the router's last, never sent twice.
        ("global-only", "", [], false),
        // Title patterns first, then the app's scopes; first matching pattern wins.
        ("firefox", "Cats - YouTube — Mozilla Firefox", ["video", "browser"], false),
        ("firefox", "GitHub Pull request #18", ["review", "browser"], false),
        ("firefox", "Mozilla Firefox", ["web", "browser"], false),
        // Exact, case-sensitive app ids.
        ("Foot", "~", ["Foot"], false),
    ] as [(String, String, [String], Bool)])
    func resolvesTheChain(_ app: String, _ title: String, _ scopes: [String], _ textInput: Bool) throws {
        let map = try ConfigLoader.parse(Self.config, path: "u.toml").scopes
        #expect(map.resolve(app: app, title: title) == ScopeMap.Active(scopes: scopes, textInput: textInput))
    }

    @Test func noWindowNoScopes() throws {
        let map = try ConfigLoader.parse(Self.config, path: "u.toml").scopes
        #expect(map.resolve(app: nil, title: nil) == ScopeMap.Active(scopes: [], textInput: false))
        #expect(ScopeMap().resolve(app: "foot", title: nil) == ScopeMap.Active(scopes: ["foot"], textInput: false))
    }

    @Test(arguments: [
        ("*", "", true), ("*", "abc", true), ("a*c", "abbbc", true), ("a*c", "abcd", false),
        ("?", "", false), ("?", "é", true), ("*YouTube*", "x YouTube y", true), ("*YouTube*", "youtube", false),
        ("a*b*c", "aXbYc", true), ("a*b*c", "aXcYb", false), ("literal", "literal", true),
        // One backtrack point: this is linear, not exponential.
        (String(repeating: "*a", count: 30) + "b", String(repeating: "a", count: 5000), false),
    ] as [(String, String, Bool)])
    func globs(_ pattern: String, _ text: String, _ matches: Bool) {
        #expect(ScopeMap.glob(pattern, matches: text) == matches)
    }

    @Test(arguments: [
        ("[scopes]\nfoot = \"terminal\"\n", "u.toml:2: scopes.\"foot\": expected an array of scope names or a table (scopes, text_input, title), found a string"),
        ("[scopes]\nfoot = [\"my terminal\"]\n", "u.toml:2: scopes.\"foot\": expected scope names without commas or spaces, found 'my terminal'"),
        ("[scopes]\nfoot = [1]\n", "u.toml:2: scopes.\"foot\": expected an array of scope names, found an array"),
        ("[scopes]\nfoot = { scopes = [\"t\"], text_input = \"yes\" }\n", "u.toml:2: scopes.\"foot\".text_input: expected true or false, found a string"),
        ("[scopes]\nfoot = { scope = [\"t\"] }\n", "u.toml:2: unknown key 'scope' in scopes.\"foot\"; expected scopes, text_input or title"),
        ("[scopes.firefox]\nscopes = [\"b\"]\ntitle = [\"video\"]\n", "u.toml:3: scopes.\"firefox\".title: expected a table from window-title pattern to scopes"),
        ("[scopes.firefox]\ntitle.\"*Tube*\" = \"video\"\n", "u.toml:2: scopes.\"firefox\".title.\"*Tube*\": expected an array of scope names, found a string"),
        ("[scopes]\n\"\" = [\"x\"]\n", "u.toml:2: scopes: an empty app id"),
        ("scopes = [\"x\"]\n", "u.toml:1: scopes: expected a table ([scopes])"),
    ])
    func mistakesNameTheLine(_ text: String, _ message: String) {
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(text, path: "u.toml") }
        do { _ = try ConfigLoader.parse(text, path: "u.toml") } catch { #expect(error.description.contains(message), "\(error.description)") }
    }

    @Test func theExampleConfigLoads() throws {
        let c = try ConfigLoader.load(path: Fixtures.root.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/") + "/examples/desktop.toml")
        #expect(!c.scopes.apps.isEmpty)
    }
}

/// `[scopes]` across the main file and its drop-ins: merged, each app in one file only.
@Suite struct ScopesAcrossFilesTests {
    @Test func dropInScopesMergeAndAnAppTwiceNamesBothPlaces() throws {
        let config = ConfigDropIns(prefix: "kbd-scopes-files")
        let dir = config.directory
        func write(_ path: String, _ text: String) throws { try config.write(path, text) }
        try write("config.toml", "[scopes]\nfoot = [\"terminal\"]\n")
        try write("config.d/10-editor.toml", "[scopes]\n\"org.gnome.TextEditor\" = [\"editor\"]\n")
        let loaded = try ConfigLoader.load(config.files)
        #expect(loaded.scopes.apps.keys.sorted() == ["foot", "org.gnome.TextEditor"])
        try write("config.d/20-foot.toml", "[scopes]\nfoot = [\"shell\"]\n")
        do {
            _ = try ConfigLoader.load(config.files)
            Issue.record("an app in two files loaded")
        } catch {
            let text = String(describing: error)
            #expect(text.contains("\(dir)/config.d/20-foot.toml:2: scopes.foot is also set at \(dir)/config.toml:2; set it in one file only"), "\(text)")
        }
    }
}

/// What the desktop says of the focused widget meets `[scopes]`: an app's own `text_input`
/// wins, else the desktop's answer, else off.
@Suite struct DesktopTextInputTests {
    @Test(arguments: [
        // (app, desktop says, text input)
        ("foot", nil, true), ("foot", false, true),            // marked text_input = true
        ("mpv", true, false), ("mpv", nil, false),             // marked text_input = false: never
        ("gedit", true, true), ("gedit", false, false), ("gedit", nil, false),  // no entry: the desktop's
        ("firefox", true, true),                               // an entry without text_input: the desktop's
        (nil, true, true), (nil, nil, false),                  // no focus source (KWin on Wayland): the desktop's
    ] as [(String?, Bool?, Bool)])
    func appOverridesDesktop(_ app: String?, _ desktop: Bool?, _ textInput: Bool) throws {
        let map = try ConfigLoader.parse("""
            [scopes]
            foot = { scopes = ["terminal"], text_input = true }
            mpv = { scopes = ["video"], text_input = false }
            firefox = ["browser"]
            """, path: "u.toml").scopes
        #expect(map.resolve(app: app, title: nil, desktopTextInput: desktop).textInput == textInput)
    }

    @Test(arguments: [
        ("", TextInputSource.auto), ("[text_input]\nsource = \"kwin\"\n", .kwin),
        ("[text_input]\nsource = \"accessibility\"\n", .accessibility), ("[text_input]\nsource = \"none\"\n", TextInputSource.none),
    ])
    func sourceParses(_ text: String, _ source: TextInputSource) throws {
        #expect(try ConfigLoader.parse(text, path: "u.toml").textInputSource == source)
    }

    @Test(arguments: [
        ("[text_input]\nsource = \"at-spi\"\n", "u.toml:2: text_input.source: expected one of \"auto\", \"kwin\", \"accessibility\", \"none\", found 'at-spi'"),
        ("[text_input]\nsource = \"kwn\"\n", "u.toml:2: text_input.source: expected one of \"auto\", \"kwin\", \"accessibility\", \"none\", found 'kwn' (did you mean 'kwin'?)"),
        ("[text_input]\nsource = true\n", "found a boolean"),
        ("[text_input]\nsorce = \"kwin\"\n", "u.toml:2: unknown key 'text_input.sorce' (did you mean 'source'?); expected source"),
        ("text_input = \"kwin\"\n", "u.toml:1: text_input: expected a table ([text_input])"),
        ("[text_imput]\n", "unknown section 'text_imput' (did you mean 'text_input'?)"),
    ])
    func mistakesNameTheLine(_ text: String, _ message: String) {
        do {
            _ = try ConfigLoader.parse(text, path: "u.toml")
            Issue.record("loaded: \(text)")
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
        }
    }

    @Test func sourceFromADropInAndTwiceNamesBothPlaces() throws {
        let config = ConfigDropIns(prefix: "kbd-text-input-files")
        let dir = config.directory
        func write(_ path: String, _ text: String) throws { try config.write(path, text) }
        try write("config.toml", "[scopes]\nfoot = [\"terminal\"]\n")
        try write("config.d/10-text.toml", "[text_input]\nsource = \"none\"\n")
        let files = config.files
        #expect(try ConfigLoader.load(files).textInputSource == TextInputSource.none)
        try write("config.d/20-text.toml", "[text_input]\nsource = \"kwin\"\n")
        do {
            _ = try ConfigLoader.load(files)
            Issue.record("text_input.source in two files loaded")
        } catch {
            #expect(String(describing: error).contains("\(dir)/config.d/20-text.toml:2: text_input.source is also set at \(dir)/config.d/10-text.toml:2; set it in one file only"))
        }
    }
}
