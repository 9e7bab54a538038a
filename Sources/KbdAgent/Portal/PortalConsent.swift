import KbdControl
import KbdProcess
import KbdSystem

/// `[portal] approve = "ask"`: the person at the keyboard is asked about one shortcut of one
/// app (the proposal) and answers with a chord (the app's, or another they pressed) or
/// nothing. The question is asked through one function, `PortalConsent`, which the backend
/// is handed: `PortalConsentDialog.none` (no dialog: nothing new is bound) until the bar's
/// consent dialog (`kbd-commandd-bar --consent`) is plugged in.
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

/// What the portal's child keeps doing while a dialog waits for its answer: `readable` runs
/// each time `fd` (the agent's lines) can be read, so presses and releases still reach apps
/// (a push-to-talk held while another app's dialog is open). The backend sets both; the
/// child has one thread, hence unchecked.
public final class PortalConsentMeanwhile: @unchecked Sendable {
    public var fd: Int32 = -1
    /// Reads and handles what `fd` has; false when it reached its end (watch no more).
    public var readable: () -> Bool = { false }
    public init() {}
}

/// The consent seam's answers: none (no dialog) and the bar's dialog.
public enum PortalConsentDialog {
    /// No dialog: every question is answered "refuse" (approve = "ask" binds nothing new).
    /// The dialog (`kbd-commandd-bar --consent`, KbdControl's `ConsentDialog` on main) plugs in
    /// as another `PortalConsent`: its `arguments(binary:app:description:chord:conflict:)` from
    /// the proposal (`chord?.keys`), run as a child, then `reply(output:status:)`; an
    /// `.accept(chord)` is `PortalTrigger(parsing: chord)`, anything else nil.
    public static let none: PortalConsent = { _ in nil }

    /// The bar's consent dialog at `path` (`kbd-commandd-bar --consent`), run in the portal's
    /// child until it answers (its own timeout, 60 s, and a hard stop 5 s later). A failure
    /// (no display, the binary missing) is a refusal, said on `note`. Meanwhile `meanwhile`
    /// reads the agent's lines.
    public static func bar(path: String, meanwhile: PortalConsentMeanwhile = PortalConsentMeanwhile(),
                           note: @escaping @Sendable (String) -> Void) -> PortalConsent {
        return { proposal in
            let argv = ConsentDialog.arguments(binary: path, app: proposal.app, description: proposal.description,
                                               chord: proposal.chord?.keys, conflict: proposal.conflict)
            let ran: (output: String, status: Int32?)
            do throws(SystemError) {
                ran = try ChildProgram.output(path, arguments: argv, timeoutMilliseconds: Int32(ConsentDialog.defaultTimeout + 5) * 1000,
                                              watching: meanwhile.fd, whenReadable: meanwhile.readable)
            } catch {
                note("consent dialog: cannot start \(path): \(error)")
                return nil
            }
            switch ConsentDialog.reply(output: ran.output, status: ran.status) {
            case .accept(let chord): return PortalTrigger(parsing: chord)
            case .refuse: return nil
            case .failed(let reason):
                note("consent dialog: \(reason)")
                return nil
            }
        }
    }
}
