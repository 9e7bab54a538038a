public import KbdKeymap
/// What the discoverability HUD and the shortcuts bar show: the commands of the active
/// responder chain, in groups. Pure: tables and claims in, groups out.
public enum Discoverability {
    /// A table as it routes now: its scopes (most specific first; `global` is added last)
    /// and whether text input is on. `owner` nil is the service's own table (the system
    /// table), else the client that registered it.
    public struct Source: Sendable {
        public var table: CommandTable
        public var owner: Int?
        public var scopes: [String]
        public var textInput: Bool
        /// How chords show on the user's keycaps (`localize`, `mirror`) at the active layout.
        public var keycaps: ChordKeycaps
        /// A pad's commands show on the pad's own keymap instead (`PadKeycaps`).
        public var pads: PadKeycaps
        public init(table: CommandTable, owner: Int? = nil, scopes: [String], textInput: Bool, keycaps: ChordKeycaps = .none,
                    pads: PadKeycaps = .none) {
            self.table = table
            self.keycaps = keycaps
            self.pads = pads
            self.owner = owner
            self.scopes = scopes
            self.textInput = textInput
        }
    }

    /// One command shown: `shadowed` when a more specific scope (or, for a user's table,
    /// the system table) takes its first chord, so it cannot fire now; `textInputFiltered`
    /// when text input keeps it from firing now.
    public struct Entry: Sendable, Equatable {
        public var command: Command
        public var owner: Int?
        public var shadowed: Bool
        public var textInputFiltered: Bool
        /// The chord as the user's keycaps show it (`Ctrl+Ü` for `Ctrl+bracketleft` on `de`).
        public var chord: String
        public init(command: Command, owner: Int?, shadowed: Bool, textInputFiltered: Bool, chord: String? = nil) {
            self.command = command
            self.chord = chord ?? command.chordText
            self.owner = owner
            self.shadowed = shadowed
            self.textInputFiltered = textInputFiltered
        }
    }

    /// A group: `title` nil is the last group, of the commands without one ("Other").
    public struct Group: Sendable, Equatable {
        public var title: String?
        public var entries: [Entry]
        public init(title: String?, entries: [Entry]) {
            self.title = title
            self.entries = entries
        }
    }

    /// The title clients show for the group of commands without one.
    public static let otherGroupTitle = "Other"

    /// The chain a table routes with: the scopes once each, `global` last.
    public static func chain(_ scopes: [String]) -> [String] {
        var seen: Set<String> = []
        return (scopes.filter { $0 != CommandTable.globalScope } + [CommandTable.globalScope]).filter { seen.insert($0).inserted }
    }

    /// The commands of `sources` (routed in that order: the system table first), scope by
    /// scope along each chain, in groups in the order they first appear; the commands
    /// without a group (or in a group titled "Other") in a last group. A command is shadowed
    /// when its first chord is bound in a scope routed before it (the router follows the
    /// first trie that has the chord), text-input-filtered when a chord of it would not fire
    /// while text is typed.
    public static func groups(_ sources: [Source]) -> [Group] {
        var entries: [Entry] = []
        var claimed: Set<ChordKey> = []
        for source in sources {
            var byScope: [String: [Command]] = [:]
            for c in source.table.commands { byScope[c.scope, default: []].append(c) }
            for scope in chain(source.scopes) {
                guard let commands = byScope[scope] else { continue }
                for c in commands {
                    entries.append(Entry(command: c, owner: source.owner, shadowed: c.keys.first.map { claimed.contains($0) } ?? false,
                                         textInputFiltered: source.textInput && filtered(c), chord: source.shown(c)))
                }
                for c in commands { if let first = c.keys.first { claimed.insert(first) } }
            }
        }
        return grouped(entries)
    }

    /// What can follow a pending prefix (`keys`, in `scope`'s trie of `source`'s table): the
    /// commands of that scope whose sequence starts with it, grouped like `groups`.
    public static func continuations(of keys: [ChordKey], scope: String, in source: Source) -> [Group] {
        let entries = source.table.commands.filter { $0.scope == scope && $0.keys.count > keys.count && $0.keys.starts(with: keys) }.map {
            Entry(command: $0, owner: source.owner, shadowed: false, textInputFiltered: source.textInput && filtered($0), chord: source.shown($0))
        }
        return grouped(entries)
    }

    static func filtered(_ c: Command) -> Bool {
        c.keys.indices.contains { ChordRouter.textInputBlocks(c.keys[$0], priority: $0 == c.keys.count - 1 && c.priorityOverTextInput) }
    }

    static func grouped(_ entries: [Entry]) -> [Group] {
        var groups: [Group] = []
        var index: [String: Int] = [:]
        var other: [Entry] = []
        for e in entries {
            guard let title = e.command.group, title != otherGroupTitle else {
                other.append(e)
                continue
            }
            if let i = index[title] { groups[i].entries.append(e) } else {
                index[title] = groups.count
                groups.append(Group(title: title, entries: [e]))
            }
        }
        if !other.isEmpty { groups.append(Group(title: nil, entries: other)) }
        return groups
    }
}

extension Discoverability {
    /// What a shown HUD shows for one reader: the pending prefix (trigger sequence), the
    /// system table's chain (`global` last) and text input, and the groups.
    public struct View: Sendable, Equatable {
        public var pending: HudState.Pending?
        public var scopes: [String]
        public var textInput: Bool
        public var groups: [Group]
        public init(pending: HudState.Pending?, scopes: [String], textInput: Bool, groups: [Group]) {
            self.pending = pending
            self.scopes = scopes
            self.textInput = textInput
            self.groups = groups
        }

        /// The view of `sources` (the system table first): every command of the chains, or
        /// with `pending` the continuations of the prefix in the table it is pending in
        /// (none when that table is not among `sources`).
        public init(pending: HudState.Pending?, sources: [Source]) {
            let system = sources.first { $0.owner == nil }
            var groups: [Group]
            if let pending {
                groups = sources.first { $0.owner == pending.owner }.map { continuations(of: pending.keys, scope: pending.scope, in: $0) } ?? []
            } else {
                groups = Discoverability.groups(sources)
            }
            self.init(pending: pending, scopes: chain(system?.scopes ?? []), textInput: system?.textInput ?? false, groups: groups)
        }
    }
}

extension Discoverability.Source {
    /// A command's keys as the keycaps show them (a pad's command: the pad's own).
    func shown(_ c: Command) -> String {
        pads.shown(c, active: keycaps) ?? c.chordText
    }
}
