import Testing
import KbdSystem
import KbdGeometry
import KbdKeymap
import KbdCommands
import KbdConfig
import KbdControl
import KbdDaemon
import KbdService

/// Issue 26: /etc/default/keyboard (keyboard(5)) as its writers write it, and where it
/// stands among the keymap's sources.
@Suite struct SystemKeyboardTests {
    /// What systemd-localed writes for `localectl set-x11-keymap de,us pc105 nodeadkeys, grp:alt_shift_toggle`:
    /// plain values, quoted only when needed.
    @Test func localectlsFile() {
        let k = SystemKeyboard(path: "/etc/default/keyboard", text: """
            # Written by systemd-localed(8) or systemd-localed.service, read by systemd-localed and systemd's vconsole-setup.
            # Use 'localectl set-x11-keymap' to update this file.
            XKBMODEL=pc105
            XKBLAYOUT=de,us
            XKBVARIANT=nodeadkeys,
            XKBOPTIONS=grp:alt_shift_toggle
            BACKSPACE=guess

            """)
        #expect(k.names == KeymapNames(model: "pc105", layout: "de,us", variant: "nodeadkeys,", options: "grp:alt_shift_toggle"))
        #expect(k.lines == ["XKBMODEL": 3, "XKBLAYOUT": 4, "XKBVARIANT": 5, "XKBOPTIONS": 6])
        #expect(k.warnings.isEmpty)
        #expect(k.location("XKBOPTIONS") == "/etc/default/keyboard:6")
    }

    @Test func shellQuotingCommentsAndExport() {
        let k = SystemKeyboard(path: "k", text: "  XKBLAYOUT='fr'  # azerty\r\nexport XKBVARIANT=\"oss\"\nXKBOPTIONS=\"ctrl:nocaps,compose:\\\"ralt\\\"\"\nXKBMODEL=pc\\105 # escaped\n")
        #expect(k.names.layout == "fr")
        #expect(k.names.variant == "oss")
        #expect(k.names.options == "ctrl:nocaps,compose:\"ralt\"")
        #expect(k.names.model == "pc105")
        #expect(k.warnings.isEmpty)
    }

    @Test func emptyValuesAreUnset() {
        let k = SystemKeyboard(path: "k", text: "XKBMODEL=\"\"\nXKBLAYOUT=\"\"\nXKBVARIANT=\"\"\nXKBOPTIONS=''\n")
        #expect(k.names.isEmpty)
        #expect(!k.namesAnything)
    }

    @Test func badLinesAreWarningsWithTheLine() {
        let k = SystemKeyboard(path: "k", text: "XKBLAYOUT=de\nXKBVARIANT=\"nodeadkeys\nXKBOPTIONS=$OPTS\nXKBMODEL=pc105 pc104\nnot an assignment\nXKBLAYOUT = us\n")
        #expect(k.names == KeymapNames(layout: "de"))
        #expect(k.warnings == [
            "k:2: XKBVARIANT: no closing \" for the value; line ignored",
            "k:3: XKBOPTIONS: shell expansions ($, `) are not read; line ignored",
            "k:4: XKBMODEL: more than one word after '=' (quote the value); line ignored",
            "k:5: expected NAME=value (shell-style), found 'not an assignment'; line ignored",
            "k:6: expected NAME=value (shell-style), found 'XKBLAYOUT = us'; line ignored",
        ])
    }

    @Test func theFileIsReadOnlyWhenNothingElseNamesAKeymap() {
        let system = KeymapNames(model: "pc105", layout: "de", variant: "nodeadkeys", options: "ctrl:nocaps")
        let none = KeymapNames()
        #expect(KeymapNames.resolve(commandLine: none, config: none, environment: [:], system: system)
            == KeymapNames(rules: "evdev", model: "pc105", layout: "de", variant: "nodeadkeys", options: "ctrl:nocaps"))
        // Any name above it, even a model alone, and the file is not read.
        #expect(KeymapNames.resolve(commandLine: none, config: KeymapNames(model: "pc104"), environment: [:], system: system)
            == KeymapNames(rules: "evdev", model: "pc104", layout: "us", variant: "", options: ""))
        #expect(KeymapNames.resolve(commandLine: none, config: none, environment: ["XKB_DEFAULT_OPTIONS": "caps:escape"], system: system).layout == "us")
        #expect(KeymapNames.resolve(commandLine: KeymapNames(layout: "gb"), config: none, environment: [:], system: system).layout == "gb")
        // An empty XKB_DEFAULT_* counts as unset.
        #expect(KeymapNames.resolve(commandLine: none, config: none, environment: ["XKB_DEFAULT_LAYOUT": ""], system: system).layout == "de")
    }

    @Test func compilingWithTheFileKeepsWhatWorksAndWarns() throws {
        var warnings: [String] = []
        let k = SystemKeyboard(path: "/k", text: "XKBLAYOUT=de\nXKBVARIANT=nodeadkeys\nXKBOPTIONS=ctrl:nocapz\n")
        let (keymap, source) = try compileKeymapWithSource(commandLine: KeymapNames(), config: .empty(), environment: [:], system: k) { warnings.append($0) }
        #expect(source == "/k")
        #expect(keymap.names.layout == "de" && keymap.names.variant == "nodeadkeys" && keymap.names.options == "")
        #expect(warnings.count == 1 && warnings[0].hasPrefix("/k:3: XKBOPTIONS: unknown option 'ctrl:nocapz'"))
        // A German keymap: the key at the Y position types z.
        #expect(keymap.levelOneKeysym(code: 21, layout: 0).name == "z")
        warnings = []
        let bad = SystemKeyboard(path: "/k", text: "XKBLAYOUT=xx\n")
        let fallback = try compileKeymapWithSource(commandLine: KeymapNames(), config: .empty(), environment: [:], system: bad) { warnings.append($0) }
        #expect(fallback.source == "the built-in default")
        #expect(fallback.keymap.names.layout == "us")
        #expect(warnings.count == 1 && warnings[0].hasPrefix("/k:1: XKBLAYOUT: unknown layout 'xx'"))
    }

    @Test func aMissingFileIsNoFileAndTheEnvironmentNamesIt() {
        #expect(SystemKeyboard.load(path: "/nonexistent/keyboard") == nil)
        #expect(SystemKeyboard.path(environment: [:]) == "/etc/default/keyboard")
        #expect(SystemKeyboard.path(environment: ["KBD_COMMANDD_SYSTEM_KEYBOARD": "/x"]) == "/x")
        #expect(SystemKeyboard.path(environment: ["KBD_COMMANDD_SYSTEM_KEYBOARD": ""]) == nil)
    }
}
