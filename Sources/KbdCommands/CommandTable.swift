public import KbdCore
package import KbdKeymap
/// The commands with an index that makes matching a hash lookup per scope:
/// the cost of routing a key does not depend on how many commands there are.
///
/// Each scope has a trie of chords; a node is a command (a leaf) or a prefix
/// of sequences. Conflicts are rejected when the table is built.
public struct CommandTable: Sendable {
    public static let globalScope = "global"
    public static let defaultSequenceTimeoutMilliseconds = 1000

    public let commands: [Command]
    public let sequenceTimeoutMilliseconds: Int

    struct Node: Sendable {
        var command: Int?
        var children: [ChordKey: Int] = [:]
        /// Commands limited to some keyboards (`devices`) on this chord; the first whose
        /// keyboards include the typing one wins over `command` and `holdCommand`.
        var deviceCommands: [Int] = []
        /// Whether a command with `localize` ends here or below.
        var localize = false
        /// A `hold_ms` command on this chord (beside `command`, which then fires at an
        /// early release).
        var holdCommand: Int?
        /// Whether reaching it takes the key phases' path (a hold, or a command with phases).
        var isPhased = false

        var isLeaf: Bool { command != nil || holdCommand != nil || !deviceCommands.isEmpty }
        var anyCommand: Int? { command ?? holdCommand ?? deviceCommands.first }
    }

    /// Whether some command localizes (`localize`, the default), is mirrored (`mirror`),
    /// or is limited to keyboards (`devices`): the router's extra probes run only then.
    public let hasLocalize: Bool
    public let hasMirror: Bool
    public let hasDeviceCommands: Bool

    /// Trie nodes of every scope; `roots[scope]` is that scope's root.
    let nodes: [Node]
    let roots: [String: Int]
    /// Tap commands (a modifier alone), by the root of their scope: at most one for every
    /// keyboard, and those limited to keyboards.
    let taps: [Int: [HudSettings.HoldModifier: [Int]]]
    /// Whether any command uses a key phase: without, the router never looks at releases.
    public let hasPhases: Bool
    let hasTaps: Bool
    /// Whether a chord of the table is Caps Lock's (`Keysym.isCommandLock`): only then is its
    /// key routed like any other (else it is a modifier key the router passes over).
    let hasLockKeys: Bool
    /// One bit per hash of every chord in the table, 16 bits per chord or more (at least
    /// 1,024, at most 2^20): a key whose chord's bit is clear is bound nowhere, and the
    /// router skips the dictionary lookups (SipHash, ~100 instructions each) for most typed
    /// keys, at any table size.
    let chordFilter: [UInt64]
    /// 64 minus log2 of the filter's bits: the shift that takes a hash's top bits.
    let chordFilterShift: UInt64

    static func filterBit(_ chord: ChordKey, shift: UInt64) -> Int {
        Int(truncatingIfNeeded: (chord.word &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// Whether some node of the table has `chord` as a child (false: surely not).
    @inline(__always)
    package func mayBind(_ chord: ChordKey) -> Bool {
        let bit = Self.filterBit(chord, shift: chordFilterShift)
        return chordFilter.withUnsafeBufferPointer { $0[bit >> 6] } & (1 << UInt64(bit & 63)) != 0
    }

    /// A conflict between two entries, both located.
    public struct Conflict: Error, Sendable, Equatable, CustomStringConvertible {
        public var location: SourceLocation
        public var message: String
        public var description: String { "\(location): \(message)" }
    }

    /// Builds the index; throws every conflict found (duplicate ids, two
    /// commands on one chord in one scope, a chord that is both a command and a
    /// sequence prefix in one scope).
    public init(commands: [Command], sequenceTimeoutMilliseconds: Int = defaultSequenceTimeoutMilliseconds) throws(ConflictList) {
        var problems: [Conflict] = []
        var ids: [String: Command] = [:]
        for c in commands {
            if let first = ids[c.id] {
                problems.append(Conflict(location: c.location, message: "duplicate command id '\(c.id)'; first defined at \(first.location)"))
            } else {
                ids[c.id] = c
            }
        }
        var nodes: [Node] = []
        var roots: [String: Int] = [:]
        var taps: [Int: [HudSettings.HoldModifier: [Int]]] = [:]
        for (index, c) in commands.enumerated() {
            let root: Int
            if let r = roots[c.scope] { root = r } else {
                root = nodes.count
                nodes.append(Node())
                roots[c.scope] = root
            }
            if let modifier = c.tapModifier {
                // A modifier alone is no chord of the trie: the router asks `taps` at its release.
                if let problem = Self.insertTap(index, c, modifier, in: &taps[root, default: [:]], commands: commands) { problems.append(problem) }
                continue
            }
            if let problem = Self.insert(index, c, root: root, nodes: &nodes, commands: commands) { problems.append(problem) }
        }
        guard problems.isEmpty else { throw ConflictList(conflicts: problems) }
        let edges = nodes.reduce(0) { $0 + $1.children.count }
        var log2Bits: UInt64 = 10
        while log2Bits < 20, 1 << log2Bits < edges * 16 { log2Bits += 1 }
        var filter = [UInt64](repeating: 0, count: 1 << (Int(log2Bits) - 6))
        for node in nodes {
            for chord in node.children.keys {
                let bit = Self.filterBit(chord, shift: 64 - log2Bits)
                filter[bit >> 6] |= 1 << UInt64(bit & 63)
            }
        }
        chordFilter = filter
        chordFilterShift = 64 - log2Bits
        hasLocalize = commands.contains { $0.localize }
        hasMirror = commands.contains { $0.mirror }
        hasDeviceCommands = commands.contains { !$0.devices.isEmpty }
        self.commands = commands
        self.taps = taps
        self.hasTaps = !taps.isEmpty
        self.hasLockKeys = commands.contains { $0.keys.contains { $0.keysym.isCommandLock } }
        self.hasPhases = commands.contains { $0.hasPhases }
        self.nodes = nodes
        self.roots = roots
        self.sequenceTimeoutMilliseconds = sequenceTimeoutMilliseconds
    }

    /// Puts command `index` into the trie under `root`; the conflict, if it has one. A chord
    /// has one plain command and one `hold_ms` command for every keyboard, and any number of
    /// each limited to keyboards that do not overlap.
    private static func insert(_ index: Int, _ c: Command, root: Int, nodes: inout [Node], commands: [Command]) -> Conflict? {
        let isHold = c.holdMilliseconds != nil
        var at = root
        var path: [Int] = []
        for (step, chord) in c.keys.enumerated() {
            let last = step == c.keys.count - 1
            if let other = nodes[at].anyCommand.map({ commands[$0] }) {
                return Conflict(location: c.location, message: "'\(c.keysText)' (\(c.id)) extends the chord '\(other.keysText)' of command '\(other.id)' at \(other.location) in scope '\(c.scope)'; a chord cannot be both a command and a sequence prefix")
            }
            if let child = nodes[at].children[chord] {
                at = child
                guard last else { path.append(at); continue }
                if !nodes[at].children.isEmpty {
                    let other = firstCommand(below: at, nodes: nodes).map { commands[$0] }
                    return Conflict(location: c.location, message: "'\(c.keysText)' (\(c.id)) is a prefix of the sequence '\(other?.keysText ?? "?")' of command '\(other?.id ?? "?")' at \(other?.location.description ?? "?") in scope '\(c.scope)'; a chord cannot be both a command and a sequence prefix")
                }
                if let problem = sameChord(c, isHold: isHold, nodes[at], commands: commands) { return problem }
            } else {
                let child = nodes.count
                nodes.append(Node())
                nodes[at].children[chord] = child
                at = child
            }
            path.append(at)
        }
        if !c.devices.isEmpty {
            nodes[at].deviceCommands.append(index)
        } else if isHold {
            nodes[at].holdCommand = index
        } else {
            nodes[at].command = index
        }
        if c.hasPhases { nodes[at].isPhased = true }
        if c.localize { for node in path { nodes[node].localize = true } }
        return nil
    }

    /// The conflict of `c` with a command already on its chord (`node`), if any.
    private static func sameChord(_ c: Command, isHold: Bool, _ node: Node, commands: [Command]) -> Conflict? {
        if c.devices.isEmpty, let existing = isHold ? node.holdCommand : node.command {
            let other = commands[existing]
            return Conflict(location: c.location, message: "'\(c.keysText)' (\(c.id)) is already bound to command '\(other.id)' at \(other.location) in scope '\(c.scope)'")
        }
        // A keyboard's own hold and plain command may share a chord, as the chord's for every keyboard.
        return deviceConflict(c, node.deviceCommands.filter { (commands[$0].holdMilliseconds != nil) == isHold }, commands: commands)
    }

    /// The conflict of `c`, limited to keyboards, with one of `others` on the same keyboards.
    private static func deviceConflict(_ c: Command, _ others: [Int], commands: [Command]) -> Conflict? {
        guard !c.devices.isEmpty,
              let existing = others.first(where: { !Set(commands[$0].devices).isDisjoint(with: c.devices) }) else { return nil }
        let other = commands[existing]
        let shared = c.devices.filter { other.devices.contains($0) }.map { "\"\($0)\"" }.joined(separator: ", ")
        return Conflict(location: c.location, message: "'\(c.keysText)' (\(c.id)) is already bound to command '\(other.id)' at \(other.location) in scope '\(c.scope)' for the keyboards \(shared)")
    }

    /// Adds tap command `index` (a modifier alone) to its scope's taps; the conflict, if it has one.
    private static func insertTap(_ index: Int, _ c: Command, _ modifier: HudSettings.HoldModifier, in taps: inout [HudSettings.HoldModifier: [Int]],
                                  commands: [Command]) -> Conflict? {
        let existing = taps[modifier] ?? []
        if c.devices.isEmpty, let other = existing.first(where: { commands[$0].devices.isEmpty }).map({ commands[$0] }) {
            return Conflict(location: c.location, message: "'\(c.keysText)' (\(c.id)) is already bound to command '\(other.id)' at \(other.location) in scope '\(c.scope)'")
        }
        if let problem = deviceConflict(c, existing, commands: commands) { return problem }
        taps[modifier, default: []].append(index)
        return nil
    }

    /// The tap command of `modifier` under `root` for `device`: one limited to keyboards that
    /// include it, else the one for every keyboard (none for a grabbed device).
    func tap(_ modifier: HudSettings.HoldModifier, root: Int, device: DeviceIdentity?) -> Int? {
        guard let list = taps[root]?[modifier] else { return nil }
        if let device, let i = list.first(where: { !commands[$0].devices.isEmpty && device.matches(commands[$0].devices) }) { return i }
        if device?.grabbed == true { return nil }
        return list.first { commands[$0].devices.isEmpty }
    }

    /// Every conflict found while building a table.
    public struct ConflictList: Error, Sendable, Equatable, CustomStringConvertible {
        public var conflicts: [Conflict]
        public var description: String { conflicts.map(\.description).joined(separator: "\n") }
    }

    /// Scopes in the order they first appear in the table.
    public var scopes: [String] {
        var seen: Set<String> = []
        return commands.compactMap { seen.insert($0.scope).inserted ? $0.scope : nil }
    }

    public func command(id: String) -> Command? { commands.first { $0.id == id } }

    /// The root node for each scope of an active scope list (most specific
    /// first); `global` is appended when missing. Unknown scopes are skipped.
    func resolve(scopes active: [String]) -> [Int] {
        var list = active.filter { $0 != Self.globalScope }
        list.append(Self.globalScope)
        var seen: Set<String> = []
        return list.compactMap { seen.insert($0).inserted ? roots[$0] : nil }
    }
}

private func firstCommand(below node: Int, nodes: [CommandTable.Node]) -> Int? {
    if let c = nodes[node].anyCommand { return c }
    for child in nodes[node].children.values { if let c = firstCommand(below: child, nodes: nodes) { return c } }
    return nil
}
