/// The shortcuts the person at the keyboard approved, per app: kept in the user's state
/// directory (`$XDG_STATE_HOME/kbd-commandd/portal-approvals`, else
/// `~/.local/state/kbd-commandd/portal-approvals`), so a later BindShortcuts of the same ids
/// asks nothing. One line per shortcut, tab-separated: app, shortcut id, chord (the service's
/// syntax), description; `#` lines are comments. Listed and revoked with
/// `kbd-commandd portal list` and `kbd-commandd portal revoke APP`.
public struct PortalApprovals: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var app: String
        public var shortcutID: String
        public var trigger: PortalTrigger
        public var description: String
        public init(app: String, shortcutID: String, trigger: PortalTrigger, description: String) {
            self.app = app
            self.shortcutID = shortcutID
            self.trigger = trigger
            self.description = description
        }
    }

    public private(set) var entries: [Entry] = []
    /// At most this many approvals are kept (a hostile app cannot grow the file forever).
    public static let maxEntries = 1024
    public static let maxAppBytes = 255
    public static let header = "# kbd-commandd: shortcuts approved for apps through the desktop portal (kbd-commandd portal list, portal revoke APP)"

    public init() {}

    /// The file's path: under XDG_STATE_HOME, else HOME's `.local/state`; nil without either.
    public static func path(environment: [String: String]) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/kbd-commandd/portal-approvals" }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return home + "/.local/state/kbd-commandd/portal-approvals"
    }

    public func trigger(app: String, shortcutID: String) -> PortalTrigger? {
        entries.first { $0.app == app && $0.shortcutID == shortcutID }?.trigger
    }

    /// Records (or replaces) an approval; false when the list is full or a field cannot be kept.
    @discardableResult
    public mutating func approve(_ entry: Entry) -> Bool {
        guard PortalShortcutRequest.isPlain(entry.app, max: Self.maxAppBytes),
              PortalShortcutRequest.isPlain(entry.shortcutID, max: PortalShortcutRequest.maxIDBytes),
              PortalShortcutRequest.isPlain(entry.description, max: PortalShortcutRequest.maxDescriptionBytes, allowEmpty: true),
              PortalTrigger(parsing: entry.trigger.keys) == entry.trigger else { return false }
        if let i = entries.firstIndex(where: { $0.app == entry.app && $0.shortcutID == entry.shortcutID }) {
            entries[i] = entry
            return true
        }
        guard entries.count < Self.maxEntries else { return false }
        entries.append(entry)
        return true
    }

    /// Forgets every approval of `app`; how many there were.
    @discardableResult
    public mutating func revoke(app: String) -> Int {
        let before = entries.count
        entries.removeAll { $0.app == app }
        return before - entries.count
    }

    /// The apps with approvals, in the order they were first approved.
    public var apps: [String] {
        var seen: [String] = []
        for e in entries where !seen.contains(e.app) { seen.append(e.app) }
        return seen
    }

    /// The file's text.
    public var encoded: String {
        var out = Self.header + "\n"
        for e in entries { out += "\(e.app)\t\(e.shortcutID)\t\(e.trigger.keys)\t\(e.description)\n" }
        return out
    }

    public struct DecodeError: Error, Equatable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    /// Reads the file's text; a bad line is an error with its number (the file is the agent's
    /// own: a hand edit that broke it is said, not guessed at).
    public init(decoding text: String) throws(DecodeError) {
        var number = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4 else { throw DecodeError(line: number, message: "expected 4 tab-separated fields (app, shortcut id, chord, description), found \(fields.count)") }
            guard let trigger = PortalTrigger(parsing: fields[2]) else { throw DecodeError(line: number, message: "'\(fields[2])' is not a chord") }
            guard approve(Entry(app: fields[0], shortcutID: fields[1], trigger: trigger, description: fields[3])) else {
                throw DecodeError(line: number, message: "an empty or too long app or shortcut id, or more than \(Self.maxEntries) approvals")
            }
        }
    }
}
