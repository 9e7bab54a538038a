import KbdCore
import KbdGeometry
import KbdKeymap
import KbdEvdev
import KbdConfig
import KbdControl
import Testing

/// Issue 15: errors that suggest the fix, computed from the real name lists (xkbcommon's
/// keysyms, the kernel's key names, evdev.lst, the config's own keys). Golden texts.
@Suite struct SuggestionTests {
    static let tail = "(keys are keysym names, see xkbcommon-keysyms.h; 'kbd-commandd monitor' shows the name of each key you press)"

    @Test(arguments: [
        ("VolumeUp", "unknown key name 'VolumeUp'; did you mean 'XF86AudioRaiseVolume' (the kernel's KEY_VOLUMEUP)? \(tail)"),
        ("PrintScreen", "unknown key name 'PrintScreen'; did you mean 'Print'? \(tail)"),
        ("XF86AudioRaiseVolumes", "unknown key name 'XF86AudioRaiseVolumes'; did you mean 'XF86AudioRaiseVolume'? \(tail)"),
        ("Super+retrun", "unknown key name 'retrun'; did you mean 'Return'? \(tail)"),
        ("PlayPause", "unknown key name 'PlayPause'; did you mean 'XF86AudioPlay' (the kernel's KEY_PLAYPAUSE)? \(tail)"),
        ("Ctrl-Alt-Del", "unknown key name 'Ctrl-Alt-Del'; modifiers and the key are joined with '+', not '-': did you mean 'Ctrl+Alt+Del'?"),
        ("Ctrl+Alt-T", "unknown key name 'Alt-T'; modifiers and the key are joined with '+', not '-': did you mean 'Ctrl+Alt+T'?"),
        ("Ctrl+Alt", "'Alt' is a modifier; a chord needs a key after its modifiers, such as Ctrl+Alt+T"),
        ("Ctrl+Shift", "'Shift' is a modifier; a chord needs a key after its modifiers, such as Ctrl+Shift+T"),
        ("Ctrl+", "expected a key after the last '+'; a chord needs a key after its modifiers, such as Ctrl+T"),
        ("Ctlr+C", "unknown modifier 'Ctlr' (did you mean 'Ctrl'?); expected Ctrl, Alt, Shift, Super or AltGr"),
        ("Ctrl+Sprocket", "unknown key name 'Sprocket'; expected a keysym name such as a, 1, exclam, Return, F4 (see xkbcommon-keysyms.h)"),
    ])
    func keyNames(_ keys: String, _ message: String) {
        #expect(throws: ConfigError(problems: [.init(location: SourceLocation(path: "k.toml", line: 3), message: "keys = '\(keys)': \(message)")])) {
            try ConfigLoader.parse("[[command]]\nid = \"a\"\nkeys = \"\(keys)\"\n", path: "k.toml")
        }
    }

    @Test(arguments: [
        ("[keymap]\nlayout = \"uk\"\n",
         "k.toml:2: keymap.layout: unknown layout 'uk'; did you mean 'gb' (English (UK)), 'us' (English (US)) or 'dk' (Danish)? (see /usr/share/X11/xkb/rules/evdev.lst)"),
        ("[keymap]\nlayout = \"us\"\noptions = \"grp:alt_shift_toggle,caps:escap\"\n",
         "k.toml:3: keymap.options: unknown option 'caps:escap'; did you mean 'caps:escape' (Make Caps Lock an additional Esc)? (see /usr/share/X11/xkb/rules/evdev.lst)"),
        ("[keymap]\nlayout = \"de\"\nvariant = \"nodeadkey\"\n",
         "k.toml:3: keymap.variant: unknown variant 'nodeadkey' for layout 'de'; did you mean 'nodeadkeys' (German (no dead keys))?"),
        ("[keymap]\nlayout = \"us,ru\"\nvariant = \",phonetik\"\n",
         "k.toml:3: keymap.variant: unknown variant 'phonetik' for layout 'ru'; did you mean 'phonetic' (Russian (phonetic))?"),
        ("[keymap]\nlayoutt = \"us\"\n",
         "k.toml:2: unknown key 'keymap.layoutt' (did you mean 'layout'?); expected rules, model, layout, variant or options"),
        ("[[command]]\nid = \"a\"\ntitel = \"A\"\nkeys = \"Ctrl+A\"\n",
         "k.toml:3: unknown key 'titel' in [[command]] (did you mean 'title'?); expected one of id, title, keys, scope, repeat, priority_over_text_input, run, group, discoverability_title, action, localize, mirror, devices, on, hold_ms, tap_ms, cooldown_ms, run_on_release"),
        ("[keymapp]\nlayout = \"us\"\n",
         "k.toml:1: unknown section 'keymapp' (did you mean 'keymap'?); expected one of [keymap], [settings], [[command]], [devices], [geometry], [osk], [scopes], [text_input], [accessibility], [hud], [bar], [[device]], [portal]"),
        ("[devices]\ngrap = true\n",
         "k.toml:2: unknown key 'devices.grap' (did you mean 'grab'?); expected include, exclude, internal, external, virtual or grab"),
    ])
    func tomlAndKeymapNames(_ text: String, _ expected: String) {
        do {
            _ = try ConfigLoader.parse(text, path: "k.toml")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description == expected)
        }
    }

    /// Issue 23: libxkbcommon, not evdev.lst, decides. Names the rules define but the list omits
    /// (the `evdev` model libxkbcommon's own tests use, Apple models, options and a layout)
    /// compile, so they are accepted with a warning at their line that keeps the nearest names.
    /// Before, each was refused ("unknown model 'evdev'", exit 78).
    @Test(arguments: [
        ("model = \"evdev\"", "k.toml:3: keymap.model: model 'evdev' is not in /usr/share/X11/xkb/rules/evdev.lst, but libxkbcommon compiles it: using it"),
        ("model = \"ibook\"", "k.toml:3: keymap.model: model 'ibook' is not in /usr/share/X11/xkb/rules/evdev.lst, but libxkbcommon compiles it: using it; did you mean 'winbook' (Winbook Model XP5)?"),
        ("model = \"pc150\"", "k.toml:3: keymap.model: model 'pc150' is not in /usr/share/X11/xkb/rules/evdev.lst, but libxkbcommon compiles it: using it; did you mean 'pc105' (Generic 105-key PC), 'pc101' (Generic 101-key PC) or 'pc102' (Generic 102-key PC)?"),
        ("options = \"grp:shift_toggle\"", "k.toml:3: keymap.options: option 'grp:shift_toggle' is not in /usr/share/X11/xkb/rules/evdev.lst, but libxkbcommon compiles it: using it; did you mean 'grp:shifts_toggle' (Both Shift together), 'grp:lshift_toggle' (Left Shift) or 'grp:rshift_toggle' (Right Shift)?"),
        ("options = \"parens:swap_brackets\"", "k.toml:3: keymap.options: option 'parens:swap_brackets' is not in /usr/share/X11/xkb/rules/evdev.lst, but libxkbcommon compiles it: using it"),
    ])
    func namesTheListOmitsButXkbcommonCompilesAreWarnings(_ line: String, _ warning: String) throws {
        let config = try ConfigLoader.parse("[keymap]\nlayout = \"us\"\n\(line)\n", path: "k.toml")
        #expect(config.keymapWarnings.map(\.description) == [warning])
    }

    /// A layout only in symbols/ (APL) compiles too: a warning, from the config as from the
    /// command line.
    @Test func aLayoutTheListOmitsIsAWarning() throws {
        let config = try ConfigLoader.parse("[keymap]\nlayout = \"apl\"\n", path: "k.toml")
        #expect(config.keymapWarnings.count == 1)
        #expect(config.keymapWarnings.first?.description.hasPrefix("k.toml:2: keymap.layout: layout 'apl' is not in") == true)
    }

    /// The option libxkbcommon ignores (no rule matches it) is still refused: it reports it.
    @Test func ignoredOptionsAreReadFromXkbcommonsLog() throws {
        let keymap = try XkbKeymap(context: XkbContext(), names: KeymapNames(layout: "us", options: "caps:escap,grp:shift_toggle"))
        #expect(keymap.ignoredOptions == ["caps:escap"])
    }

    /// Valid names pass: several layouts with empty variants, real options.
    @Test func validKeymapNamesPass() throws {
        _ = try ConfigLoader.parse("[keymap]\nlayout = \"us,ru\"\nvariant = \",phonetic\"\noptions = \"grp:alt_shift_toggle,caps:escape\"\nmodel = \"pc105\"\n", path: "k.toml")
        _ = try ConfigLoader.parse("[keymap]\nlayout = \"gb\"\n", path: "k.toml")
    }

    @Test func nearestNamesAreByEditDistance() {
        #expect(NearestNames.nearest(to: "titel", in: ["id", "title", "keys"]) == ["title"])
        #expect(NearestNames.nearest(to: "zzzz", in: ["id", "title", "keys"]) == [])
        #expect(NearestNames.distance(Array("ab".unicodeScalars), Array("ba".unicodeScalars)) == 1)
        #expect(KeysymNames.all.contains("XF86AudioRaiseVolume") && KeysymNames.all.contains("Print") && KeysymNames.all.count > 1500)
    }
}
