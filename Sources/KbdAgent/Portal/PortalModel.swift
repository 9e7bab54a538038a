import KbdKeymap

/// `[portal] approve`: what the agent does when an app asks for a shortcut not approved yet.
public enum PortalApprovalPolicy: String, Sendable, CaseIterable {
    /// A dialog asks the person at the keyboard (accept, another chord, refuse).
    case ask
    /// The preferred trigger is bound when it is free (no other command or app has it).
    case always
    /// Nothing new is bound; what was approved before still is.
    case never
}

/// One shortcut as an app asks for it (BindShortcuts' `a(sa{sv})`), validated.
public struct PortalShortcutRequest: Sendable, Equatable {
    public var id: String
    public var description: String
    public var preferredTrigger: String?

    public static let maxIDBytes = 128
    public static let maxDescriptionBytes = 256

    public init(id: String, description: String, preferredTrigger: String?) {
        self.id = id
        self.description = description
        self.preferredTrigger = preferredTrigger
    }

    /// Whether the text may travel (ids, descriptions, app names): printable, no tab or
    /// line break, at most `max` bytes.
    public static func isPlain(_ text: String, max: Int, allowEmpty: Bool = false) -> Bool {
        (allowEmpty || !text.isEmpty) && text.utf8.count <= max && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }
    }

    public var isValid: Bool {
        Self.isPlain(id, max: Self.maxIDBytes) && Self.isPlain(description, max: Self.maxDescriptionBytes, allowEmpty: true)
            && (preferredTrigger.map { Self.isPlain($0, max: PortalTrigger.maxBytes, allowEmpty: true) } ?? true)
    }
}

/// A shortcut bound to a chord: a command of the user's table, `commandID` on the wire.
public struct PortalBinding: Sendable, Equatable {
    public var shortcutID: String
    public var description: String
    public var trigger: PortalTrigger
    public var commandID: String
}

/// The sessions apps opened through the portal and their bindings (pure: the bus glue and
/// the agent drive it). Bounded: at most `maxSessions` sessions, `maxSessionsPerApp` of one
/// app, `maxShortcuts` shortcuts in one BindShortcuts.
public struct PortalSessions: Sendable {
    public struct Session: Sendable, Equatable {
        /// The session's object path (the frontend names it: `/org/freedesktop/portal/desktop/session/1_42/t`).
        public var path: String
        /// Whose it is: the app id, or the executable's name for an app without one.
        public var app: String
        public var bindings: [PortalBinding] = []
    }

    public static let maxSessions = 64
    public static let maxSessionsPerApp = 8
    public static let maxShortcuts = 64

    public private(set) var sessions: [Session] = []
    private var nextCommand = 1

    public init() {}

    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case tooManySessions, tooManyShortcuts, unknownSession, duplicate, invalid
        public var description: String {
            switch self {
            case .tooManySessions: "too many sessions"
            case .tooManyShortcuts: "at most \(PortalSessions.maxShortcuts) shortcuts in one session"
            case .unknownSession: "no such session"
            case .duplicate: "the session exists"
            case .invalid: "an invalid shortcut"
            }
        }
    }

    public mutating func create(path: String, app: String) throws(Refusal) {
        guard session(path) == nil else { throw .duplicate }
        guard sessions.count < Self.maxSessions, sessions.filter({ $0.app == app }).count < Self.maxSessionsPerApp else { throw .tooManySessions }
        sessions.append(Session(path: path, app: app))
    }

    /// Closes a session: its bindings are gone (true when there were any).
    @discardableResult
    public mutating func close(path: String) -> Bool {
        guard let i = sessions.firstIndex(where: { $0.path == path }) else { return false }
        return !sessions.remove(at: i).bindings.isEmpty
    }

    public func session(_ path: String) -> Session? { sessions.first { $0.path == path } }

    /// The binding behind a registered command id, and its session.
    public func binding(commandID: String) -> (session: Session, binding: PortalBinding)? {
        for s in sessions { if let b = s.bindings.first(where: { $0.commandID == commandID }) { return (s, b) } }
        return nil
    }

    /// What a shortcut asked for gets: a chord, or a question for the person at the keyboard.
    public enum Decision: Sendable, Equatable {
        case bind(PortalTrigger)
        case ask(proposed: PortalTrigger?, conflict: String?)
        case refuse
    }

    /// Decides each shortcut of a BindShortcuts for `app`: an earlier approval first (asks
    /// nothing, when its chord is still free), else the policy with the preferred trigger.
    /// `taken` names the chords of the user's table (ChordKey descriptions) and what they do.
    public func decide(_ requests: [PortalShortcutRequest], path: String, policy: PortalApprovalPolicy,
                       approvals: PortalApprovals, taken: [String: String]) throws(Refusal) -> [Decision] {
        guard let s = session(path) else { throw .unknownSession }
        guard requests.count <= Self.maxShortcuts else { throw .tooManyShortcuts }
        guard requests.allSatisfy(\.isValid), Set(requests.map(\.id)).count == requests.count else { throw .invalid }
        var claimed: Set<String> = []
        return requests.map { r in
            let approved = approvals.trigger(app: s.app, shortcutID: r.id).flatMap { $0.isRegistrable ? $0 : nil }
            let preferred = r.preferredTrigger.flatMap { PortalTrigger(parsing: $0) }.flatMap { $0.isRegistrable ? $0 : nil }
            let candidate = approved ?? preferred
            let conflict = candidate.flatMap { conflictOf($0, session: path, taken: taken, claimed: claimed) }
            if let approved, conflict == nil { claimed.insert(approved.keys); return .bind(approved) }
            switch policy {
            case .never: return .refuse
            case .always:
                guard let candidate, conflict == nil else { return .refuse }
                claimed.insert(candidate.keys)
                return .bind(candidate)
            case .ask: return .ask(proposed: candidate, conflict: conflict)
            }
        }
    }

    /// The asked shortcuts (`.ask` decisions) answered by `consent`, one question each, in
    /// order: the chord the person accepted becomes `.bind` when it is still free (not the
    /// user's, another app's or one bound earlier in this call), else `.refuse`.
    public func answer(_ decisions: [Decision], for requests: [PortalShortcutRequest], path: String, taken: [String: String],
                       consent: PortalConsent) -> [Decision] {
        guard let s = session(path) else { return decisions.map { _ in .refuse } }
        var claimed = Set(decisions.compactMap { if case .bind(let t) = $0 { t.keys } else { nil } })
        return zip(requests, decisions).map { r, d in
            guard case .ask(let proposed, let conflict) = d else { return d }
            let proposal = PortalConsentProposal(app: s.app, description: r.description, chord: proposed, conflict: conflict)
            guard let chord = consent(proposal), conflictOf(chord, session: path, taken: taken, claimed: claimed) == nil else { return .refuse }
            claimed.insert(chord.keys)
            return .bind(chord)
        }
    }

    /// What already has `trigger`: the user's table, another session's binding, or a shortcut
    /// decided earlier in the same call; nil when it is free.
    public func conflictOf(_ trigger: PortalTrigger, session path: String, taken: [String: String], claimed: Set<String> = []) -> String? {
        if let what = taken[trigger.keys] { return what }
        if claimed.contains(trigger.keys) { return "another shortcut of this app" }
        for s in sessions where s.path != path {
            if s.bindings.contains(where: { $0.trigger.keys == trigger.keys }) { return "\(s.app)'s shortcuts" }
        }
        return nil
    }

    /// Replaces the session's bindings with the shortcuts bound (each gets a command id).
    public mutating func bind(path: String, _ bound: [(PortalShortcutRequest, PortalTrigger)]) {
        guard let i = sessions.firstIndex(where: { $0.path == path }) else { return }
        sessions[i].bindings = bound.map { r, t in
            defer { nextCommand += 1 }
            return PortalBinding(shortcutID: r.id, description: r.description, trigger: t, commandID: "portal:\(nextCommand)")
        }
    }

    /// Drops one binding (the service's own table has its chord: it would never fire); the
    /// session it was in.
    public mutating func drop(commandID: String) -> Session? {
        guard let i = sessions.firstIndex(where: { $0.bindings.contains { $0.commandID == commandID } }) else { return nil }
        sessions[i].bindings.removeAll { $0.commandID == commandID }
        return sessions[i]
    }

    /// Every binding of every session, in the order they were made.
    public var allBindings: [(app: String, binding: PortalBinding)] {
        sessions.flatMap { s in s.bindings.map { (s.app, $0) } }
    }
}

extension PortalSessions {
    /// The chords of a user's table as `decide` takes them: the first chord of each command's
    /// keys (a sequence's first chord is taken too), in the service's names, to its title.
    public static func taken(_ commands: [(keys: String, title: String)]) -> [String: String] {
        var out: [String: String] = [:]
        for c in commands {
            let first = c.keys.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? c.keys
            let name = (try? ChordKey(parsing: first))?.description ?? first
            if out[name] == nil { out[name] = "your command \(c.title)" }
        }
        return out
    }
}
