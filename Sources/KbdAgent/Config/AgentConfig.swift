import Logging
import KbdConfig
import KbdCore
import KbdControl
import KbdSystem
import KbdCommands

/// The user's config in the agent: loaded at start, again when its file changes or on SIGHUP.
extension AgentLoop {
    /// Loads the config; a bad one keeps the table there was (none at start).
    @discardableResult
    func loadConfig() -> Bool {
        do throws(ConfigError) {
            let loaded = try ConfigLoader.load(path: configPath, trust: .strict)
            // A [keymap] here would change nothing: refused with the reason, not ignored.
            let refused = ConfigLoader.agentConfigProblems(loaded)
            if !refused.isEmpty { throw ConfigError(problems: refused) }
            config = loaded
            logger.info("loaded \(configPath): \(loaded.table.commands.count) commands, on-screen keyboard \(loaded.osk.backend.rawValue)")
            // The service owns the keyboards: these sections of a user's config do nothing.
            var ignored: [String] = []
            if loaded.devices != DeviceFilter() { ignored.append("[devices]") }
            if loaded.geometry != nil { ignored.append("[geometry]") }
            if !ignored.isEmpty { logger.warning("\(configPath): \(ignored.joined(separator: ", ")) ignored in a user's config") }
            return true
        } catch {
            if config == nil {
                logger.error("\(error.description); going on without commands until the config is fixed")
            } else {
                logger.error("reload failed, keeping the previous table: \(error.description)")
            }
            return false
        }
    }

    /// The file changed or SIGHUP: a config that loads is registered and applied at once.
    func reload() {
        guard loadConfig() else { return }
        readDesktopStickyKeys()
        register()
        startTextInputWatch()
        updateBar()
        tellPortal()
        applyFocus()
    }
}
