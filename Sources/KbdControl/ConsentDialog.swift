import KbdKeymap

/// The consent dialog's contract (issue 36, `[portal] approve = "ask"`): the session agent runs
/// `kbd-commandd-bar --consent …` when an app asks for a global shortcut, and reads the one
/// line it prints. Shared by the agent (which builds the call and reads the answer) and the
/// bar (which prints the answer), so both sides spell it the same way.
///
///     kbd-commandd-bar --consent --app NAME --description TEXT [--chord CHORD]
///                      [--conflict TEXT] [--timeout SECONDS]
///
/// stdout: `accept CHORD` (exit 0) or `refuse` (exit 1: refused, closed, timed out, stopped;
/// 69: the dialog could not be shown). Usage errors exit 2 and print nothing on stdout.
public enum ConsentDialog {
    /// The exit statuses (the bar's --help documents them).
    public static let accepted: Int32 = 0
    public static let refused: Int32 = 1
    public static let usage: Int32 = 2
    public static let unavailable: Int32 = 69
    /// The default time the person has to answer, in seconds.
    public static let defaultTimeout = 60

    /// What the dialog answered.
    public enum Reply: Sendable, Equatable {
        /// Accepted, with this chord (the service's key notation: `Ctrl+Alt+m`, `Super`).
        case accept(String)
        /// Refused, closed, timed out or stopped.
        case refuse
        /// The dialog did not ask (no display, a usage error, a crash): why, for a log line.
        case failed(String)

        /// The line the dialog prints (without its newline); nil for `failed`.
        public var line: String? {
            switch self {
            case .accept(let chord): return "accept " + chord
            case .refuse: return "refuse"
            case .failed: return nil
            }
        }
    }

    /// The dialog's argv (`binary` first) for an app's shortcut: its name, its description,
    /// the proposed chord (nil: none proposed, the person presses one) and what already has it.
    public static func arguments(binary: String, app: String, description: String, chord: String?,
                                 conflict: String?, timeoutSeconds: Int = defaultTimeout) -> [String] {
        // `--name=value`: a value starting with '-' is never read as an option.
        var argv = [binary, "--consent", "--app=" + app, "--description=" + description]
        if let chord, !chord.isEmpty { argv.append("--chord=" + chord) }
        if let conflict, !conflict.isEmpty { argv.append("--conflict=" + conflict) }
        if timeoutSeconds != defaultTimeout { argv.append("--timeout=\(timeoutSeconds)") }
        return argv
    }

    /// Reads what the dialog printed and its exit status (`status`: the exit code, or nil when
    /// a signal ended it). Only an `accept CHORD` line with status 0, CHORD a chord the service
    /// reads (or a modifier alone), accepts.
    public static func reply(output: String, status: Int32?) -> Reply {
        var text = Substring(output)
        if text.hasSuffix("\n") { text = text.dropLast() }
        guard let status else { return .failed("the dialog was ended by a signal") }
        switch status {
        case accepted:
            let chord = text.hasPrefix("accept ") ? text.dropFirst("accept ".count) : ""
            guard !chord.isEmpty, !chord.contains(where: { $0 == " " || $0 == "\n" || $0 == "\t" }) else {
                return .failed("the dialog exited 0 without an 'accept CHORD' line")
            }
            guard isChord(String(chord)) else { return .failed("the dialog accepted '\(chord)', which is not a chord") }
            return .accept(String(chord))
        case refused: return .refuse
        case unavailable: return .failed("the dialog could not be shown (no display)")
        case usage: return .failed("the dialog refused its arguments (usage error)")
        default: return .failed("the dialog exited with status \(status)")
        }
    }

    /// A chord as a command's keys (`Ctrl+Alt+m`), or one modifier alone (`Super`).
    static func isChord(_ text: String) -> Bool {
        if let mod = ModifierSet(name: text), ModifierSet.chordModifiers.contains(mod) { return true }
        return (try? ChordKey(parsing: text)) != nil
    }
}
