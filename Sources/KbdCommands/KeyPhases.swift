public import KbdCore
public import KbdKeymap

/// When a command fires (the `phase` of `command` events; a contract, issue 36).
public enum KeyPhase: String, Sendable, Equatable, Hashable, CaseIterable {
    /// At the chord's press (every command without phases; also a plain command that a
    /// `hold_ms` command on the same chord deferred to an early release).
    case press
    /// At the release of the chord's key: `on = "release"`, or `run_on_release`.
    case release
    /// `hold_ms` after the press, the key still down.
    case hold
    /// A modifier alone (`keys = "Super"`) released within `tap_ms`, no other key between.
    case tap
    /// The kernel's key repeat (`repeat = true`, at most once per `cooldown_ms`).
    case `repeat`
}

/// A modifier key pressed alone: no chord modifier down and no other key down when it went
/// down, and no key pressed since. The one tracker behind a tap (`keys = "Super"`, the
/// router's) and the discoverability HUD's hold (`[hud] hold`, HudState's): both ask it the
/// same questions, each with its own time limit.
public struct LoneModifier: Sendable, Equatable {
    public var device: DeviceID
    public var code: UInt16
    public var keysym: Keysym
    public var pressed: EventTime
    /// When the holder wants to know it is still held (the HUD's delay); nil: none (or passed).
    public var deadline: EventTime?

    /// The tracker for `key` if it is a press of a modifier that `modifier` names, with no
    /// chord modifier down (`othersHeld`: another key of the device is down).
    public static func begin(_ key: KeyEvent, modifier: HudSettings.HoldModifier, othersHeld: @autoclosure () -> Bool,
                             deadline: EventTime? = nil) -> LoneModifier? {
        guard key.state == .press, key.isModifierKey, modifier.matches(key.keysym), key.modifiers.isDisjoint(with: .chordModifiers),
              !othersHeld() else { return nil }
        return LoneModifier(device: key.device, code: key.code, keysym: key.keysym, pressed: key.time, deadline: deadline)
    }

    /// Whether `key` is this modifier's own key (its release, its repeat, a press again).
    public func isOwnKey(_ key: KeyEvent) -> Bool { key.device == device && key.code == code }

    /// How long it was down when `key` (its release) came.
    public func heldMilliseconds(at time: EventTime) -> Int { Int((time.microseconds - pressed.microseconds) / 1000) }
}

/// The key phases of one router's table: what a key that fired (or is about to fire) a
/// command still has to do after its press. Pure like the router: time comes from the
/// events and from `expire(at:)`, which the caller calls at `nextDeadline` (the daemon's
/// loop sleeps until it: the pipeline's deadline; replay and the tests pass the events'
/// own times, a manual clock).
///
/// - `on = "release"`: nothing at the press; the command at the key's release.
/// - `hold_ms`: at `press + hold_ms`, if the key is still down, the hold command (phase
///   hold); released earlier, the plain command on the same chord fires then (phase press).
/// - a modifier alone: its release within `tap_ms`, no key pressed meanwhile (phase tap).
/// - `repeat` with `cooldown_ms`: the key's repeats fire, at most once per cooldown.
/// - `run_on_release` (even empty): after it fired, the key's release fires it again with
///   phase release (its `run_on_release` runs).
public struct KeyPhases: Sendable {
    /// A key down whose command has something left to do.
    struct Held: Sendable {
        var device: DeviceID
        var code: UInt16
        var chord: ChordKey
        /// The command that fired at the press or at the hold (nil: nothing fired yet).
        var fired: Int?
        /// The command that fires at the release: on = "release" (nil: none).
        var atRelease: Int?
        /// A `hold_ms` command waiting for its deadline, and the plain command its early
        /// release fires instead.
        var hold: Int?
        var holdDeadline: EventTime?
        var plain: Int?
        /// The last time it fired (repeat cooldown).
        var lastFired: EventTime?
    }

    var held: [Held] = []
    /// A modifier pressed alone that a tap command of the table may want.
    var lone: LoneModifier?

    /// The earliest hold deadline.
    var nextDeadline: EventTime? { held.lazy.compactMap(\.holdDeadline).min() }

    var isEmpty: Bool { held.isEmpty && lone == nil }

    func index(of key: KeyEvent) -> Int? { held.firstIndex { $0.device == key.device && $0.code == key.code } }
}

extension ChordRouter {
    /// A fired (or deferred) command of a table with phases, at the press of `key` typed on
    /// `device`: what is left for later is kept in `phases`. Returns the outputs of the press
    /// itself. A command limited to the keyboard wins over the chord's others (issue 37).
    mutating func pressPhased(node: Int, key: KeyEvent, _ device: DeviceIdentity?, chord: ChordKey, into out: inout [Output]) {
        var plain: Int?
        var hold: Int?
        // The keyboard's own commands (a plain one and a hold, each at most once) or else the chord's.
        let mine = device.map { d in table.nodes[node].deviceCommands.filter { d.matches(table.commands[$0].devices) } } ?? []
        if !mine.isEmpty {
            hold = mine.first { table.commands[$0].holdMilliseconds != nil }
            plain = mine.first { table.commands[$0].holdMilliseconds == nil }
        } else if device?.grabbed != true {
            plain = table.nodes[node].command
            hold = table.nodes[node].holdCommand
        }
        var held = KeyPhases.Held(device: key.device, code: key.code, chord: chord)
        if let hold, let ms = table.commands[hold].holdMilliseconds {
            held.hold = hold
            held.holdDeadline = key.time.adding(milliseconds: ms)
            held.plain = plain
        } else if let index = plain {
            let command = table.commands[index]
            if command.onRelease {
                held.atRelease = index
            } else {
                out.append(.command(time: key.time, device: key.device, command: command, chord: chord, phase: .press))
                guard command.runOnRelease != nil || command.repeat else { return }
                held.fired = index
                held.lastFired = key.time
            }
        } else {
            return
        }
        if let i = phases.index(of: key) { phases.held.remove(at: i) }
        phases.held.append(held)
        updateDeadline()
    }

    /// A release, a repeat or a modifier key, for a table with phases: true when the phases
    /// took it (a repeat of a key they follow), false to route it as usual.
    mutating func phaseKey(_ key: KeyEvent, _ device: DeviceIdentity?, into out: inout [Output]) -> Bool {
        if isModifierKey(key) {
            modifierKey(key, device, into: &out)
            return true
        }
        if key.state == .press {
            phases.lone = nil
            return false
        }
        guard let i = phases.index(of: key) else { return key.state == .release }
        if key.state == .repeat {
            let h = phases.held[i]
            // A hold still waiting fires nothing on repeats; a fired repeat command, at most once per cooldown.
            guard h.holdDeadline == nil, let index = h.fired, table.commands[index].repeat else { return true }
            let command = table.commands[index]
            if let cooldown = command.cooldownMilliseconds, let last = h.lastFired, key.time < last.adding(milliseconds: cooldown) { return true }
            phases.held[i].lastFired = key.time
            out.append(.command(time: key.time, device: key.device, command: command, chord: h.chord, phase: .repeat))
            return true
        }
        release(phases.held.remove(at: i), at: key.time, into: &out)
        updateDeadline()
        return true
    }

    /// What a held key's release fires.
    private func release(_ h: KeyPhases.Held, at time: EventTime, into out: inout [Output]) {
        if h.holdDeadline != nil, let plain = h.plain {
            // Released before its hold: the plain command on the chord, now.
            let command = table.commands[plain]
            out.append(.command(time: time, device: h.device, command: command, chord: h.chord, phase: command.onRelease ? .release : .press))
            if command.runOnRelease != nil, !command.onRelease {
                out.append(.command(time: time, device: h.device, command: command, chord: h.chord, phase: .release))
            }
        } else if let index = h.atRelease {
            out.append(.command(time: time, device: h.device, command: table.commands[index], chord: h.chord, phase: .release))
        } else if let index = h.fired, table.commands[index].runOnRelease != nil {
            out.append(.command(time: time, device: h.device, command: table.commands[index], chord: h.chord, phase: .release))
        }
    }

    /// A modifier key: a press may start a tap; its release within `tap_ms` fires it.
    private mutating func modifierKey(_ key: KeyEvent, _ device: DeviceIdentity?, into out: inout [Output]) {
        switch key.state {
        case .repeat:
            return
        case .press:
            phases.lone = nil
            guard table.hasTaps, let modifier = HudSettings.HoldModifier.allCases.first(where: { $0.matches(key.keysym) }),
                  tap(modifier, device) != nil else { return }
            phases.lone = LoneModifier.begin(key, modifier: modifier, othersHeld: !phases.held.isEmpty)
        case .release:
            guard let lone = phases.lone, lone.isOwnKey(key) else { return }
            phases.lone = nil
            guard let modifier = HudSettings.HoldModifier.allCases.first(where: { $0.matches(lone.keysym) }), let index = tap(modifier, device),
                  lone.heldMilliseconds(at: key.time) < table.commands[index].tapMilliseconds else { return }
            let command = table.commands[index]
            out.append(.command(time: key.time, device: key.device, command: command, chord: command.keys[0], phase: .tap))
        }
    }

    /// The tap command of `modifier` for `device` in the first active scope that has one.
    private func tap(_ modifier: HudSettings.HoldModifier, _ device: DeviceIdentity?) -> Int? {
        for root in roots { if let index = table.tap(modifier, root: root, device: device) { return index } }
        return nil
    }

    /// Fires the holds due at or before `time`.
    mutating func expirePhases(at time: EventTime, into out: inout [Output]) {
        for i in phases.held.indices {
            guard let due = phases.held[i].holdDeadline, due <= time, let hold = phases.held[i].hold else { continue }
            phases.held[i].holdDeadline = nil
            phases.held[i].fired = hold
            phases.held[i].lastFired = due
            let h = phases.held[i]
            out.append(.command(time: due, device: h.device, command: table.commands[hold], chord: h.chord, phase: .hold))
        }
        // Nothing left to do for a hold without run_on_release or repeat: forget it.
        phases.held.removeAll { h in
            guard h.holdDeadline == nil, h.atRelease == nil, let fired = h.fired else { return false }
            return table.commands[fired].runOnRelease == nil && !table.commands[fired].repeat
        }
        updateDeadline()
    }

    /// `device` went away: its held keys are released (their release phases fire), a tap ends.
    mutating func detachPhases(_ device: DeviceID, at time: EventTime, into out: inout [Output]) {
        if phases.lone?.device == device { phases.lone = nil }
        guard phases.held.contains(where: { $0.device == device }) else { return }
        for h in phases.held where h.device == device { release(h, at: time, into: &out) }
        phases.held.removeAll { $0.device == device }
        updateDeadline()
    }
}

extension Command {
    /// The key-phase keys of a command as written (a config's `[[command]]`, a `register`ed
    /// command's object), before `CommandFields` checks them.
    public struct PhaseKeys: Sendable, Equatable {
        /// `on`: "press" (the default) or "release".
        public var on: String?
        public var holdMilliseconds: Int?
        public var tapMilliseconds: Int?
        public var cooldownMilliseconds: Int?
        /// `run_on_release`; a registered command's is empty (its agent keeps the programs).
        public var runOnRelease: [String]?

        public init(on: String? = nil, holdMilliseconds: Int? = nil, tapMilliseconds: Int? = nil, cooldownMilliseconds: Int? = nil,
                    runOnRelease: [String]? = nil) {
            self.on = on
            self.holdMilliseconds = holdMilliseconds
            self.tapMilliseconds = tapMilliseconds
            self.cooldownMilliseconds = cooldownMilliseconds
            self.runOnRelease = runOnRelease
        }

        /// The keys of `command` (what its agent registers).
        public init(of command: Command) {
            self.init(on: command.onRelease ? "release" : nil, holdMilliseconds: command.holdMilliseconds,
                      tapMilliseconds: command.tapModifier != nil && command.tapMilliseconds != Command.defaultTapMilliseconds ? command.tapMilliseconds : nil,
                      cooldownMilliseconds: command.cooldownMilliseconds, runOnRelease: command.runOnRelease.map { _ in [] })
        }

        public var isEmpty: Bool { self == PhaseKeys() }
    }
}
