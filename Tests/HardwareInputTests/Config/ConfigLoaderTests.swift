import KbdJSON
import KbdTOML
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdEvdev
import KbdCommands
import KbdConfig
import KbdControl
import KbdDaemon
import KbdTestSupport
import Testing

struct ConfigLoaderTests {
    @Test func theExampleConfigLoads() throws {
        let config = try ConfigLoader.load(path: Fixtures.root + "/../../../examples/commands.toml")
        #expect(config.keymap.layout == "us")
        #expect(config.table.commands.count == 7)
        #expect(config.table.sequenceTimeoutMilliseconds == 1000)
        let saveAll = try #require(config.table.command(id: "save-all"))
        #expect(saveAll.keys.map(\.description) == ["Ctrl+X", "Ctrl+S"])
        #expect(saveAll.scope == "editor")
        #expect(config.table.command(id: "console-1")?.run == ["chvt", "1"])
        #expect(config.table.command(id: "volume-up")?.repeat == true)
        #expect(config.table.command(id: "volume-up")?.priorityOverTextInput == true)
    }

    @Test func allDesignKeysAreRead() throws {
        let config = try ConfigLoader.parse("""
            [keymap]                       # optional
            layout = "us,ru"
            options = "grp:alt_shift_toggle"
            variant = ","
            model = "pc104"
            rules = "evdev"

            [settings]
            sequence_timeout_ms = 750

            [devices]
            include = ["My Macro Pad", "1234:abcd"]
            exclude = ["Yubico YubiKey OTP+FIDO+CCID"]

            [[command]]
            id = "save"                    # unique
            title = "Save"
            keys = "Ctrl+S"
            scope = "editor"
            repeat = false
            priority_over_text_input = false
            run = ["notify-send", "Saved"]
            """, path: "c.toml")
        #expect(config.keymap == KeymapNames(rules: "evdev", model: "pc104", layout: "us,ru", variant: ",", options: "grp:alt_shift_toggle"))
        #expect(config.table.sequenceTimeoutMilliseconds == 750)
        #expect(config.devices.include == ["My Macro Pad", "1234:abcd"])
        #expect(config.table.commands[0].location == SourceLocation(path: "c.toml", line: 15))
        #expect(config.table.commands[0].title == "Save")
    }

    /// Each bad config and the exact messages it must produce.
    @Test(arguments: [
        ("""
         [[command]]
         id = "a"
         keys = "Ctrl+S"

         [[command]]
         id = "a"
         keys = "Ctrl+T"
         """, ["c.toml:5: duplicate command id 'a'; first defined at c.toml:1"]),
        ("""
         [[command]]
         id = "save"
         keys = "Ctrl+S"

         [[command]]
         id = "save2"
         keys = "ctrl+s"
         """, ["c.toml:5: 'ctrl+s' (save2) is already bound to command 'save' at c.toml:1 in scope 'global'"]),
        ("""
         [[command]]
         id = "x"
         keys = "Ctrl+X"

         [[command]]
         id = "save-all"
         keys = "Ctrl+X Ctrl+S"
         """, ["c.toml:5: 'Ctrl+X Ctrl+S' (save-all) extends the chord 'Ctrl+X' of command 'x' at c.toml:1 in scope 'global'; a chord cannot be both a command and a sequence prefix"]),
        ("""
         [[command]]
         id = "save-all"
         keys = "Ctrl+X Ctrl+S"

         [[command]]
         id = "x"
         keys = "Ctrl+X"
         """, ["c.toml:5: 'Ctrl+X' (x) is a prefix of the sequence 'Ctrl+X Ctrl+S' of command 'save-all' at c.toml:1 in scope 'global'; a chord cannot be both a command and a sequence prefix"]),
        ("""
         [[command]]
         id = "a"
         keys = "Ctrl+Sprocket"
         """, ["c.toml:3: keys = 'Ctrl+Sprocket': unknown key name 'Sprocket'; expected a keysym name such as a, 1, exclam, Return, F4 (see xkbcommon-keysyms.h)"]),
        ("""
         [[command]]
         id = "a"
         keys = "Hyper+S"
         """, ["c.toml:3: keys = 'Hyper+S': unknown modifier 'Hyper' (did you mean 'Super'?); expected Ctrl, Alt, Shift, Super or AltGr"]),
        ("""
         [[command]]
         id = "a"
         keys = "Ctrl+S"
         colour = "red"
         """, ["c.toml:4: unknown key 'colour' in [[command]]; expected one of id, title, keys, scope, repeat, priority_over_text_input, run, group, discoverability_title, action, localize, mirror, devices, on, hold_ms, tap_ms, cooldown_ms, run_on_release"]),
        ("""
         [[command]]
         id = "a"
         keys = "Ctrl+S"
         repeat = "yes"
         """, ["c.toml:4: repeat: expected true or false, found a string"]),
        ("""
         [[command]]
         keys = "Ctrl+S"
         """, ["c.toml:1: [[command]] needs 'id'"]),
        ("""
         [[command]]
         id = "a"
         keys = "Ctrl+S"
         run = "rm -rf /"
         """, ["c.toml:4: run: expected a non-empty array of strings: the program and its arguments (no shell)"]),
        ("""
         [settings]
         sequence_timeout_ms = -5
         """, ["c.toml:2: settings.sequence_timeout_ms: expected an integer from 1 to 60000"]),
        ("""
         [keybindings]
         a = 1
         """, ["c.toml:1: unknown section 'keybindings'; expected one of [keymap], [settings], [[command]], [devices], [geometry], [osk], [scopes], [text_input], [accessibility], [hud], [bar], [[device]], [portal]"]),
        ("""
         [[command]]
         id = "a
         """, ["c.toml:2: unterminated string; expected a closing '\"' on the same line"]),
        ("""
         [keymap]
         layout = "us"
         layout = "de"
         """, ["c.toml:3: key 'keymap.layout' is defined twice (first at line 2)"]),
    ] as [(String, [String])])
    func badConfigsNameFileLineAndBothOffenders(_ text: String, _ messages: [String]) {
        do {
            _ = try ConfigLoader.parse(text, path: "c.toml")
            Issue.record("expected an error")
        } catch {
            #expect(error.problems.map(\.description) == messages)
        }
    }

    @Test func theSameChordInTwoScopesIsFine() throws {
        let config = try ConfigLoader.parse("""
            [[command]]
            id = "a"
            keys = "Ctrl+S"
            [[command]]
            id = "b"
            keys = "Ctrl+S"
            scope = "editor"
            """, path: "c.toml")
        #expect(config.table.scopes == ["global", "editor"])
    }

    @Test func missingFileIsReportedWithThePath() {
        do {
            _ = try ConfigLoader.load(path: "/nonexistent/kbd.toml")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "/nonexistent/kbd.toml:0: cannot read the config: No such file or directory")
        }
    }
}

struct TOMLParserTests {
    @Test func valuesOfEveryKind() throws {
        let t = try TOMLParser.parse("""
            a = "tab\\there \\u00e9"
            b = 'C:\\literal'
            c = 1_000
            d = 0x1F
            e = -3.5e2
            f = true
            g = [1, 2,
                 3, ] # trailing comma
            h = { x = 1, y.z = "w" }
            "quoted key" = 1
            i.j = 2
            m = \"\"\"
            two
            lines\"\"\"
            [t.u]
            v = 1
            [[arr]]
            k = 1
            [[arr]]
            k = 2
            """, path: "t.toml")
        #expect(t["a"] == .string("tab\there é"))
        #expect(t["b"] == .string("C:\\literal"))
        #expect(t["c"] == .integer(1000))
        #expect(t["d"] == .integer(31))
        #expect(t["e"] == .float(-350))
        #expect(t["f"] == .boolean(true))
        guard case .array(let g, _)? = t["g"] else { Issue.record("g"); return }
        #expect(g == [.integer(1), .integer(2), .integer(3)])
        guard case .table(let h)? = t["h"], case .table(let y)? = h["y"] else { Issue.record("h"); return }
        #expect(y["z"] == .string("w"))
        #expect(t["quoted key"] == .integer(1))
        #expect(t["m"] == .string("two\nlines"))
        guard case .array(let arr, _)? = t["arr"] else { Issue.record("arr"); return }
        #expect(arr.count == 2)
        #expect(t.entry("arr")?.line == 17)
    }

    @Test(arguments: [
        ("a = 1\na = 2", "t.toml:2: key 'a' is defined twice (first at line 1)"),
        ("a = ", "t.toml:1: expected a value after '='"),
        ("a = 1 2", "t.toml:1: expected the end of the line, found '2'"),
        ("[a\nb = 1", "t.toml:1: expected ']' to close the table header"),
        ("a = [1, 2", "t.toml:1: unterminated array (opened at line 1); expected ']'"),
        ("a = 1979-05-27", "t.toml:1: dates and times are not supported here; expected a string, number or boolean, found '1979-05-27'"),
        ("a = \"\\q\"", "t.toml:1: unknown escape '\\q'; expected one of \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX"),
        ("[x]\n[x]", "t.toml:2: table [x] is defined twice (first at line 1)"),
        ("a = 1\n[a]", "t.toml:2: 'a' is already an integer, not a table"),
        ("a = 012", "t.toml:1: expected a value (a string in quotes, a number, true, false, an array or an inline table), found '012'"),
        // Errors found after the line's end was read still name the header's or the key's line
        // (they named the next line before issue 17).
        ("a = 1\na = 2\n", "t.toml:2: key 'a' is defined twice (first at line 1)"),
        ("[x]\n[x]\n\n", "t.toml:2: table [x] is defined twice (first at line 1)"),
        ("a = 1\n[a]  # comment\n", "t.toml:2: 'a' is already an integer, not a table"),
        ("a = 1\n[[a]]\r\n", "t.toml:2: 'a' is already an integer, not an array of tables"),
        ("[t]\nk = {x = 1}\nk.y = 2\n", "t.toml:3: key 't.k.y': 'k' is already a table"),
    ])
    func syntaxErrors(_ text: String, _ message: String) {
        do {
            _ = try TOMLParser.parse(text, path: "t.toml")
            Issue.record("expected an error for \(text)")
        } catch {
            #expect(error.description == message)
        }
    }

    /// Deep dotted keys: found by fuzzing (a table header of thousands of parts
    /// overflowed the stack). Not parameterised: the texts are long.
    @Test func deeplyDottedKeysAreAnErrorNotACrash() {
        let message = "t.toml:1: dotted key nested too deeply (limit 64 parts)"
        syntaxError("[[" + Array(repeating: "w", count: 100_000).joined(separator: ".") + "]]", message)
        syntaxError("x." + Array(repeating: "k", count: 65).joined(separator: ".") + " = 1", message)
        syntaxError("[" + Array(repeating: "t", count: 70).joined(separator: ".") + "]", message)
    }

    /// 64 parts is still fine.
    @Test func sixtyFourKeyPartsParse() throws {
        let t = try TOMLParser.parse("[" + Array(repeating: "t", count: 63).joined(separator: ".") + "]\nk = 1\n", path: "t.toml")
        #expect(t["t"] != nil)
    }

    /// TOML 1.0: an array of tables cannot extend a static array, "even if that array is
    /// empty". The parser before issue 17 accepted the empty one (D13).
    @Test(arguments: [
        ("a = []\n[[a]]\n", "t.toml:2: 'a' is already an array, not an array of tables"),
        ("a = [] # none yet\n\n[[a]]\nx = 1\n", "t.toml:3: 'a' is already an array, not an array of tables"),
        ("[t]\na = []\n[[t.a]]\n", "t.toml:3: 't.a' is already an array, not an array of tables"),
        ("[[t]]\na = []\n[[t.a]]\n", "t.toml:3: 't.a' is already an array, not an array of tables"),
        ("command = []\n[[command]]\nid = \"a\"\nkeys = \"Ctrl+A\"\n", "t.toml:2: 'command' is already an array, not an array of tables"),
    ])
    func aStaticEmptyArrayCannotBeExtended(_ text: String, _ message: String) {
        syntaxError(text, message)
    }

    /// A termination bound, not a latency check (issue 17, D13): loading is linear, so 100,000
    /// commands load in seconds even in a debug build; the loader before issue 17 copied the
    /// whole `command` array on every key line and every header (about 570 s in release).
    @Test(.timeLimit(.minutes(1)))
    func aHundredThousandCommandsLoad() throws {
        let count = 100_000
        let config = try ConfigLoader.parse(ConfigGenerator.commands(count), path: "big.toml")
        #expect(config.table.commands.count == count)
        #expect(config.table.scopes.count == ConfigGenerator.scopes(for: count))
        let last = try #require(config.table.commands.last)
        #expect(last.id == "c\(count - 1)")
        #expect(last.location.line == 3 + 6 * (count - 1) + (count - 1 + 9) / 10 + 1)
        #expect(config.table.commands[0].run == ["notify-send", "c0"])
    }

    /// Tables of many keys: lookups by key stay O(1) (they were a linear scan, quadratic to build),
    /// across the switch from a scan of a few keys to an index, and duplicates are still found.
    @Test(.timeLimit(.minutes(1)), arguments: [
        ("[t]\n", "\n", 100_000), ("t = {", ", ", 20_000), ("t.", "\nt.", 50_000), ("[t]\n", "\n", 9), ("t = {", ", ", 8),
    ])
    func tablesOfManyKeys(_ head: String, _ separator: String, _ count: Int) throws {
        let close = head.hasSuffix("{") ? "}" : ""
        let text = head + (0..<count).map { "k\($0) = \($0)" }.joined(separator: separator) + close + "\n"
        let root = try TOMLParser.parse(text, path: "t.toml")
        guard case .table(let t)? = root["t"] else { Issue.record("no table t"); return }
        #expect(t.keys.count == count)
        for i in [0, 1, count / 2, count - 2, count - 1] { #expect(t["k\(i)"] == .integer(Int64(i))) }
        #expect(t["k\(count)"] == nil)
        for i in [0, count / 2, count - 1] {
            do {
                _ = try TOMLParser.parse(head + (0..<count).map { "k\($0) = \($0)" }.joined(separator: separator) + separator + "k\(i) = 0" + close + "\n", path: "t.toml")
                Issue.record("expected k\(i) to be a duplicate")
            } catch {
                #expect(error.message.hasPrefix("key '") && error.message.contains("k\(i)' is defined twice"))
            }
        }
    }

    private func syntaxError(_ text: String, _ message: String) {
        do {
            _ = try TOMLParser.parse(text, path: "t.toml")
            Issue.record("expected an error for a text of \(text.count) characters")
        } catch {
            #expect(error.description == message)
        }
    }
}

/// `[osk]`: the session agent's on-screen keyboard settings.
@Suite struct OnScreenKeyboardConfigTests {
    @Test func backendAndProgramsAreRead() throws {
        let c = try ConfigLoader.parse("[osk]\nbackend = \"wvkbd\"\non_present = [\"notify-send\", \"keyboard\"]\non_absent = [\"true\"]\n", path: "u.toml")
        #expect(c.osk == OnScreenKeyboardSettings(backend: .wvkbd, onPresent: ["notify-send", "keyboard"], onAbsent: ["true"]))
        #expect(try ConfigLoader.parse("", path: "u.toml").osk.backend == .auto)
    }

    @Test(arguments: [
        ("[osk]\nbackend = \"onboard\"\n", "u.toml:2: osk.backend: expected one of \"auto\", \"squeekboard\", \"kwin\", \"gnome\", \"phosh\", \"wvkbd\", \"none\""),
        ("[osk]\non_present = \"notify-send hi\"\n", "u.toml:2: osk.on_present: expected a non-empty array of strings: the program and its arguments (no shell)"),
        ("[osk]\nhide = true\n", "u.toml:2: unknown key 'osk.hide'; expected backend, on_present or on_absent"),
    ])
    func mistakesNameTheLine(_ text: String, _ message: String) {
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(text, path: "u.toml") }
        do { _ = try ConfigLoader.parse(text, path: "u.toml") } catch { #expect(error.description.contains(message), "\(error.description)") }
    }
}
