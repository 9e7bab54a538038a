public import Logging
import KbdSystem
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
    let fd: Int32

    /// Writes to `fd` (standard error unless a test passes a pipe).
    public init(level: Logger.Level, journal: Bool, fd: Int32 = 2) {
        self.logLevel = level
        self.journal = journal
        self.fd = fd
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
            line = "<\(priority)>"
        } else {
            line = event.level.rawValue.uppercased() + " "
        }
        // One event, one line: a device name or a command's output cannot start another.
        line += "\(event.message)".escapingControlCharacters + "\n"
        _ = line.withCString { write(fd, $0, strlen($0)) }
    }
}
