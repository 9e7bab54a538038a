public import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Log lines on stderr: `<N>message` (sd-daemon priority prefixes) when started by
/// systemd ($JOURNAL_STREAM set), `LEVEL message` on a terminal. Nothing here ever
/// receives typed text: the daemon logs device events, chords with Ctrl/Alt/Super,
/// commands and errors only.
public struct StderrLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    let journal: Bool

    public init(level: Logger.Level, journal: Bool) {
        self.logLevel = level
        self.journal = journal
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line: String
        if journal {
            let priority: Int
            switch event.level {
            case .trace, .debug: priority = 7
            case .info: priority = 6
            case .notice: priority = 5
            case .warning: priority = 4
            case .error: priority = 3
            case .critical: priority = 2
            }
            line = "<\(priority)>\(event.message)"
        } else {
            line = "\(event.level.rawValue.uppercased()) \(event.message)"
        }
        line += "\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }
}
