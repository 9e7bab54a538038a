import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Text from a config reaches the terminal escaped (issue 17, D17): `commands` lists one line
/// per scope and command, and `check` prints one `Error:` line per problem, whatever the ids
/// and titles hold. Before, a title's ESC reached the terminal and an id's line break forged
/// an `Error:` line.
@Suite(.serialized)
struct OutputEscapingEndToEndTests {
    @Test(arguments: [["--format", "text"], ["--format", "text", "--scope", "s\u{85}x"], ["--format", "json"]])
    func commandsListsEscapedText(_ arguments: [String]) {
        let dir = EndToEndDirectory()
        let config = dir.write("evil.toml", """
            [[command]]
            id = "evil\\u001B]0;owned\\u0007"
            title = "Evil\\n\\u001B[2Jcleared\\u009B31m"
            keys = "Ctrl+S"
            scope = "s\\u0085x"

            [[command]]
            id = "plain"
            keys = "Ctrl+P"
            """)
        let r = runTool(["commands", "--config", config] + arguments)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) })
        #expect(r.stdout.split(separator: "\n").count == (arguments.contains("json") ? 2 : 4))
    }

    @Test func checkPrintsOneErrorLinePerProblem() {
        let dir = EndToEndDirectory()
        let config = dir.write("dup.toml", """
            [[command]]
            id = "a\\nError: forged.toml:1: everything is fine\\u001B[2J"
            keys = "Ctrl+S"

            [[command]]
            id = "a\\nError: forged.toml:1: everything is fine\\u001B[2J"
            keys = "Ctrl+T"
            """)
        let r = runTool(["check", "--config", config])
        #expect(r.status == 78)
        let lines = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 1, "\(r.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix("Error: \(config):5: duplicate command id 'a\\nError: forged.toml:1: everything is fine\\u{1B}[2J'") })
        #expect(!r.stderr.unicodeScalars.contains("\u{1B}"))
    }
}

/// `check` warns about bindings on keys that type text (issue 17, D9) and still exits 0.
@Suite(.serialized)
struct TextKeyWarningEndToEndTests {
    @Test func checkWarnsAboutKeysThatTypeText() {
        let dir = EndToEndDirectory()
        let config = dir.write("typing.toml", """
            [keymap]
            layout = "us"

            [[command]]
            id = "letter-a"
            keys = "a"

            [[command]]
            id = "save"
            keys = "Ctrl+S"

            [[command]]
            id = "xyz"
            keys = "x y z"
            """)
        let r = runTool(["check", "--config", config])
        #expect(r.status == 0)
        #expect(r.stdout.contains("OK: 3 commands"))
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("Warning: \(config):4: keys = 'a' (command 'letter-a'): a key that types text; ") == true)
        #expect(lines.last?.hasPrefix("Warning: \(config):12: keys = 'x y z' (command 'xyz'): a key that types text; ") == true)
    }
}
