import KbdTOML
import KbdCore
import KbdKeymap
import KbdCommands

/// What the keys of a file's sections set, while it is read (and while drop-ins are merged).
struct ConfigDraft {
    var keymap = KeymapNames()
    /// The line of each `[keymap]` key, for the names' messages.
    var keymapLines: [String: Int] = [:]
    var timeout = CommandTable.defaultSequenceTimeoutMilliseconds
    var presence = PresencePolicy.auto
    var devices = DeviceFilter()
    var grabLocation: SourceLocation?
    var osk = OnScreenKeyboardSettings()
    var textInputSource = TextInputSource.auto
    var stickyKeys = false
    var hud = HudSettings()
    /// A `[hud]` key is set (check then says what the HUD does).
    var hudConfigured = false
    /// Where `[hud] sequence_delay_ms` is, for its warning.
    var hudSequenceDelayLocation: SourceLocation?
    var barEnabled: Bool?
    var portalApprove = "ask"

    init() {}

    /// The draft of a config that was read.
    init(_ c: Config) {
        keymap = c.keymap
        timeout = c.table.sequenceTimeoutMilliseconds
        presence = c.presence
        devices = c.devices
        grabLocation = c.grabLocation
        osk = c.osk
        textInputSource = c.textInputSource
        stickyKeys = c.stickyKeys
        hud = c.hud
        hudConfigured = c.hudConfigured
        hudSequenceDelayLocation = c.hudSequenceDelayLocation
        barEnabled = c.barEnabled
        portalApprove = c.portalApprove
    }

    /// Moves what the keys set into `config` (whose table already has the sequence timeout).
    func apply(to config: inout Config) {
        config.keymap = keymap
        config.presence = presence
        config.devices = devices
        config.grabLocation = grabLocation
        config.osk = osk
        config.textInputSource = textInputSource
        config.stickyKeys = stickyKeys
        config.hud = hud
        config.hudConfigured = hudConfigured
        config.hudSequenceDelayLocation = hudSequenceDelayLocation
        config.barEnabled = barEnabled
        config.portalApprove = portalApprove
    }
}

/// One key of a config section. Adding a key is adding one entry to `ConfigLoader.keys`: its
/// section and name (unknown-key messages, suggestions and the one-file-only check of drop-ins
/// come from the table), the line documenting it, how it is read and checked, and how a
/// drop-in that sets it overrides the files read before.
struct ConfigKey: Sendable {
    let section: String
    let name: String
    let doc: String
    /// Reads the value into the draft; returns the problem when the value is not valid.
    let read: @Sendable (_ value: TOMLValue, _ line: Int, _ path: String, _ draft: inout ConfigDraft) -> String?
    /// A file setting this key: its value replaces the merged one.
    let merge: @Sendable (_ merged: inout ConfigDraft, _ file: ConfigDraft) -> Void
}

extension ConfigLoader {
    /// Every key of the sections made of plain keys ([keymap], [settings], [devices], [osk],
    /// [text_input], [accessibility]). [scopes] maps app ids to scope lists, [geometry] is read
    /// by the geometry model and [[command]] by CommandFields.
    static let keys: [ConfigKey] = keymapKeys + [
        ConfigKey(section: "settings", name: "sequence_timeout_ms", doc: "how long a sequence waits for its next chord (ms)",
                  read: { value, line, _, d in
                      guard case .integer(let v) = value, v > 0, v <= 60_000 else { return "settings.sequence_timeout_ms: expected an integer from 1 to 60000" }
                      d.timeout = Int(v)
                      return nil
                  }, merge: { $0.timeout = $1.timeout }),
        ConfigKey(section: "settings", name: "presence", doc: "what counts as a hardware keyboard",
                  read: { value, _, _, d in
                      guard case .string(let name) = value, let p = PresencePolicy(rawValue: name) else {
                          return "settings.presence: expected one of \(PresencePolicy.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))"
                      }
                      d.presence = p
                      return nil
                  }, merge: { $0.presence = $1.presence }),
        deviceList("include", "devices to watch besides keyboards", \.include),
        deviceList("exclude", "devices never to watch", \.exclude),
        deviceList("internal", "keyboards that are built in", \.internal),
        deviceList("external", "keyboards that are plugged in", \.external),
        deviceList("virtual", "a program's keyboards (never count for presence)", \.virtual),
        ConfigKey(section: "devices", name: "grab", doc: "take the keyboards' keys from every other program",
                  read: { value, line, path, d in
                      guard case .boolean(let b) = value else { return "devices.grab: expected true or false" }
                      d.devices.grab = b
                      d.grabLocation = SourceLocation(path: path, line: line)
                      return nil
                  }, merge: { $0.devices.grab = $1.devices.grab; $0.grabLocation = $1.grabLocation }),
        ConfigKey(section: "osk", name: "backend", doc: "which on-screen keyboard the agent drives",
                  read: { value, _, _, d in
                      guard case .string(let name) = value, let b = OnScreenKeyboardSettings.Backend(rawValue: name) else {
                          return "osk.backend: expected one of \(OnScreenKeyboardSettings.Backend.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))"
                      }
                      d.osk.backend = b
                      return nil
                  }, merge: { $0.osk.backend = $1.osk.backend }),
        program("on_present", "run when a hardware keyboard comes", \.onPresent),
        program("on_absent", "run when the last one leaves", \.onAbsent),
        ConfigKey(section: "text_input", name: "source", doc: "where the agent learns a text field has the focus",
                  read: { value, _, _, d in
                      if case .string(let name) = value, let s = TextInputSource(rawValue: name) {
                          d.textInputSource = s
                          return nil
                      }
                      let names = TextInputSource.allCases.map(\.rawValue)
                      let found = if case .string(let name) = value { "'\(name)'\(hint(name, names))" } else { value.kindDescription }
                      return "text_input.source: expected one of \(names.map { "\"\($0)\"" }.joined(separator: ", ")), found \(found)"
                  }, merge: { $0.textInputSource = $1.textInputSource }),
        ConfigKey(section: "accessibility", name: "sticky_keys", doc: "a modifier tapped alone latches for the next key",
                  read: { value, _, _, d in
                      guard case .boolean(let b) = value else { return "accessibility.sticky_keys: expected true or false, found \(value.kindDescription)" }
                      d.stickyKeys = b
                      return nil
                  }, merge: { $0.stickyKeys = $1.stickyKeys }),
        ConfigKey(section: "hud", name: "enabled", doc: "the discoverability HUD shows at all (hold, action = \"hud\", pending sequences)",
                  read: { value, _, _, d in
                      guard case .boolean(let b) = value else { return "hud.enabled: expected true or false, found \(value.kindDescription)" }
                      d.hud.enabled = b
                      d.hudConfigured = true
                      return nil
                  }, merge: { $0.hud.enabled = $1.hud.enabled; $0.hudConfigured = true }),
        ConfigKey(section: "hud", name: "hold", doc: "the modifier held alone to show the HUD: Ctrl, Alt, Shift, Super or AltGr",
                  read: { value, _, _, d in
                      let names = HudSettings.HoldModifier.allCases.map(\.rawValue)
                      if case .string(let name) = value, let m = ModifierSet(name: name),
                         let hold = HudSettings.HoldModifier.allCases.first(where: { ModifierSet(name: $0.rawValue) == m }) {
                          d.hud.hold = hold
                          d.hudConfigured = true
                          return nil
                      }
                      let found = if case .string(let name) = value { "'\(name)'\(hint(name, ModifierSet.allNames))" } else { value.kindDescription }
                      return "hud.hold: expected one of \(names.map { "\"\($0)\"" }.joined(separator: ", ")), found \(found)"
                  }, merge: { $0.hud.hold = $1.hud.hold; $0.hudConfigured = true }),
        ConfigKey(section: "hud", name: "delay_ms", doc: "how long the hold modifier is held alone before the HUD shows (ms)",
                  read: { value, _, _, d in
                      guard case .integer(let v) = value, v >= 100, v <= 10_000 else {
                          return "hud.delay_ms: expected an integer from 100 to 10000 (default \(HudSettings.defaultDelayMilliseconds)), found \(numberOrKind(value))"
                      }
                      d.hud.delayMilliseconds = Int(v)
                      d.hudConfigured = true
                      return nil
                  }, merge: { $0.hud.delayMilliseconds = $1.hud.delayMilliseconds; $0.hudConfigured = true }),
        ConfigKey(section: "hud", name: "sequence_delay_ms", doc: "how long a sequence prefix waits before the HUD shows what can follow it (ms)",
                  read: { value, line, path, d in
                      guard case .integer(let v) = value, v >= 0, v <= 60_000 else {
                          return "hud.sequence_delay_ms: expected an integer from 0 to 60000 (default \(HudSettings.defaultSequenceDelayMilliseconds)), found \(numberOrKind(value))"
                      }
                      d.hud.sequenceDelayMilliseconds = Int(v)
                      d.hudConfigured = true
                      d.hudSequenceDelayLocation = SourceLocation(path: path, line: line)
                      return nil
                  }, merge: { $0.hud.sequenceDelayMilliseconds = $1.hud.sequenceDelayMilliseconds; $0.hudSequenceDelayLocation = $1.hudSequenceDelayLocation; $0.hudConfigured = true }),
        ConfigKey(section: "hud", name: "extend_sequence_timeout",
                  doc: "while a drawn HUD shows a prefix's continuations, the sequence waits another sequence_timeout_ms (default false)",
                  read: { value, _, _, d in
                      guard case .boolean(let b) = value else { return "hud.extend_sequence_timeout: expected true or false, found \(value.kindDescription)" }
                      d.hud.extendSequenceTimeout = b
                      d.hudConfigured = true
                      return nil
                  }, merge: { $0.hud.extendSequenceTimeout = $1.hud.extendSequenceTimeout; $0.hudConfigured = true }),
        ConfigKey(section: "bar", name: "enabled", doc: "the agent starts the shortcuts bar and HUD (default: where the compositor has layer-shell)",
                  read: { value, _, _, d in
                      guard case .boolean(let b) = value else { return "bar.enabled: expected true or false, found \(value.kindDescription)" }
                      d.barEnabled = b
                      return nil
                  }, merge: { $0.barEnabled = $1.barEnabled }),
        ConfigKey(section: "portal", name: "approve",
                  doc: "an app's global shortcut through the desktop portal: \"ask\" (a dialog, the default), \"always\" (its preferred chord when free) or \"never\"",
                  read: { value, _, _, d in
                      guard case .string(let s) = value, ["ask", "always", "never"].contains(s) else {
                          return "portal.approve: expected \"ask\", \"always\" or \"never\", found \(value.kindDescription)"
                      }
                      d.portalApprove = s
                      return nil
                  }, merge: { $0.portalApprove = $1.portalApprove }),
    ]

    /// `5` for an integer, else what the value is (`a string`).
    static func numberOrKind(_ value: TOMLValue) -> String {
        if case .integer(let v) = value { return String(v) }
        return value.kindDescription
    }

    /// [keymap]: strings, checked together once the section is read (ConfigLoader.interpret).
    static let keymapKeys: [ConfigKey] = [
        ("rules", "the xkb rules (evdev)", \KeymapNames.rules), ("model", "the keyboard model", \.model),
        ("layout", "one layout or several, comma-separated", \.layout), ("variant", "the layouts' variants", \.variant),
        ("options", "xkb options, comma-separated", \.options),
    ].map { name, doc, field in
        ConfigKey(section: "keymap", name: name, doc: doc, read: { value, line, _, d in
            d.keymapLines[name] = line
            guard case .string(let s) = value else { return "keymap.\(name): expected a string, found \(value.kindDescription)" }
            d.keymap[keyPath: field] = s
            return nil
        }, merge: { $0.keymap[keyPath: field] = $1.keymap[keyPath: field] })
    }

    private static func deviceList(_ name: String, _ doc: String, _ field: any WritableKeyPath<DeviceFilter, [String]> & Sendable) -> ConfigKey {
        ConfigKey(section: "devices", name: name, doc: doc, read: { value, _, _, d in
            guard let list = stringArray(value) else { return "devices.\(name): expected an array of device names or \"vendor:product\" ids" }
            d.devices[keyPath: field] = list
            return nil
        }, merge: { $0.devices[keyPath: field] = $1.devices[keyPath: field] })
    }

    private static func program(_ name: String, _ doc: String, _ field: any WritableKeyPath<OnScreenKeyboardSettings, [String]> & Sendable) -> ConfigKey {
        ConfigKey(section: "osk", name: name, doc: doc, read: { value, _, _, d in
            guard let list = stringArray(value), !list.isEmpty, !list[0].isEmpty else {
                return "osk.\(name): expected a non-empty array of strings: the program and its arguments (no shell)"
            }
            d.osk[keyPath: field] = list
            return nil
        }, merge: { $0.osk[keyPath: field] = $1.osk[keyPath: field] })
    }

    /// The sections made of the keys above, in the order they are read.
    static let keyedSections = ["keymap", "settings", "devices", "osk", "text_input", "accessibility", "hud", "bar", "portal"]

    /// Reads one keyed section's table into the draft: each key through its entry, an unknown
    /// key with the nearest names.
    static func readSection(_ section: String, _ t: TOMLTable, path: String, into draft: inout ConfigDraft, problem: (Int, String) -> Void) {
        let known = keys.filter { $0.section == section }
        for e in t.entries {
            guard let key = known.first(where: { $0.name == e.key }) else {
                let names = known.map(\.name)
                problem(e.line, "unknown key '\(section).\(e.key)'\(hint(e.key, names)); expected \(listed(names))")
                continue
            }
            if let message = key.read(e.value, e.line, path, &draft) { problem(e.line, message) }
        }
    }

    /// `a`, `a or b`, `a, b or c`.
    static func listed(_ names: [String]) -> String {
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}
