public import KbdKeymap
import KbdSystem
/// The discoverability listing: commands grouped by scope, in responder-chain
/// order when active scopes are given, with chords shadowed by a more
/// specific scope marked.
public struct CommandListing {
    public struct Entry: Sendable, Equatable {
        public var command: Command
        /// The scope of the command that wins this chord instead, if any.
        public var shadowedBy: String?
        /// The chord as the keycaps show it (`Ctrl+Ü` for `Ctrl+bracketleft` on `de`), when
        /// `localize` or `mirror` changes it on the keymap listed for.
        public var keycaps: String?
        /// Whether `keycaps` are those of the keyboard's own `[device.keymap]` the command is
        /// limited to (a pad's), not the keymap listed for.
        public var onOwnKeymap = false
    }

    public let groups: [(scope: String, entries: [Entry])]

    /// `keycaps`: the keymap's, so localized and mirrored chords show as the keys that fire them;
    /// `pads`: a pad's commands show on the pad's own keymap instead (`PadKeycaps`).
    public init(table: CommandTable, activeScopes: [String]?, keycaps: ChordKeycaps = .none, pads: PadKeycaps = .none) {
        var order: [String]
        if let active = activeScopes {
            order = active.filter { $0 != CommandTable.globalScope }
            order.append(CommandTable.globalScope)
        } else {
            order = table.scopes.filter { $0 != CommandTable.globalScope }
            if table.scopes.contains(CommandTable.globalScope) { order.append(CommandTable.globalScope) }
        }
        var seenOrder: Set<String> = []
        order = order.filter { seenOrder.insert($0).inserted }
        // One pass over the commands (filtering them once per scope was scopes × commands).
        var byScope: [String: [Command]] = [:]
        for c in table.commands { byScope[c.scope, default: []].append(c) }
        var claimed: [[ChordKey]: String] = [:]
        var groups: [(String, [Entry])] = []
        for scope in order {
            guard let commands = byScope[scope], !commands.isEmpty else { continue }
            var entries: [Entry] = []
            for c in commands {
                let shadow = activeScopes == nil ? nil : claimed[c.keys]
                let own = pads.own(for: c)
                entries.append(Entry(command: c, shadowedBy: shadow, keycaps: (own ?? keycaps).shown(c.keys, localize: c.localize, mirror: c.mirror),
                                     onOwnKeymap: own != nil))
            }
            for c in commands where claimed[c.keys] == nil { claimed[c.keys] = scope }
            groups.append((scope, entries))
        }
        self.groups = groups
    }

    /// The listing as text, one line per scope and per command. Titles, ids and scopes come
    /// from the config: their control characters are escaped, so a title cannot add a line
    /// or drive the terminal.
    /// `  (group: Edit)  (HUD title: Save File)  (toggles the HUD)`, for what a command has.
    public static func discoverability(_ group: String?, _ title: String?, _ action: Command.Action) -> String {
        var out = ""
        if let group { out += "  (group: \(group.escapingControlCharacters))" }
        if let title { out += "  (HUD title: \(title.escapingControlCharacters))" }
        if action == .hud { out += "  (toggles the HUD)" }
        return out
    }

    public func text() -> String {
        var out = ""
        let titles = groups.map { $0.entries.map(\.command.title.escapingControlCharacters) }
        let width = min(40, titles.flatMap { $0.map(\.count) }.max() ?? 0)
        for (g, (scope, entries)) in groups.enumerated() {
            out += scope.escapingControlCharacters + "\n"
            for (e, entry) in entries.enumerated() {
                let title = titles[g][e]
                out += "  " + title + String(repeating: " ", count: max(2, width + 2 - title.count)) + entry.command.chordText.escapingControlCharacters
                if let caps = entry.keycaps {
                    out += "  (on \(entry.onOwnKeymap ? "its keyboard's own keymap" : "this keymap"): \(caps.escapingControlCharacters))"
                }
                if entry.command.repeat { out += "  (repeats)" }
                out += Self.discoverability(entry.command.group, entry.command.discoverabilityTitle, entry.command.action)
                if let s = entry.shadowedBy { out += "  (shadowed by \(s.escapingControlCharacters))" }
                out += "\n"
            }
        }
        return out
    }
}
