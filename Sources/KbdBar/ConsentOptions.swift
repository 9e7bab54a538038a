import KbdProcess
public import KbdControl

/// `kbd-commandd-bar --consent --app NAME --description TEXT [--chord CHORD] [--conflict TEXT]
/// [--timeout S]`: the consent dialog's arguments (ConsentDialog in KbdControl is the contract),
/// parsed with the service's scanner.
public struct ConsentOptions: Equatable, Sendable {
    /// The app asking ("" for an app the portal could not name).
    public var app: String
    public var description: String
    /// The chord proposed (nil: none; the person presses one).
    public var chord: ConsentChord?
    /// What already has the chord (the user's table, the system's, another app).
    public var conflict: String?
    public var timeoutSeconds: Int

    public init(app: String, description: String, chord: ConsentChord?, conflict: String? = nil,
                timeoutSeconds: Int = ConsentDialog.defaultTimeout) {
        self.app = app
        self.description = description
        self.chord = chord
        self.conflict = conflict
        self.timeoutSeconds = timeoutSeconds
    }

    public enum Parsed: Equatable, Sendable {
        case run(ConsentOptions)
        case help
        /// A usage error: the message, naming the bad argument (exit 2).
        case usage(String)
    }

    /// The timeout's bounds, in seconds.
    public static let timeoutRange = 1...86_400

    /// Texts longer than this are refused (the portal's descriptions are at most 256 bytes).
    public static let maxTextBytes = 1024

    public static func parse(_ arguments: [String]) -> Parsed {
        var values: [String: String] = [:]
        var scan = ArgumentScanner(arguments)
        while scan.next() {
            let name = scan.name
            switch name {
            case "-h", "--help": return .help
            case "--consent":
                if (try? scan.noValue()) == nil { return .usage("'--consent' takes no value") }
            case "--app", "--description", "--chord", "--conflict", "--timeout":
                guard let v = try? scan.value() else { return .usage("\(name) needs a value") }
                guard values[name] == nil else { return .usage("\(name) given twice") }
                guard v.utf8.count <= maxTextBytes, !v.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                    return .usage("\(name): the value must be one line of at most \(maxTextBytes) bytes")
                }
                values[name] = v
            default:
                return .usage("unknown option '\(name)' with --consent; see kbd-commandd-bar --help")
            }
        }
        return options(values)
    }

    /// The options from the values given, each checked.
    private static func options(_ values: [String: String]) -> Parsed {
        guard let app = values["--app"] else { return .usage("--consent needs --app NAME (the app asking)") }
        guard let description = values["--description"] else { return .usage("--consent needs --description TEXT (what the shortcut does)") }
        var chord: ConsentChord?
        if let text = values["--chord"] {
            guard let c = ConsentChord(parsing: text) else {
                return .usage("--chord '\(text)' is not a chord; expected one such as Ctrl+Alt+m, Super+Return, Shift+F9 or a modifier alone (Super)")
            }
            chord = c
        }
        var timeout = ConsentDialog.defaultTimeout
        if let text = values["--timeout"] {
            guard let t = Int(text), timeoutRange.contains(t) else {
                return .usage("--timeout '\(text)': expected whole seconds from \(timeoutRange.lowerBound) to \(timeoutRange.upperBound)")
            }
            timeout = t
        }
        let conflict = values["--conflict"].flatMap { $0.isEmpty ? nil : $0 }
        return .run(ConsentOptions(app: app, description: description, chord: chord, conflict: conflict, timeoutSeconds: timeout))
    }

    /// The dialog's first line: who asks.
    public var heading: String { (app.isEmpty ? "An application" : app) + " asks for a global shortcut" }
    /// The conflict line (nil: none given).
    public var conflictLine: String? { conflict.map { "Already in use: " + $0 } }
}
