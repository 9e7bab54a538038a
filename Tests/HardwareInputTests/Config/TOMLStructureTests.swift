import KbdJSON
import KbdTOML
import KbdSystem
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdEvdev
import KbdCommands
import KbdControl
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The TOML parser builds the same tables, with the same lines, and reports the same errors as
/// the parser of `e2e450c` did, on the fixtures, on structural edge cases and on 3,000 seeded
/// random documents (mostly errors, which is the point). The golden file was written by that
/// parser and then reviewed change by change when issue 17 made the parser linear (D13): 5
/// random documents extend an empty static array with `[[…]]` and are now errors (TOML 1.0),
/// and 1,899 errors found after the parser had read a line's end now name that line instead of
/// the next one. `KBD_WRITE_TOML_GOLDEN=1` rewrites it; a deliberate change shows up as a diff.
@Suite struct TOMLStructureTests {
    /// A dump of everything public about a parse: keys, values and lines in order, or the error.
    static func dump(_ text: String) -> String {
        do {
            let table = try TOMLParser.parse(text, path: "t.toml")
            var out = ""
            dump(table, indent: "", into: &out)
            return out
        } catch {
            return "error \(error.description)\n"
        }
    }

    static func dump(_ table: TOMLTable, indent: String, into out: inout String) {
        out += "table line \(table.line)\n"
        for entry in table.entries {
            out += indent + "  \(entry.key.debugDescription) line \(entry.line): "
            dump(entry.value, indent: indent + "  ", into: &out)
        }
    }

    static func dump(_ value: TOMLValue, indent: String, into out: inout String) {
        switch value {
        case .table(let t): dump(t, indent: indent, into: &out)
        case .array(let elements, let line):
            out += "array line \(line) of \(elements.count)\n"
            for e in elements {
                out += indent + "  - "
                dump(e, indent: indent + "  ", into: &out)
            }
        case .string(let s): out += "string \(s.debugDescription)\n"
        case .integer(let i): out += "integer \(i)\n"
        case .float(let f): out += "float \(f)\n"
        case .boolean(let b): out += "boolean \(b)\n"
        }
    }

    /// Headers, arrays of tables, dotted keys and inline tables, valid and not.
    static let structures: [String] = [
        "[[a]]\nx = 1\n[[a]]\nx = 2\n",
        "[[a]]\n[a.b]\nc = 1\n[[a]]\n[a.b]\nc = 2\n",
        "[[a]]\n[[a.b]]\n[[a.b]]\n[[a]]\n[[a.b]]\nk = 1\n",
        "a = [1]\n[[a]]\n",
        "a = [{x = 1}]\n[[a]]\n",
        "a = [[1], [2]]\n[[a]]\n",
        "a = [{x = 1}]\n[a.b]\n",
        "a = [1]\n[a.b]\n",
        "a = []\n[a.b]\n",
        "a = {x = 1}\n[a.b]\n",
        "a = {x = 1}\n[[a]]\n",
        "a = {x = 1}\n[a]\n",
        "[a]\n[[a]]\n",
        "[[a]]\n[a]\n",
        "a.b = 1\n[a]\n",
        "a.b = 1\n[a.c]\nd = 1\n",
        "[a.b]\n[a]\nx = 1\n",
        "[a]\nb.c = 1\nb.d = 2\n",
        "[a]\nb = 1\nb.c = 2\n",
        "[[a]]\nb = 1\n[a.b]\n",
        "a = {b = {c = 1}}\na.b.d = 2\n",
        "x = 1\n[t]\nx = 2\n[t.u]\nx = 3\n",
        "[ a . \"b c\" . 'd' ]\nk = 1\n",
        "[a]\n[a.b]\n[a.b.c]\n[a.b]\n",
        "a.b.c = 1\na.b.d = 2\na.e = 3\n",
        """
        [[fruits]]
        name = "apple"
        [fruits.physical]
        color = "red"
        [[fruits.varieties]]
        name = "red delicious"
        [[fruits.varieties]]
        name = "granny smith"
        [[fruits]]
        name = "banana"
        [[fruits.varieties]]
        name = "plantain"

        """,
        "[[a]]\n[[a]]\n[a.b]\n[a.b]\n",
        "[a]\nx = 1\n[b]\n[a]\n",
        "[[a.b]]\n[a]\nc = 1\n",
        "[[a.b]]\n[[a]]\n",
        "a = [{b = 1}, {b = 2}]\n[a.c]\n",
        "inline = {a.b = 1, a.c = 2}\n",
        "inline = {a.b = 1, a = 2}\n",
        "k = 1\n[[k]]\n",
        "t = {}\nt.x = 1\n",
        "[t]\n[t.x]\n[t]\n",
        "[[x]\n",
        "[ [x] ]\n",
        "a.b = 1\na.b.c = 2\n",
        "a = [1, 2]\na = 3\n",
        "[a]\nk = 1\n[a.k]\n",
        "[a]\nk = 1\n[[a.k]]\n",
        "[[a]]\nk = [1]\n[[a.k]]\n",
        "[[a]]\n[[a.k]]\n[a]\n",
        "[[a]]\n[[a]]\nx.y = 1\n[a.x]\n",
        "[a.b.c]\n[a]\n[a.b]\n[a.b.c.d]\n[[a.b.e]]\n[[a.b.e]]\n",
        "[[command]]\nid = \"s\"\nkeys = \"Ctrl+S\"\nrun = [\"a\", \"b\"]\n[[command]]\nid = \"t\"\nkeys = \"Ctrl+T\"\nscope = \"x\"\n",
    ]

    /// Seeded random documents of headers and key lines over a few names: mostly errors, which is the point.
    static func randomDocument(_ random: inout SeededRandom) -> String {
        let names = ["a", "b", "c", "x"]
        let values = ["1", "\"s\"", "[]", "[1]", "{}", "{y = 1}", "[{z = 1}]", "true", "{a.b = 2}"]
        func path(_ parts: ClosedRange<Int>) -> String {
            (0..<random.int(parts)).map { _ in names[random.below(names.count)] }.joined(separator: ".")
        }
        var text = ""
        for _ in 0..<random.int(3...10) {
            switch random.below(4) {
            case 0: text += "[\(path(1...3))]\n"
            case 1: text += "[[\(path(1...3))]]\n"
            default: text += "\(path(1...2)) = \(values[random.below(values.count)])\n"
            }
        }
        return text
    }

    static let randomCount = 3_000

    /// FNV-1a, to keep the golden file small for the random documents.
    static func hash(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return String(h, radix: 16)
    }

    static func files() -> [(String, String)] {
        let root = Fixtures.root + "/../../.."
        let paths = ["examples/commands.toml", "examples/tablet.toml", "Tests/HardwareInputTests/Fixtures/configs/conflicts.toml",
                     "Tests/fuzz-regressions/toml/toml-stack-overflow-deep-dotted-header"]
        return paths.map { p in
            let bytes = (try? readWholeFile(path: root + "/" + p, limit: 1 << 20)) ?? []
            return (p, String(decoding: bytes, as: UTF8.self))
        }
    }

    /// Every input's dump, as the golden file holds it.
    static func current() -> String {
        var out = ""
        for (name, text) in files() { out += "== file \(name)\n" + dump(text) }
        for (i, text) in structures.enumerated() { out += "== structure \(i)\n" + dump(text) }
        var random = SeededRandom(seed: 17)
        for i in 0..<randomCount {
            let d = dump(randomDocument(&random))
            out += "== random \(i) " + (d.hasPrefix("error ") ? d : "ok \(hash(d))\n")
        }
        return out
    }

    /// `== name` sections of a dump file, each with its text.
    static func sections(_ text: String) -> [(name: String, body: String)] {
        var out: [(name: String, body: String)] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("== random ") {
                // One line: the name is the first three words.
                let words = line.split(separator: " ", maxSplits: 3)
                out.append((words[0...2].joined(separator: " "), words.count > 3 ? String(words[3]) + "\n" : "\n"))
            } else if line.hasPrefix("== ") {
                out.append((String(line), ""))
            } else if !out.isEmpty {
                out[out.count - 1].body += line + "\n"
            }
        }
        return out
    }

    static let goldenPath = Fixtures.root + "/toml/structure.golden"

    @Test func parsesAsTheParserBeforeIssue17Did() throws {
        let now = Self.current()
        if getenv("KBD_WRITE_TOML_GOLDEN") != nil {
            let out = try FileOutput.create(path: Self.goldenPath)
            out.write(now)
        }
        let golden = String(decoding: try readWholeFile(path: Self.goldenPath, limit: 16 << 20), as: UTF8.self)
        let expected = Self.sections(golden)
        let actual = Self.sections(now)
        #expect(expected.map(\.name) == actual.map(\.name))
        var differences = 0
        for (e, a) in zip(expected, actual) where e != a {
            differences += 1
            if differences <= 20 { Issue.record("\(e.name): golden\n\(e.body)now\n\(a.body)") }
        }
        #expect(differences == 0)
    }
}
