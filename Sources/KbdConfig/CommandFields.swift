public import KbdCore
public import KbdCommands
import KbdKeymap
import KbdSystem

/// The rules of one command's fields, shared by a config's `[[command]]` and a table a
/// user's agent registers over the control socket, so both are held to the same: a
/// non-empty id and keys, a title and scope that are not empty when given, one scope name
/// without commas or spaces, keys that parse as a chord or a sequence, and `run` (config
/// only) a non-empty program and arguments. `group` and `discoverability_title` (what the
/// HUD and the bar show) are short, non-empty and free of control characters; a command with
/// `action = "hud"` runs nothing.
public enum CommandFields {
    /// At most this many characters in a `group` (a heading) and a `discoverability_title`.
    public static let maxGroupLength = 40
    public static let maxDiscoverabilityTitleLength = 80

    /// Builds the command, or reports each problem with the field it is about (`id`,
    /// `title`, `keys`, `scope`, `run`) and returns nil.
    public static func command(id: String?, title: String?, keys: String?, scope: String?, repeat: Bool, priorityOverTextInput: Bool,
                               run: [String] = [], group: String? = nil, discoverabilityTitle: String? = nil, action: Command.Action = .run,
                               phases: Command.PhaseKeys = Command.PhaseKeys(), localize: Bool = true, mirror: Bool = false,
                               devices: [String]? = nil,
                               location: SourceLocation, problem: (_ field: String, _ message: String) -> Void) -> Command? {
        var ok = true
        var patterns: [DevicePattern] = []
        if let devices {
            if devices.isEmpty {
                problem("devices", devicesExpected)
                ok = false
            }
            for text in devices {
                do { patterns.append(try DevicePattern(parsing: text)) } catch {
                    problem("devices", "devices: \(error.message)")
                    ok = false
                }
            }
        }
        func nonEmpty(_ field: String, _ value: String?, required: Bool) -> String? {
            guard let value else {
                if required { problem(field, "[[command]] needs '\(field)'"); ok = false }
                return nil
            }
            guard !value.isEmpty else {
                problem(field, "\(field): expected a non-empty string, found an empty string")
                ok = false
                return nil
            }
            return value
        }
        let id = nonEmpty("id", id, required: true)
        let title = nonEmpty("title", title, required: false)
        let keysText = nonEmpty("keys", keys, required: true)
        let scope = nonEmpty("scope", scope, required: false)
        var chords: [ChordKey] = []
        // A modifier alone (`keys = "Super"`) is a tap command (issue 36).
        let tap = keysText.flatMap(tapModifier(named:))
        if let tap {
            chords = [ChordKey(modifiers: [], keysym: tap.keysym)]
        } else if let keysText {
            do { chords = try ChordKey.parseSequence(keysText) } catch {
                problem("keys", "keys = \(error.description)")
                ok = false
            }
        }
        if let scope, scope.contains(where: { $0 == "," || $0 == " " }) {
            problem("scope", "scope: expected one scope name without commas or spaces, found '\(scope)'")
            ok = false
        }
        // What the HUD and the bar show: a heading and a label, one short line each.
        func shown(_ field: String, _ value: String?, limit: Int, what: String) -> String? {
            guard let value = nonEmpty(field, value, required: false) else { return nil }
            if value.containsControlCharacters {
                problem(field, "\(field): expected \(what) without control characters (line breaks, tabs, escapes), found '\(value.escapingControlCharacters)'")
                ok = false
            } else if value.count > limit {
                problem(field, "\(field): expected \(what) of at most \(limit) characters, found \(value.count)")
                ok = false
            }
            return value
        }
        let group = shown("group", group, limit: maxGroupLength, what: "a group heading such as \"Edit\"")
        let discoverabilityTitle = shown("discoverability_title", discoverabilityTitle, limit: maxDiscoverabilityTitleLength,
                                         what: "a title for the HUD such as \"Save File\"")
        if action == .hud, !run.isEmpty {
            problem("run", "run: a command with action = \"hud\" toggles the discoverability HUD and runs nothing; remove run, or action to run it")
            ok = false
        }
        let checked = checkPhases(phases, tap: tap, keys: keysText, repeat: `repeat`, action: action) { field, message in
            problem(field, message)
            ok = false
        }
        guard ok, let id, let keysText else { return nil }
        var command = Command(id: id, title: title ?? id, keys: chords, keysText: keysText, scope: scope ?? CommandTable.globalScope,
                              repeat: `repeat`, priorityOverTextInput: priorityOverTextInput, run: run, location: location,
                              group: group, discoverabilityTitle: discoverabilityTitle, action: action)
        command.tapModifier = tap
        command.onRelease = checked
        command.holdMilliseconds = phases.holdMilliseconds
        command.tapMilliseconds = phases.tapMilliseconds ?? Command.defaultTapMilliseconds
        command.cooldownMilliseconds = phases.cooldownMilliseconds
        command.runOnRelease = phases.runOnRelease
        command.localize = localize
        command.mirror = mirror
        command.devices = patterns
        return command
    }

    /// What `devices` must be, when it is not.
    public static let devicesExpected = "devices: expected a non-empty array of strings: vendor:product ids in hex (\"046d:c52b\") or device name globs (\"Keychron*\"); 'kbd-commandd devices' lists both"

    /// The longest `hold_ms`, `tap_ms` and `cooldown_ms`: a minute.
    public static let maxPhaseMilliseconds = 60000

    /// The modifier that `text` names alone (`Super`, `Win`, `ctrl`), nil for anything else.
    static func tapModifier(named text: String) -> HudSettings.HoldModifier? {
        guard let m = ModifierSet(name: text) else { return nil }
        return HudSettings.HoldModifier.allCases.first { ModifierSet(name: $0.rawValue) == m }
    }

    /// The key phases' rules: each key alone, and the combinations that mean nothing.
    private static func checkPhases(_ p: Command.PhaseKeys, tap: HudSettings.HoldModifier?, keys: String?, repeat: Bool, action: Command.Action,
                                    problem: (_ field: String, _ message: String) -> Void) -> Bool {
        var onRelease = false
        if let on = p.on {
            if on == "release" { onRelease = true } else if on != "press" {
                let near = NearestNames.nearest(to: on, in: ["press", "release"], limit: 1)
                problem("on", "on: expected \"press\" (the default) or \"release\" (fires when the chord's key is released), found '\(on.escapingControlCharacters)'\(near.isEmpty ? "" : " (did you mean \(NearestNames.list(near))?)")")
            }
        }
        func range(_ field: String, _ value: Int?, _ what: String) {
            guard let value, !(1...maxPhaseMilliseconds).contains(value) else { return }
            problem(field, "\(field) = \(value): expected a whole number of milliseconds from 1 to \(maxPhaseMilliseconds) (\(what))")
        }
        range("hold_ms", p.holdMilliseconds, "how long the chord is held before the command fires")
        range("tap_ms", p.tapMilliseconds, "a release sooner than this after the press is a tap")
        range("cooldown_ms", p.cooldownMilliseconds, "the key's repeats fire at most once per this long")
        if p.tapMilliseconds != nil, tap == nil {
            problem("tap_ms", "tap_ms: keys = '\((keys ?? "").escapingControlCharacters)' is not a modifier alone; tap_ms is for a modifier tapped alone, such as keys = \"Super\" (Ctrl, Alt, Shift, Super or AltGr)")
        }
        if p.cooldownMilliseconds != nil, !`repeat` {
            problem("cooldown_ms", "cooldown_ms: limits how often the key's repeats fire, and this command does not fire on repeats; add repeat = true, or remove cooldown_ms")
        }
        if let tap {
            // A tap fires once, at the release of a modifier pressed alone: nothing else applies.
            for (field, set) in [("on", p.on != nil), ("hold_ms", p.holdMilliseconds != nil), ("repeat", `repeat`), ("run_on_release", p.runOnRelease != nil)] where set {
                problem(field, "\(field): keys = \"\(tap.rawValue)\" alone fires once, when \(tap.rawValue) is tapped alone (within tap_ms); \(field) does not apply to it")
            }
        }
        if onRelease, p.holdMilliseconds != nil {
            problem("hold_ms", "hold_ms: a command with on = \"release\" fires at the release, a hold while the key is still down; keep one of them")
        }
        if onRelease, p.runOnRelease != nil {
            problem("run_on_release", "run_on_release: a command with on = \"release\" already fires at the release; put the program in run, or remove on")
        }
        if action == .hud, p.runOnRelease != nil || p.cooldownMilliseconds != nil {
            problem(p.runOnRelease != nil ? "run_on_release" : "cooldown_ms", "\(p.runOnRelease != nil ? "run_on_release" : "cooldown_ms"): a command with action = \"hud\" toggles the HUD once per firing; remove it")
        }
        return onRelease
    }
}
