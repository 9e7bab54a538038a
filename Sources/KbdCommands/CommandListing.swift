import KbdKeymap
/// The discoverability listing: commands grouped by scope, in responder-chain
/// order when active scopes are given, with chords shadowed by a more
/// specific scope marked.
public struct CommandListing {
    public struct Entry: Sendable, Equatable {
        public var command: Command
        /// The scope of the command that wins this chord instead, if any.
        public var shadowedBy: String?
    }

    public let groups: [(scope: String, entries: [Entry])]

    public init(table: CommandTable, activeScopes: [String]?) {
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
                entries.append(Entry(command: c, shadowedBy: shadow))
            }
            for c in commands where claimed[c.keys] == nil { claimed[c.keys] = scope }
            groups.append((scope, entries))
        }
        self.groups = groups
    }

    public func text() -> String {
        var out = ""
        let width = min(40, groups.flatMap { $0.entries.map(\.command.title.count) }.max() ?? 0)
        for (scope, entries) in groups {
            out += scope + "\n"
            for e in entries {
                let title = e.command.title
                out += "  " + title + String(repeating: " ", count: max(2, width + 2 - title.count)) + e.command.chordText
                if e.command.repeat { out += "  (repeats)" }
                if let s = e.shadowedBy { out += "  (shadowed by \(s))" }
                out += "\n"
            }
        }
        return out
    }
}
