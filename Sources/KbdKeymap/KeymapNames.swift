/// Rules, model, layout, variant and options: the names xkbcommon compiles a keymap from.
public struct KeymapNames: Sendable, Hashable, CustomStringConvertible {
    public var rules: String?
    public var model: String?
    public var layout: String?
    public var variant: String?
    public var options: String?

    public init(rules: String? = nil, model: String? = nil, layout: String? = nil, variant: String? = nil, options: String? = nil) {
        self.rules = rules
        self.model = model
        self.layout = layout
        self.variant = variant
        self.options = options
    }

    /// Fills every unset field from `fallback`.
    public func overlaying(_ fallback: KeymapNames) -> KeymapNames {
        KeymapNames(
            rules: rules ?? fallback.rules, model: model ?? fallback.model, layout: layout ?? fallback.layout,
            variant: variant ?? fallback.variant, options: options ?? fallback.options)
    }

    /// The `XKB_DEFAULT_*` variables of `environment` (empty values count as unset).
    public static func fromEnvironment(_ environment: [String: String]) -> KeymapNames {
        func value(_ key: String) -> String? {
            guard let v = environment[key], !v.isEmpty else { return nil }
            return v
        }
        return KeymapNames(
            rules: value("XKB_DEFAULT_RULES"), model: value("XKB_DEFAULT_MODEL"), layout: value("XKB_DEFAULT_LAYOUT"),
            variant: value("XKB_DEFAULT_VARIANT"), options: value("XKB_DEFAULT_OPTIONS"))
    }

    /// The built-in default: evdev rules, pc105, us.
    public static let builtIn = KeymapNames(rules: "evdev", model: "pc105", layout: "us", variant: "", options: "")

    /// Whether no field is set.
    public var isEmpty: Bool { rules == nil && model == nil && layout == nil && variant == nil && options == nil }

    /// Whether the system's keyboard configuration decides: nothing on the command line, no
    /// `[keymap]` in the config and no `XKB_DEFAULT_*` names a thing.
    public static func usesSystem(commandLine: KeymapNames, config: KeymapNames, environment: [String: String]) -> Bool {
        commandLine.isEmpty && config.isEmpty && fromEnvironment(environment).isEmpty
    }

    /// Resolution order: command line, then config file, then environment, then the system's
    /// keyboard configuration (`system`, /etc/default/keyboard: only when none of the others
    /// names anything), then built-in. A layout given at a higher level takes its variant from
    /// the same level only, so a `--layout de` does not inherit `XKB_DEFAULT_VARIANT=dvorak`
    /// meant for another layout.
    public static func resolve(commandLine: KeymapNames, config: KeymapNames, environment: [String: String],
                               system: KeymapNames? = nil) -> KeymapNames {
        let env = fromEnvironment(environment)
        var levels = [commandLine, config, env]
        if let system, commandLine.isEmpty, config.isEmpty, env.isEmpty { levels.append(system) }
        levels.append(builtIn)
        var result = KeymapNames()
        for level in levels {
            if result.layout == nil, let layout = level.layout {
                result.layout = layout
                result.variant = level.variant ?? ""
            }
        }
        for level in levels { result = result.overlaying(level) }
        return result
    }

    /// The names a keyboard's own keymap (`[device.keymap]`, these names) compiles from: what
    /// it does not set comes from the service's keymap `base`, the layout with its variant only
    /// when it names no layout.
    public func forDevice(base: KeymapNames) -> KeymapNames {
        var full = self
        if full.layout == nil {
            full.layout = base.layout
            full.variant = full.variant ?? base.variant
        }
        return full.overlaying(KeymapNames(rules: base.rules, model: base.model, variant: "", options: base.options))
    }

    public var description: String {
        "rules=\(rules ?? "") model=\(model ?? "") layout=\(layout ?? "") variant=\(variant ?? "") options=\(options ?? "")"
    }
}
