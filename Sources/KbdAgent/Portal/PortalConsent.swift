/// `[portal] approve = "ask"`: the person at the keyboard is asked about one shortcut of one
/// app (the proposal) and answers with a chord (the app's, or another they pressed) or
/// nothing. The question is asked through one function, `PortalConsent`, which the backend
/// is handed: `PortalConsentDialog.none` (no dialog: nothing new is bound) until the bar's
/// consent dialog (`kbd-commandd-bar --consent`) is plugged in with `arguments` and `answer`.
public struct PortalConsentProposal: Sendable, Equatable {
    /// The app's id, or its executable's name.
    public var app: String
    /// What the app says the shortcut does.
    public var description: String
    /// The app's preferred trigger in the service's names (nil: it gave none, or none usable).
    public var chord: PortalTrigger?
    /// What already has that chord (the user's command, another app's shortcut), if anything.
    public var conflict: String?

    public init(app: String, description: String, chord: PortalTrigger?, conflict: String?) {
        self.app = app
        self.description = description
        self.chord = chord
        self.conflict = conflict
    }
}

/// Asks about one proposal; the chord accepted, or nil (refused, closed, no dialog).
public typealias PortalConsent = @Sendable (PortalConsentProposal) -> PortalTrigger?

/// The consent dialog's side of the seam: its command line and its one answer line.
public enum PortalConsentDialog {
    /// No dialog: every question is answered "refuse" (approve = "ask" binds nothing new).
    public static let none: PortalConsent = { _ in nil }

    /// `kbd-commandd-bar --consent --app NAME --description TEXT --chord CHORD [--conflict TEXT]`
    /// (an empty CHORD: the app proposed none, the person presses one).
    public static func arguments(_ p: PortalConsentProposal) -> [String] {
        var out = ["--consent", "--app", p.app, "--description", p.description, "--chord", p.chord?.keys ?? ""]
        if let conflict = p.conflict { out += ["--conflict", conflict] }
        return out
    }

    /// The dialog's line: `accept CHORD` (a chord in the service's names, maybe another than
    /// proposed) or `refuse`; nil for a refusal, or a chord the service would not take.
    public static func answer(_ line: String) -> PortalTrigger? {
        var text = Substring(line)
        if text.last == "\n" { text = text.dropLast() }
        guard text.hasPrefix("accept "), let trigger = PortalTrigger(parsing: String(text.dropFirst(7))), trigger.isRegistrable else { return nil }
        return trigger
    }
}
