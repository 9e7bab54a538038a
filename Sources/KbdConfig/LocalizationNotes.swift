public import KbdCommands
public import KbdKeymap
import KbdCore

/// Issue 37: what `check` says about `localize` and `mirror` on the keymap it checks: each
/// chord the keymap's layouts cannot type as written and the key it fires from instead, and
/// each mirrored chord on a right-to-left layout, with the command's file and line.
extension ConfigLoader {
    /// The positions of `keymap`'s keys on the US layout (none when the US layout cannot be compiled).
    static func usPositions(_ keymap: XkbKeymap) -> KeyPositions {
        guard let us = try? XkbKeymap(context: keymap.context, names: KeymapNames(layout: "us", variant: "", options: "")) else { return .none }
        return KeyPositions(keymap: keymap, reference: us)
    }

    public static func localizationNotes(_ table: CommandTable, keymap: XkbKeymap) -> [ConfigError.Problem] {
        guard table.commands.contains(where: { $0.localize || $0.mirror }) else { return [] }
        let positions = usPositions(keymap)
        // Each layout chords are read in once (us,ru reads both in us).
        var layouts: [Int] = []
        for l in 0..<keymap.layoutCount where !layouts.contains(keymap.chordLayout(active: l)) { layouts.append(keymap.chordLayout(active: l)) }
        var out: [ConfigError.Problem] = []
        for c in table.commands {
            let head = "keys = '\(c.keysText)' (command '\(c.id)'): "
            if c.localize {
                for layout in layouts {
                    for chord in c.keys {
                        guard let loc = ChordLocalization(chord, keymap: keymap, layout: layout, positions: positions) else { continue }
                        out.append(.init(location: c.location, message: head + "localized: " + loc.explanation))
                    }
                }
            }
            guard c.mirror else { continue }
            for layout in 0..<keymap.layoutCount where keymap.rightToLeftLayouts[layout] {
                for chord in c.keys {
                    guard let m = chord.mirrored else { continue }
                    out.append(.init(location: c.location, message: head + "mirrored: while \(keymap.layoutNames[layout]) (right to left) is active, it fires from \(m) instead of \(chord); mirror = false keeps it literal"))
                }
            }
        }
        return out
    }

    /// Each `[[device]]` with its own `[device.keymap]`: a note saying so, and the
    /// localization notes of the commands bound to it (`devices` naming one of its `match`
    /// entries) on that keymap. A keymap libxkbcommon cannot compile is an error, with the
    /// `[[device]]`'s file and line.
    public static func deviceKeymapNotes(_ config: Config, base: XkbKeymap) -> (notes: [ConfigError.Problem], errors: [ConfigError.Problem]) {
        var notes: [ConfigError.Problem] = [], errors: [ConfigError.Problem] = []
        for (i, own) in config.deviceKeymaps.enumerated() {
            guard let own, i < config.devices.dedicated.count else { continue }
            let d = config.devices.dedicated[i]
            let location = SourceLocation(path: d.path, line: d.line)
            let what = "[[device]] match = \(d.match.map { "\"\($0)\"" }.joined(separator: ", "))"
            let names = own.forDevice(base: base.names)
            let keymap: XkbKeymap
            do { keymap = try XkbKeymap(context: base.context, names: names) } catch {
                errors.append(.init(location: location, message: "\(what): [device.keymap] does not compile (\(names)): \(error.message)"))
                continue
            }
            notes.append(.init(location: location, message: "\(what): its keys read with its own keymap, layout \(names.layout ?? "") (\(keymap.layoutNames.joined(separator: ", "))), not the desktop's"))
            let bound = config.table.commands.filter { c in c.devices.contains { d.match.contains($0) } }
            guard !bound.isEmpty, let table = try? CommandTable(commands: bound) else { continue }
            notes += localizationNotes(table, keymap: keymap).map { .init(location: $0.location, message: "on \(what): " + $0.message) }
        }
        return (notes, errors)
    }
}
