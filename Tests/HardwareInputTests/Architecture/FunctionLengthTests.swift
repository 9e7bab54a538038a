import KbdSystem
import KbdTestSupport
import Testing

/// Issue 35 item 3: no function over 60 lines in the daemon, the agent or the process floor.
/// A function's length runs from its declaration's line to the line of the brace that closes
/// its body; braces inside string literals and after `//` do not count.
@Suite struct FunctionLengthTests {
    static let limit = 60
    static let sources = Fixtures.root.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/") + "/Sources"

    /// A declaration's keyword: `func name`, `init(`, `init?(`, `deinit`, `subscript(`, after
    /// attributes and modifiers.
    static func declares(_ line: Substring) -> String? {
        var words = line.split(separator: " ", omittingEmptySubsequences: true)
        while let first = words.first, first.hasPrefix("@") || modifiers.contains(String(first)) { words.removeFirst() }
        guard let keyword = words.first else { return nil }
        if keyword == "func", words.count > 1 { return "func " + words[1].prefix { $0 != "(" && $0 != "<" } }
        for name in ["init", "init?", "init!", "subscript"] where keyword.hasPrefix(name + "(") || keyword.hasPrefix(name + "<") { return name }
        if keyword == "deinit" || keyword == "init" { return String(keyword) }
        return nil
    }
    static let modifiers: Set<String> = ["public", "private", "fileprivate", "internal", "package", "static", "class", "final", "override",
                                         "mutating", "nonmutating", "nonisolated", "convenience", "required", "private(set)", "public(set)"]

    /// The braces of one line outside strings and comments: +1 for `{`, -1 for `}`, in order.
    static func braces(_ line: Substring, inString: inout Bool) -> [Int] {
        var out: [Int] = []
        var escaped = false
        var previous: Character = " "
        for c in line {
            if inString {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }
            } else if c == "\"" {
                inString = true
            } else if c == "/" && previous == "/" {
                break
            } else if c == "{" {
                out.append(1)
            } else if c == "}" {
                out.append(-1)
            }
            previous = c
        }
        // A one-line string ends with its line (a `"""` block's lines hold no code braces that matter here).
        if inString && !line.contains("\"\"\"") { inString = false }
        return out
    }

    /// (lines, line number, name) of every function in `text`.
    static func functions(in text: String) -> [(length: Int, line: Int, name: String)] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var found: [(Int, Int, String)] = []
        for (index, line) in lines.enumerated() {
            guard let name = declares(line.drop { $0 == " " }) else { continue }
            var depth = 0, opened = false, inString = false
            var end = index
            scan: while end < lines.count {
                for step in braces(lines[end], inString: &inString) {
                    depth += step
                    if step > 0 { opened = true }
                    if opened && depth == 0 { break scan }
                }
                // A protocol requirement or a declaration without a body.
                if !opened && end > index + 8 { break }
                end += 1
            }
            if opened { found.append((end - index + 1, index + 1, name)) }
        }
        return found
    }

    @Test("no function over 60 lines", arguments: ["KbdDaemon", "KbdAgent", "KbdProcess"])
    func noLongFunction(target: String) throws {
        let files = Files.list(Self.sources + "/" + target, suffix: ".swift")
        #expect(!files.isEmpty, "no sources found for \(target)")
        for file in files {
            let text = String(decoding: try readWholeFile(path: file, limit: 1 << 20), as: UTF8.self)
            for f in Self.functions(in: text) {
                #expect(f.length <= Self.limit, "\(file):\(f.line): \(f.name) is \(f.length) lines (at most \(Self.limit))")
            }
        }
    }

    /// The measure itself: braces in strings and comments do not count, a nested closure is
    /// part of its function, and a 61-line function is found.
    @Test func theMeasureCountsBodies() {
        let body = (0..<59).map { "    let x\($0) = \"{\" // }" }.joined(separator: "\n")
        let text = "struct S {\n    private func long() {\n\(body)\n    }\n    init?(a: Int) {\n        _ = [1].map { $0 }\n    }\n}\n"
        let found = Self.functions(in: text)
        #expect(found.map(\.name) == ["func long", "init?"])
        #expect(found.map(\.length) == [61, 3])
    }
}
