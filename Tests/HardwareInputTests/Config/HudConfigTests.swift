import KbdConfig
import KbdCommands
import KbdCore
@testable import KbdControl
import Testing

/// Issue 28: `[hud]`, and `group`, `discoverability_title` and `action` on commands: read
/// into the config, refused with the file, the line, what was expected and the nearest name,
/// and warned about when a setting cannot do what it says.
@Suite struct HudConfigTests {
    func problems(_ text: String) -> [String] {
        do { _ = try ConfigLoader.parse(text, path: "c.toml"); return [] } catch { return error.problems.map(\.description) }
    }

    @Test func theKeysAreRead() throws {
        let config = try ConfigLoader.parse("""
            [hud]
            hold = "ctrl"
            delay_ms = 400
            sequence_delay_ms = 0

            [[command]]
            id = "save"
            title = "Save"
            discoverability_title = "Save File"
            group = "File"
            keys = "Ctrl+S"

            [[command]]
            id = "help"
            keys = "Super+Slash"
            action = "hud"
            """, path: "c.toml")
        #expect(config.hud == HudSettings(enabled: true, hold: .ctrl, delayMilliseconds: 400, sequenceDelayMilliseconds: 0))
        #expect(config.hudConfigured)
        let save = try #require(config.table.command(id: "save"))
        #expect(save.group == "File" && save.discoverabilityTitle == "Save File" && save.action == .run && save.shownTitle == "Save File")
        #expect(config.table.command(id: "help")?.action == .hud)
        // Without [hud]: the defaults (Super, 700 ms, 1000 ms), on.
        let plain = try ConfigLoader.parse("[[command]]\nid = \"t\"\nkeys = \"Ctrl+T\"\n", path: "c.toml")
        #expect(plain.hud == HudSettings() && plain.hud.hold == .super && plain.hud.delayMilliseconds == 700 && plain.hud.sequenceDelayMilliseconds == 500 && !plain.hud.extendSequenceTimeout)
        #expect(!plain.hudConfigured && ConfigLoader.hudSummary(plain) == nil)
        #expect(ConfigLoader.hudSummary(config) == "HUD: shows after Ctrl is held alone for 400 ms, and a sequence's continuations after 0 ms; 1 command toggles it; groups: File (1 command under \"Other\")")
    }

    @Test(arguments: [
        ("[hud]\nhold = \"Supr\"\n", "c.toml:2: hud.hold: expected one of \"Ctrl\", \"Alt\", \"Shift\", \"Super\", \"AltGr\", found 'Supr' (did you mean 'Super'?)"),
        ("[hud]\nhold = 1\n", "c.toml:2: hud.hold: expected one of \"Ctrl\", \"Alt\", \"Shift\", \"Super\", \"AltGr\", found an integer"),
        ("[hud]\nhold = \"CapsLock\"\n", "c.toml:2: hud.hold: expected one of \"Ctrl\", \"Alt\", \"Shift\", \"Super\", \"AltGr\", found 'CapsLock'"),
        ("[hud]\ndelay_ms = 5\n", "c.toml:2: hud.delay_ms: expected an integer from 100 to 10000 (default 700), found 5"),
        ("[hud]\nsequence_delay_ms = -1\n", "c.toml:2: hud.sequence_delay_ms: expected an integer from 0 to 60000 (default 500), found -1"),
        ("[hud]\nenabled = \"yes\"\n", "c.toml:2: hud.enabled: expected true or false, found a string"),
        ("[hud]\ndealy_ms = 500\n", "c.toml:2: unknown key 'hud.dealy_ms' (did you mean 'delay_ms'?); expected enabled, hold, delay_ms, sequence_delay_ms or extend_sequence_timeout"),
        ("[hdu]\n", "c.toml:1: unknown section 'hdu' (did you mean 'hud'?); expected one of [keymap], [settings], [[command]], [devices], [geometry], [osk], [scopes], [text_input], [accessibility], [hud], [bar], [[device]], [portal]"),
        ("[[command]]\nid = \"t\"\nkeys = \"Ctrl+T\"\naction = \"hdu\"\n", "c.toml:4: action: expected \"run\" or \"hud\" (\"hud\": the chord toggles the discoverability HUD), found 'hdu' (did you mean 'hud'?)"),
        ("[[command]]\nid = \"t\"\nkeys = \"Ctrl+T\"\ngroup = \"\"\n", "c.toml:4: group: expected a non-empty string, found an empty string"),
        ("[[command]]\nid = \"t\"\nkeys = \"Ctrl+T\"\ngroup = \"Edit\\nrm -rf\"\n", "c.toml:4: group: expected a group heading such as \"Edit\" without control characters (line breaks, tabs, escapes), found 'Edit\\nrm -rf'"),
        ("[[command]]\nid = \"t\"\nkeys = \"Ctrl+T\"\ndiscoverability_title = \"\(String(repeating: "x", count: 81))\"\n", "c.toml:4: discoverability_title: expected a title for the HUD such as \"Save File\" of at most 80 characters, found 81"),
        ("[[command]]\nid = \"t\"\nkeys = \"Ctrl+T\"\ngroup = 3\n", "c.toml:4: group: expected a non-empty string, found an integer"),
        ("[[command]]\nid = \"t\"\nkeys = \"Ctrl+T\"\naction = \"hud\"\nrun = [\"/bin/true\"]\n", "c.toml:5: run: a command with action = \"hud\" toggles the discoverability HUD and runs nothing; remove run, or action to run it"),
        ("[[command]]\nid = \"t\"\nkeys = \"Ctrl+T\"\ngruop = \"Edit\"\n", "c.toml:4: unknown key 'gruop' in [[command]] (did you mean 'group'?); expected one of id, title, keys, scope, repeat, priority_over_text_input, run, group, discoverability_title, action, localize, mirror, devices, on, hold_ms, tap_ms, cooldown_ms, run_on_release"),
    ])
    func mistakesAreRefusedWithFileLineAndNearestName(_ text: String, _ message: String) {
        #expect(problems(text) == [message])
    }

    /// A registered table is held to the same rules (CommandFields), with the request's words.
    @Test func registrationFollowsTheSameRules() {
        let session = ControlSession()
        _ = session.sessionsChanged(ActiveSessions(available: true, activeUID: [ActiveSessions.defaultSeat: 1000]), problem: nil)
        let view = ControlSession.View(hardwareKeyboard: true, presenceReason: "", geometry: nil, systemTable: try! CommandTable(commands: []),
                                       allowKeyEvents: false, devices: { [] })
        let reply = session.handle(#"{"request":"register","commands":[{"id":"t","keys":"Ctrl+T","group":"a\u0007b"}]}"#,
                                   from: .init(id: 2, uid: 1000, trusted: false), view: view).reply
        #expect(reply == .refused(name: "register", message: "commands[0] (t): group: expected a group heading such as \"Edit\" without control characters (line breaks, tabs, escapes), found 'a\\u{7}b'"))
        let ok = session.handle(#"{"request":"register","commands":[{"id":"t","keys":"Ctrl+T","group":"Apps","discoverability_title":"Terminal","action":"hud"}]}"#,
                                from: .init(id: 2, uid: 1000, trusted: false), view: view)
        #expect(ok.reply == .register(commands: 1, shadowed: []))
        #expect(session.table(of: 2)?.command(id: "t").map { ($0.group, $0.discoverabilityTitle, $0.action) } ?? (nil, nil, .run) == ("Apps", "Terminal", .hud))
    }

    @Test func warningsSteer() throws {
        let config = try ConfigLoader.parse("""
            [settings]
            sequence_timeout_ms = 400

            [[command]]
            id = "write"
            keys = "Ctrl+X Ctrl+W"
            group = "File"

            [[command]]
            id = "open"
            keys = "Ctrl+O"
            group = "file"
            """, path: "c.toml")
        #expect(ConfigLoader.hudWarnings(config).map(\.description) == [
            "c.toml:4: hud.sequence_delay_ms = 500: longer than a sequence waits for its next chord ([settings] sequence_timeout_ms = 400), so the HUD never shows what can follow a prefix; set it to 400 or less (0 shows at once)",
            "c.toml:9: group = \"file\" (command 'open') differs from group = \"File\" (command 'write' at c.toml:4) only in case or spaces: the HUD and the bar show them as two groups; write them the same",
        ])
        let fixed = try ConfigLoader.parse("[settings]\nsequence_timeout_ms = 800\n[hud]\nsequence_delay_ms = 800\n[[command]]\nid = \"write\"\nkeys = \"Ctrl+X Ctrl+W\"\n", path: "c.toml")
        #expect(ConfigLoader.hudWarnings(fixed).isEmpty)
        let late = try ConfigLoader.parse("[hud]\nsequence_delay_ms = 1500\n[[command]]\nid = \"write\"\nkeys = \"Ctrl+X Ctrl+W\"\n", path: "c.toml")
        #expect(ConfigLoader.hudWarnings(late).map(\.location.line) == [2])
    }
}

/// `[hud]` belongs to the service's config: in a user's agent config it is warned about,
/// while the commands' HUD fields are the user's to set.
@Suite struct HudAgentConfigTests {
    @Test func hudInAnAgentConfigIsWarnedAbout() throws {
        let config = try ConfigLoader.parse("[hud]\ndelay_ms = 300\n[[command]]\nid = \"t\"\nkeys = \"Ctrl+Alt+T\"\ngroup = \"Apps\"\n", path: "a.toml")
        let warnings = ConfigLoader.agentConfigWarnings(config).map(\.description)
        #expect(warnings.count == 1 && warnings[0].hasPrefix("a.toml:1: [hud] in a user's agent config is ignored"), "\(warnings)")
        let plain = try ConfigLoader.parse("[[command]]\nid = \"t\"\nkeys = \"Ctrl+Alt+T\"\ngroup = \"Apps\"\n", path: "a.toml")
        #expect(ConfigLoader.agentConfigWarnings(plain).isEmpty)
    }
}
