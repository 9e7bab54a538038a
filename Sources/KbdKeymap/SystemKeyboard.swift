import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// The system's keyboard configuration, `/etc/default/keyboard` (keyboard(5)): what Debian's
/// installer, console-setup and `localectl` write, and what the console, GNOME and the X
/// server start from. Shell-style assignments, quoted or not, and comments:
///
///     XKBMODEL="pc105"
///     XKBLAYOUT=de
///     XKBVARIANT='nodeadkeys'
///     XKBOPTIONS="ctrl:nocaps"   # a comment
///
/// Only XKBMODEL, XKBLAYOUT, XKBVARIANT and XKBOPTIONS are read; other variables
/// (BACKSPACE) are ignored. A line that is not an assignment, or a value with shell
/// expansions, is a warning with the file and line, never an error: the service starts.
public struct SystemKeyboard: Sendable, Equatable {
    public static let defaultPath = "/etc/default/keyboard"
    /// Names the variable that replaces `defaultPath` (empty: read no file), for tests and for
    /// systems that keep the file elsewhere.
    public static let environmentVariable = "KBD_COMMANDD_SYSTEM_KEYBOARD"

    public var path: String
    /// Model, layout, variant and options; unset (nil) when the file does not name them or leaves them empty.
    public var names: KeymapNames
    /// The line of each variable (`XKBLAYOUT` → 3).
    public var lines: [String: Int]
    /// `path:line: message` for lines that could not be read.
    public var warnings: [String]

    /// Parses the file's text; `path` is used in messages.
    public init(path: String, text: String) {
        self.path = path
        names = KeymapNames()
        lines = [:]
        warnings = []
        var number = 0
        // "\r\n" is one Character: a file written on Windows splits there too.
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            var line = Substring(raw)
            line = line.drop { $0 == " " || $0 == "\t" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = line.dropFirst(7).drop { $0 == " " || $0 == "\t" } }
            guard let eq = line.firstIndex(of: "="),
                  line[..<eq].allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }), eq > line.startIndex
            else {
                warnings.append("\(path):\(number): expected NAME=value (shell-style), found '\(line)'; line ignored")
                continue
            }
            let key = String(line[..<eq])
            let value: String
            switch Self.shellValue(line[line.index(after: eq)...]) {
            case .success(let v): value = v
            case .failure(let problem):
                warnings.append("\(path):\(number): \(key): \(problem.message); line ignored")
                continue
            }
            let v: String? = value.isEmpty ? nil : value
            switch key {
            case "XKBMODEL": names.model = v
            case "XKBLAYOUT": names.layout = v
            case "XKBVARIANT": names.variant = v
            case "XKBOPTIONS": names.options = v
            default: continue
            }
            lines[key] = number
        }
    }

    /// Reads the file at `path`; nil when there is none (no such file is the normal state of
    /// many systems). A file that exists but cannot be read gives a warning.
    public static func load(path: String) -> SystemKeyboard? {
        let bytes: [UInt8]
        do { bytes = try readWholeFile(path: path, limit: 64 << 10) } catch {
            if error.errno == ENOENT || error.errno == ENOTDIR { return nil }
            var unread = SystemKeyboard(path: path, text: "")
            unread.warnings = ["\(path): cannot read the system keyboard configuration: \(error.message)"]
            return unread
        }
        return SystemKeyboard(path: path, text: String(decoding: bytes, as: UTF8.self))
    }

    /// The file to read for an environment: `$KBD_COMMANDD_SYSTEM_KEYBOARD` when set (empty:
    /// none), else /etc/default/keyboard.
    public static func path(environment: [String: String]) -> String? {
        guard let given = environment[environmentVariable] else { return defaultPath }
        return given.isEmpty ? nil : given
    }

    /// Whether the file names anything.
    public var namesAnything: Bool { names.model != nil || names.layout != nil || names.options != nil }

    /// `path:line` of a variable, or the path alone.
    public func location(_ variable: String) -> String {
        lines[variable].map { "\(path):\($0)" } ?? path
    }

    /// The variable of a `KeymapNames` field (`layout` → `XKBLAYOUT`).
    public static func variable(field: String) -> String {
        switch field {
        case "model": return "XKBMODEL"
        case "layout": return "XKBLAYOUT"
        case "variant": return "XKBVARIANT"
        default: return "XKBOPTIONS"
        }
    }

    struct ValueProblem: Error { var message: String }

    /// A shell word: 'single quoted', "double quoted" (with \" \\ \$ \` escapes) or bare
    /// (with \ escapes), in pieces, then blanks and an optional comment. No expansions.
    static func shellValue(_ text: Substring) -> Result<String, ValueProblem> {
        var out = ""
        var i = text.startIndex
        func rest() -> Substring { text[i...] }
        while i < text.endIndex {
            let c = text[i]
            if c == " " || c == "\t" {
                let tail = rest().drop { $0 == " " || $0 == "\t" }
                if tail.isEmpty || tail.hasPrefix("#") { return .success(out) }
                return .failure(ValueProblem(message: "more than one word after '=' (quote the value)"))
            }
            if c == "'" {
                guard let close = text[text.index(after: i)...].firstIndex(of: "'") else {
                    return .failure(ValueProblem(message: "no closing ' for the value"))
                }
                out += text[text.index(after: i)..<close]
                i = text.index(after: close)
                continue
            }
            if c == "\"" {
                var j = text.index(after: i)
                var closed = false
                while j < text.endIndex {
                    let d = text[j]
                    if d == "\"" { closed = true; break }
                    if d == "\\" {
                        let n = text.index(after: j)
                        if n < text.endIndex, "\"\\$`".contains(text[n]) {
                            out.append(text[n])
                            j = text.index(after: n)
                            continue
                        }
                    }
                    if d == "$" || d == "`" { return .failure(ValueProblem(message: "shell expansions ($, `) are not read")) }
                    out.append(d)
                    j = text.index(after: j)
                }
                guard closed else { return .failure(ValueProblem(message: "no closing \" for the value")) }
                i = text.index(after: j)
                continue
            }
            if c == "\\" {
                let n = text.index(after: i)
                guard n < text.endIndex else { return .success(out) }
                out.append(text[n])
                i = text.index(after: n)
                continue
            }
            if c == "$" || c == "`" { return .failure(ValueProblem(message: "shell expansions ($, `) are not read")) }
            if c == ";" || c == "&" || c == "|" || c == "(" || c == ")" || c == "<" || c == ">" {
                return .failure(ValueProblem(message: "'\(c)' is not part of a plain assignment"))
            }
            out.append(c)
            i = text.index(after: i)
        }
        return .success(out)
    }
}
