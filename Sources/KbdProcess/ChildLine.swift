#if canImport(Glibc)
import Glibc
#endif

/// One line a watch child writes to the agent (`WatchChild`): what it listens to, once
/// (`source TEXT`); a report of its own (`1`, `0`, `none`, a `layouts …` line: the child's
/// vocabulary, decoded by its owner); a warning it goes on after (`warning TEXT`); and why
/// it stopped, before it exits (`error TEXT`). Encodes and decodes itself, so neither side
/// spells a prefix by hand; the text never holds a line break (control characters become
/// spaces on the way out).
public enum ChildLine: Equatable, Sendable {
    case source(String)
    case report(String)
    case warning(String)
    case error(String)

    /// Reads one line (without its `\n`).
    public init(decoding line: some StringProtocol) {
        let text = String(line)
        if text.hasPrefix("source ") { self = .source(String(text.dropFirst(7))) }
        else if text.hasPrefix("warning ") { self = .warning(String(text.dropFirst(8))) }
        else if text.hasPrefix("error ") { self = .error(String(text.dropFirst(6))) }
        else { self = .report(text) }
    }

    /// The line's text, without its `\n`.
    public var encoded: String {
        switch self {
        case .source(let text): "source " + Self.oneLine(text)
        case .report(let text): Self.oneLine(text)
        case .warning(let text): "warning " + Self.oneLine(text)
        case .error(let text): "error " + Self.oneLine(text)
        }
    }

    private static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else { return text }
        let space: Unicode.Scalar = " "
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { out.append(scalar.value < 0x20 || scalar.value == 0x7f ? space : scalar) }
        return String(out)
    }

    /// Writes the line and its `\n` to `fd` (a child's output pipe); in a child whose parent
    /// is gone (EPIPE, a closed pipe) it exits at once. The corresponding C function is `write`.
    public func write(to fd: Int32) {
        let bytes = Array((encoded + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n > 0 { written += n } else if n < 0 && errno == EINTR { continue } else { _exit(0) }
        }
    }
}
