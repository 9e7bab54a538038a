public import KbdCore
public import KbdKeymap
/// The routing state machine: key events in, chords and fired commands out,
/// plus the time of its next deadline (a pending sequence's timeout). It does
/// no I/O and reads no clock: time comes from the events, so replay is
/// deterministic and the daemon turns `nextDeadline` into its epoll timeout.
public struct ChordRouter: Sendable {
    public enum Output: Sendable, Equatable {
        /// A chord with Ctrl, Alt or Super (the only chords that are logged).
        case chord(time: EventTime, device: DeviceID, chord: ChordKey)
        /// A command fired; `chord` is the chord that completed it, `phase` when (`press`
        /// for every command without phases).
        case command(time: EventTime, device: DeviceID, command: Command, chord: ChordKey, phase: KeyPhase = .press)
        /// A sequence prefix was typed and is waiting for its next chord.
        case sequencePending(time: EventTime, deadline: EventTime)
        /// A pending sequence was cancelled by another chord, a timeout or a detach.
        case sequenceCancelled(time: EventTime, reason: CancelReason)
    }

    public enum CancelReason: String, Sendable, Equatable {
        case otherChord = "other-chord"
        case timeout
        case detach
    }

    private struct Pending: Sendable {
        var node: Int
        var deadline: EventTime
        var device: DeviceID
        /// The chords typed so far and the scope whose trie they are in (for the HUD).
        var keys: [ChordKey]
        var scope: String
    }

    public private(set) var table: CommandTable
    public private(set) var activeScopes: [String]
    public var textInputActive: Bool
    private(set) var roots: [Int]
    private var pending: Pending? { didSet { updateDeadline() } }
    /// What keys that fired commands still have to do (only for a table with phases).
    var phases = KeyPhases()

    public init(table: CommandTable, scopes: [String] = [], textInputActive: Bool = false) {
        self.table = table
        self.activeScopes = scopes
        self.textInputActive = textInputActive
        self.roots = table.resolve(scopes: scopes)
    }

    /// Keeps `nextDeadline` (read for every event) up to date: a pending sequence's timeout
    /// or, in a table with phases, a hold's.
    mutating func updateDeadline() {
        guard table.hasPhases, let hold = phases.nextDeadline else {
            nextDeadline = pending?.deadline
            return
        }
        nextDeadline = pending.map { min($0.deadline, hold) } ?? hold
    }

    /// Sets the active scopes, most specific first (`global` is always last).
    public mutating func setScopes(_ scopes: [String]) {
        activeScopes = scopes
        roots = table.resolve(scopes: scopes)
        pending = nil
        phases.lone = nil
    }

    /// Replaces the table (config reload); a pending sequence is dropped.
    public mutating func replaceTable(_ newTable: CommandTable) {
        table = newTable
        roots = newTable.resolve(scopes: activeScopes)
        // Held keys point into the old table: they fire nothing more.
        phases = KeyPhases()
        pending = nil
    }

    /// When the pending sequence times out or a held chord's `hold_ms` is reached (kept,
    /// not computed: the pipeline reads it for every event).
    public private(set) var nextDeadline: EventTime?

    /// Whether a sequence prefix is waiting for its next chord.
    public var isPending: Bool { pending != nil }

    /// The pending prefix (its chords as matched) and the scope of the trie it is in.
    public var pendingPrefix: (keys: [ChordKey], scope: String)? { pending.map { ($0.keys, $0.scope) } }

    /// Moves the pending sequence's deadline to `deadline` if that is later (the HUD shows the
    /// prefix's continuations: the sequence waits while they are read).
    public mutating func extendPending(until deadline: EventTime) {
        if let p = pending, p.deadline < deadline { pending!.deadline = deadline }
    }

    /// Drops a pending sequence (another table took the key that would have continued it).
    public mutating func cancelPending() { pending = nil }

    /// Cancels a pending sequence whose deadline is before `time`.
    public mutating func expire(at time: EventTime, into out: inout [Output]) {
        expireSequence(at: time, into: &out)
        if table.hasPhases, let due = phases.nextDeadline, due <= time { expirePhases(at: time, into: &out) }
    }

    private mutating func expireSequence(at time: EventTime, into out: inout [Output]) {
        if let p = pending, time > p.deadline {
            pending = nil
            out.append(.sequenceCancelled(time: p.deadline, reason: .timeout))
        }
    }

    /// Cancels a pending sequence started on `device` (it went away).
    public mutating func deviceDetached(_ device: DeviceID, at time: EventTime, into out: inout [Output]) {
        if let p = pending, p.device == device {
            pending = nil
            out.append(.sequenceCancelled(time: time, reason: .detach))
        }
        if !phases.isEmpty { detachPhases(device, at: time, into: &out) }
    }

    /// Routes one key event.
    public mutating func handle(_ key: KeyEvent, into out: inout [Output]) { handle(key, on: nil, into: &out) }

    /// Routes one key event typed on `device` (nil: unknown, no command limited to keyboards
    /// fires; a grabbed device runs only the commands bound to it).
    public mutating func handle(_ key: KeyEvent, on device: DeviceIdentity?, into out: inout [Output]) {
        expireSequence(at: key.time, into: &out)
        // A table with phases fires its due holds, and sees releases, repeats and modifier keys
        // first: a table without phases pays this one test per key.
        if table.hasPhases {
            if let due = phases.nextDeadline, due <= key.time { expirePhases(at: key.time, into: &out) }
            if key.state != .press || isModifierKey(key) || !phases.isEmpty, phaseKey(key, device, into: &out) { return }
        }
        guard key.state != .release, !isModifierKey(key) else { return }
        if key.state == .press, key.chord.hasCommandModifier {
            out.append(.chord(time: key.time, device: key.device, chord: key.chord))
        }
        if key.state == .repeat {
            // Repeats fire single-chord commands that ask for it; sequences ignore them.
            if pending == nil, let (index, chord) = match(key, device, roots: roots), table.commands[index].repeat,
                !table.commands[index].isSequence
            {
                out.append(.command(time: key.time, device: key.device, command: table.commands[index], chord: chord, phase: .repeat))
            }
            return
        }
        if let p = pending {
            if let (child, chord) = step(from: p.node, key, device) {
                advance(to: child, key: key, device, chord: chord, prefix: p.keys, scope: p.scope, into: &out)
                return
            }
            pending = nil
            out.append(.sequenceCancelled(time: key.time, reason: .otherChord))
        }
        for root in roots {
            if let (child, chord) = step(from: root, key, device) {
                advance(to: child, key: key, device, chord: chord, prefix: [], root: root, into: &out)
                return
            }
        }
    }

    /// A modifier key the router passes over (taps aside): not Caps Lock when the table binds it.
    func isModifierKey(_ key: KeyEvent) -> Bool {
        key.isModifierKey && !(table.hasLockKeys && key.chord.keysym.isCommandLock)
    }

    private mutating func advance(to node: Int, key: KeyEvent, _ device: DeviceIdentity?, chord: ChordKey, prefix: [ChordKey],
                                  scope: String? = nil, root: Int? = nil, into out: inout [Output]) {
        if table.hasPhases, table.nodes[node].isPhased {
            pending = nil
            pressPhased(node: node, key: key, device, chord: chord, into: &out)
        } else if let index = command(at: node, device) {
            pending = nil
            out.append(.command(time: key.time, device: key.device, command: table.commands[index], chord: chord))
        } else {
            let deadline = key.time.adding(milliseconds: table.sequenceTimeoutMilliseconds)
            // A prefix, not the common path: the scope of a first chord's root is looked up here.
            let scope = scope ?? table.roots.first { $0.value == root }?.key ?? CommandTable.globalScope
            pending = Pending(node: node, deadline: deadline, device: key.device, keys: prefix + [chord], scope: scope)
            out.append(.sequencePending(time: key.time, deadline: deadline))
        }
    }

    /// Whether text input keeps `chord` from firing (a command's chord; `priority`: the
    /// command has `priority_over_text_input`), as `handle` decides for a typed key whose
    /// level-one chord it is. For listings: the HUD marks such commands.
    public static func textInputBlocks(_ chord: ChordKey, priority: Bool) -> Bool {
        if priority || chord.hasCommandModifier { return false }
        let u = chord.keysym.utf32
        return (u >= 0x20 && u != 0x7F) || chord.keysym.isTextEditing
    }

    /// The command a leaf fires for `device`: one limited to keyboards that include it, else
    /// the one for every keyboard, its plain command or else its `hold_ms` one (none for a
    /// grabbed device: it runs only its own). A phased leaf's press sorts out hold and plain.
    @inline(__always)
    func command(at node: Int, _ device: DeviceIdentity?) -> Int? {
        // Read in place: copying the node would retain its dictionary and array.
        if table.nodes[node].deviceCommands.isEmpty {
            return device?.grabbed == true ? nil : table.nodes[node].command ?? table.nodes[node].holdCommand
        }
        return deviceCommand(at: node, device) ?? (device?.grabbed == true ? nil : table.nodes[node].command ?? table.nodes[node].holdCommand)
    }

    /// The command limited to keyboards that include `device` on a leaf (not the common path).
    func deviceCommand(at node: Int, _ device: DeviceIdentity?) -> Int? {
        guard let device else { return nil }
        return table.nodes[node].deviceCommands.first { device.matches(table.commands[$0].devices) }
    }

    /// How a chord probed the table: as typed, mirrored (a right-to-left layout), or from the
    /// key's US position (`localize`).
    private struct Probe {
        var rightToLeft: Bool
        var mirrored = false
        var localized = false
    }

    /// The child of `node` the key leads to, trying the level-one chord first, then the
    /// produced keysym; on a right-to-left layout the mirrored pairs of `mirror` commands;
    /// then the key's US position for `localize` commands. A command blocked by text input
    /// does not match.
    private func step(from node: Int, _ key: KeyEvent, _ device: DeviceIdentity?) -> (Int, ChordKey)? {
        var probe = Probe(rightToLeft: key.rightToLeft && table.hasMirror)
        if let hit = step(from: node, key, device, chord: key.chord, probe) { return hit }
        if let alternate = key.alternateChord, let hit = step(from: node, key, device, chord: alternate, probe) { return hit }
        if probe.rightToLeft {
            probe.mirrored = true
            if let m = key.chord.mirrored, let hit = step(from: node, key, device, chord: m, probe) { return hit }
            if let m = key.alternateChord?.mirrored, let hit = step(from: node, key, device, chord: m, probe) { return hit }
            probe.mirrored = false
        }
        guard table.hasLocalize, let localized = key.localizedChord else { return nil }
        probe.localized = true
        if let hit = step(from: node, key, device, chord: localized, probe) { return hit }
        probe.mirrored = true
        if probe.rightToLeft, let m = localized.mirrored, let hit = step(from: node, key, device, chord: m, probe) { return hit }
        return nil
    }

    private func step(from node: Int, _ key: KeyEvent, _ device: DeviceIdentity?, chord: ChordKey, _ probe: Probe) -> (Int, ChordKey)? {
        guard table.mayBind(chord), let child = table.nodes[node].children[chord] else { return nil }
        var command: Command?
        if table.nodes[child].isLeaf {
            guard let index = self.command(at: child, device) else { return nil }
            let c = table.commands[index]
            if probe.localized, !c.localize { return nil }
            // A mirrored command answers to its pair only while the layout is right to left.
            if probe.mirrored ? !c.mirror : (probe.rightToLeft && c.mirror && chord.keysym.mirrored != nil) { return nil }
            command = c
        } else if probe.mirrored || (probe.localized && !table.nodes[child].localize) {
            return nil
        }
        return blockedByTextInput(key, command) ? nil : (child, chord)
    }

    /// The single-chord command `key` fires for `device` (a repeat's; never a `hold_ms` command).
    func match(_ key: KeyEvent, _ device: DeviceIdentity?, roots: [Int]) -> (Int, ChordKey)? {
        for root in roots {
            if let (child, chord) = step(from: root, key, device), let index = command(at: child, device),
               table.commands[index].holdMilliseconds == nil { return (index, chord) }
        }
        return nil
    }

    /// While text input is active, keys that type text (no modifier other than
    /// Shift or AltGr) or edit it (arrows, Return, Tab, BackSpace, Delete, Home,
    /// End, Page Up/Down, with or without Shift) do not fire, unless the command
    /// has priority. F-keys and chords with Ctrl, Alt or Super still fire.
    private func blockedByTextInput(_ key: KeyEvent, _ command: Command?) -> Bool {
        guard textInputActive, command?.priorityOverTextInput != true else { return false }
        if key.chord.hasCommandModifier { return false }
        if key.producesText { return true }
        return key.keysym.isTextEditing || key.chord.keysym.isTextEditing
    }
}
