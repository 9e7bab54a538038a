public import KbdCore
public import KbdKeymap

/// How a pad's commands show on the pad's own keycaps (issue 37): a keyboard with its own
/// `[device.keymap]` reads with that keymap, never the desktop's, so a command limited to it
/// (`devices`) shows as that keymap's keycaps (`Ctrl+Ü` for `Ctrl+bracketleft` on a `de`
/// pad) in `commands`, the HUD and the bar. Made when the tables or keymaps change (the
/// pads' keymaps at the pipeline's start), never per key.
///
/// The rule: a command whose every `devices` entry is a `match` entry of a `[[device]]`
/// with its own keymap (the first `[[device]]` naming it, as the service picks), and whose
/// keymaps all show chords alike, shows that keymap's keycaps at its first layout; any
/// other command (no `devices`, an entry no `[[device]]` names or one without a keymap,
/// pads whose keymaps differ) shows the active keymap's.
public struct PadKeycaps: Sendable, Equatable {
    /// Per `match` entry of a `[[device]]`: its keymap's keycaps, nil when it has none.
    let byPattern: [DevicePattern.Kind: ChordKeycaps?]

    /// No pad with a keymap of its own.
    public static let none = PadKeycaps(byPattern: [:])

    init(byPattern: [DevicePattern.Kind: ChordKeycaps?]) {
        self.byPattern = byPattern
    }

    /// `dedicated` (the `[[device]]`s in order) and `keymaps`, the compiled `[device.keymap]`
    /// of each by index (absent: none); an entry two `[[device]]`s name is the first's.
    public init(dedicated: [DedicatedDevice], keymaps: [Int: XkbKeymap]) {
        var map: [DevicePattern.Kind: ChordKeycaps?] = [:]
        for (i, d) in dedicated.enumerated() {
            let caps = keymaps[i].map { ChordKeycaps(keymap: $0, layout: 0, positions: $0.keyPositions) }
            for p in d.match where map[p.kind] == nil { map[p.kind] = .some(caps) }
        }
        byPattern = map.values.contains { $0 != nil } ? map : [:]
    }

    /// Compiles each `[device.keymap]` (`names`, by index of `dedicated`) in `base`'s context
    /// as the service does (`kbd-commandd commands`); one that does not compile shows nothing
    /// of its own (`check` reports it).
    public init(dedicated: [DedicatedDevice], names: [KeymapNames?], base: XkbKeymap) {
        var keymaps: [Int: XkbKeymap] = [:]
        for (i, own) in names.enumerated() {
            guard let own, let k = try? XkbKeymap(context: base.context, names: own.forDevice(base: base.names)) else { continue }
            keymaps[i] = k
        }
        self.init(dedicated: dedicated, keymaps: keymaps)
    }

    public var isEmpty: Bool { byPattern.isEmpty }

    /// The keycaps of the pads `command` is limited to when the rule above holds, else nil.
    public func own(for command: Command) -> ChordKeycaps? {
        guard !byPattern.isEmpty, let first = command.devices.first, case .some(.some(let caps)) = byPattern[first.kind] else { return nil }
        for p in command.devices.dropFirst() {
            guard case .some(.some(let other)) = byPattern[p.kind], other == caps else { return nil }
        }
        return caps
    }

    /// The keycaps `command` shows with: its pads' own when the rule above holds, else `active`.
    public func keycaps(for command: Command, active: ChordKeycaps) -> ChordKeycaps { own(for: command) ?? active }

    /// `command`'s keys as its keycaps show them, or nil when shown as written.
    public func shown(_ command: Command, active: ChordKeycaps) -> String? {
        keycaps(for: command, active: active).shown(command.keys, localize: command.localize, mirror: command.mirror)
    }
}
