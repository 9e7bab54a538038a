import KbdSystem
import Testing

/// Issue 35: no function over 60 lines in the service's loop, the agent and the process floor. A
/// function's length is from the line of its `func`, `init` or `deinit` to the line of the
/// brace closing its body (comments and blank lines inside count: a long function is long).
@Suite struct FunctionLengthTests {
    static let limit = 60
    /// The targets held to the limit: the service's loop, the agent and the process floor.
    static let checked = [
        "KbdDaemon",
        "KbdAgent",
        "KbdProcess",
    ]

    struct Function: Equatable, CustomStringConvertible {
        var name: String
        var line: Int
        var lines: Int
        var description: String { "\(name) (line \(line)): \(lines) lines" }
    }

    /// The functions of a Swift file with their lengths. Braces in string literals and
    /// comments are skipped; a declaration's body is the first `{` after its keyword.
    static func functions(in text: String) -> [Function] {
        var out: [Function] = []
        var open: [(name: String, line: Int, depth: Int)] = []
        var pending: (name: String, line: Int)?
        var depth = 0
        var inString = false, multiline = false, blockComment = 0
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            let chars = Array(raw.utf8)
            var i = 0
            if !inString && blockComment == 0 {
                // A protocol's requirement has no body: the next declaration ends it.
                if startsOtherDeclaration(String(raw)) { pending = nil }
                if let name = declaration(String(raw)) { pending = (name, index + 1) }
            }
            while i < chars.count {
                let c = chars[i]
                if blockComment > 0 {
                    if c == UInt8(ascii: "*"), i + 1 < chars.count, chars[i + 1] == UInt8(ascii: "/") { blockComment -= 1; i += 1 }
                    i += 1
                    continue
                }
                if inString {
                    if c == UInt8(ascii: "\\") { i += 2; continue }
                    if c == UInt8(ascii: "\"") {
                        if multiline {
                            if i + 2 < chars.count, chars[i + 1] == c, chars[i + 2] == c { inString = false; multiline = false; i += 3; continue }
                        } else {
                            inString = false
                        }
                    }
                    i += 1
                    continue
                }
                if c == UInt8(ascii: "/"), i + 1 < chars.count {
                    if chars[i + 1] == UInt8(ascii: "/") { break }
                    if chars[i + 1] == UInt8(ascii: "*") { blockComment += 1; i += 2; continue }
                }
                if c == UInt8(ascii: "\"") {
                    inString = true
                    if i + 2 < chars.count, chars[i + 1] == c, chars[i + 2] == c { multiline = true; i += 3; continue }
                } else if c == UInt8(ascii: "{") {
                    depth += 1
                    if let p = pending {
                        open.append((p.name, p.line, depth))
                        pending = nil
                    }
                } else if c == UInt8(ascii: "}") {
                    if let last = open.last, last.depth == depth {
                        out.append(Function(name: last.name, line: last.line, lines: index + 1 - last.line + 1))
                        open.removeLast()
                    }
                    depth -= 1
                }
                i += 1
            }
        }
        return out
    }

    static func startsOtherDeclaration(_ line: String) -> Bool {
        let words = line.split(separator: " ").map(String.init).filter { !$0.hasPrefix("@") && !modifiers.contains($0) }
        guard let first = words.first else { return false }
        return ["var", "let", "struct", "class", "enum", "protocol", "extension", "typealias", "case", "actor"].contains(first)
    }

    static let modifiers: Set<String> = ["public", "package", "internal", "fileprivate", "private", "private(set)", "static", "class", "final",
                                         "override", "mutating", "nonmutating", "convenience", "required", "nonisolated", "dynamic", "lazy", "weak", "unowned"]

    /// The name a line declares, when it starts a function, an initialiser or a deinitialiser.
    static func declaration(_ line: String) -> String? {
        var words = line.split(separator: " ").map(String.init)
        while let first = words.first, modifiers.contains(first) || first.hasPrefix("@") { words.removeFirst() }
        guard let first = words.first else { return nil }
        if first == "func", words.count > 1 { return String(words[1].prefix { $0 != "(" && $0 != "<" }) }
        if first.hasPrefix("init(") || first.hasPrefix("init?(") || first.hasPrefix("init<") || first == "init" { return "init" }
        if first == "deinit" { return "deinit" }
        return nil
    }

    @Test("no function over 60 lines", arguments: checked)
    func noLongFunctions(target: String) {
        let files = Files.list(ModuleArrowTests.sources + "/" + target, suffix: ".swift")
        #expect(!files.isEmpty)
        for file in files {
            guard let text = try? String(decoding: readWholeFile(path: file, limit: 1 << 20), as: UTF8.self) else { continue }
            for function in Self.functions(in: text) where function.lines > Self.limit {
                Issue.record("\(file): \(function) (at most \(Self.limit))")
            }
        }
    }

    @Test func theCountSeesBodiesNotStrings() {
        let text = """
            struct A {
                func short() {
                    let s = "{ not a brace"
                    let t = \"\"\"
                        } nor this
                        \"\"\"
                    // { nor this
                }

                init(x: Int) {
                    if x > 0 {
                        print(x)
                    }
                }
            }
            """
        let found = Self.functions(in: text)
        #expect(found == [Function(name: "short", line: 2, lines: 7), Function(name: "init", line: 10, lines: 5)])
    }
}
