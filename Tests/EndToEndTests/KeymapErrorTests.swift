import KbdSystem
import KbdKeymap
import KbdEvdev
import KbdCommands
import KbdConfig
import KbdService
import Testing

/// Issue 15: keymap names from the command line and the environment are checked against
/// evdev.lst, and xkbcommon's own log is one error with the config's file:line.
@Suite struct KeymapErrorTests {
    /// xkbcommon's log lines are captured and folded into the one error (nothing printed raw).
    @Test func xkbcommonLogIsFoldedIntoTheError() throws {
        let config = try ConfigLoader.parse("[keymap]\nrules = \"nosuch\"\nlayout = \"us\"\n", path: "k.toml")
        do {
            _ = try compileKeymap(commandLine: KeymapNames(), config: config, environment: [:])
            Issue.record("compiled")
        } catch let error as KeymapError {
            #expect(error.message == "k.toml:1: keymap: cannot compile a keymap for rules=nosuch model=pc105 layout=us variant= options= (xkbcommon: Couldn't look up rules 'nosuch', model 'pc105', layout 'us', variant '', options ''); check the layout, variant and option names (see /usr/share/X11/xkb/rules/evdev.lst)")
        }
    }

    /// Command-line and environment names are checked the same way.
    @Test func commandLineAndEnvironmentNamesAreChecked() {
        #expect(throws: KeymapError(message: "--options: unknown option 'caps:escap'; did you mean 'caps:escape' (Make Caps Lock an additional Esc)? (see /usr/share/X11/xkb/rules/evdev.lst)")) {
            try compileKeymap(commandLine: KeymapNames(options: "caps:escap"), config: .empty(), environment: [:])
        }
        #expect(throws: KeymapError.self) {
            try compileKeymap(commandLine: KeymapNames(), config: .empty(), environment: ["XKB_DEFAULT_LAYOUT": "uk"])
        }
        // An environment layout that the config overrides is not used, so not checked.
        #expect(throws: Never.self) {
            try compileKeymap(commandLine: KeymapNames(layout: "de"), config: .empty(), environment: ["XKB_DEFAULT_LAYOUT": "uk"])
        }
    }

    /// Issue 23: `--model evdev` (what libxkbcommon's own tests compile) was refused with
    /// "unknown model 'evdev'", exit 78. It compiles, so it is used, with one warning.
    @Test func namesXkbcommonCompilesAreWarnedAboutNotRefused() throws {
        var warnings: [String] = []
        let keymap = try compileKeymap(commandLine: KeymapNames(model: "evdev"), config: .empty(), environment: ["XKB_DEFAULT_OPTIONS": "grp:shift_toggle"]) { warnings.append($0) }
        #expect(keymap.names.model == "evdev")
        #expect(warnings == [
            "--model: model 'evdev' is not in /usr/share/X11/xkb/rules/evdev.lst, but libxkbcommon compiles it: using it",
            "XKB_DEFAULT_OPTIONS: option 'grp:shift_toggle' is not in /usr/share/X11/xkb/rules/evdev.lst, but libxkbcommon compiles it: using it; did you mean 'grp:shifts_toggle' (Both Shift together), 'grp:lshift_toggle' (Left Shift) or 'grp:rshift_toggle' (Right Shift)?",
        ])
    }

    /// A config's warning reaches the same callback (the service logs it; the CLI prints it).
    @Test func configWarningsReachTheCallback() throws {
        let config = try ConfigLoader.parse("[keymap]\nmodel = \"evdev\"\n", path: "k.toml")
        var warnings: [String] = []
        _ = try compileKeymap(commandLine: KeymapNames(), config: config, environment: [:]) { warnings.append($0) }
        #expect(warnings == ["k.toml:2: keymap.model: model 'evdev' is not in /usr/share/X11/xkb/rules/evdev.lst, but libxkbcommon compiles it: using it"])
    }
}
