import Logging
import KbdConfig
import KbdSystem
import KbdProcess
#if canImport(Glibc)
import Glibc
#endif

/// Phosh's on-screen keyboard (Stevia; phosh-osk-stub before it): it hides on its own while
/// phoc reports any keyboard, unless its GSettings key `ignore-hw-keyboards` is true. The
/// agent makes that key follow the service's presence instead (true while no hardware
/// keyboard is really usable: tablet mode, only a remapper's virtual keyboard; false while
/// one is), and folds the keyboard through `sm.puri.OSK0` `SetVisible(false)` when one
/// comes. What the key was before the agent changed it is put back when the agent stops or
/// loses the service.
///
/// The schema is `mobi.phosh.osk` (Stevia, path /mobi/phosh/osk/), else `sm.puri.phosh.osk`
/// (phosh-osk-stub, /sm/puri/phosh/osk/); both have `ignore-hw-keyboards` (b, default
/// false). Debian 12's Phosh (0.24, squeekboard) has neither: then only `SetVisible` is
/// used, as for squeekboard.
final class PhoshKeyboard: PresenceFollower {
    static let schemas = ["mobi.phosh.osk", "sm.puri.phosh.osk"]
    static let key = "ignore-hw-keyboards"
    let name = "Phosh's on-screen keyboard (ignore-hw-keyboards)"
    private let environment: [String: String]
    private let logger: Logger
    private let hasSessionBus: Bool
    /// The schema used and the value found there before the agent's first change.
    private var original: (schema: String, value: Bool)?
    private var saidNoSchema = false

    init(environment: [String: String], logger: Logger) {
        self.environment = environment
        self.logger = logger
        hasSessionBus = environment["DBUS_SESSION_BUS_ADDRESS"] != nil || environment["XDG_RUNTIME_DIR"] != nil
    }

    func follow(present: Bool) throws {
        let environment = self.environment
        let known = original?.schema
        // In a child process (GIO stays out of the agent): "SCHEMA VALUE-BEFORE", or "" with no schema.
        let answer = try DesktopProcess.call {
            let settings = try GSettings(environment: environment)
            for schema in known.map({ [$0] }) ?? Self.schemas {
                guard let before = try? settings.bool(schema: schema, key: Self.key) else { continue }
                if before != !present { try settings.set(schema: schema, key: Self.key, !present) }
                return "\(schema) \(before)"
            }
            return ""
        }
        let parts = answer.split(separator: " ")
        if parts.count == 2 {
            if original == nil { original = (String(parts[0]), parts[1] == "true") }
        } else if !saidNoSchema {
            saidNoSchema = true
            logger.info("on-screen keyboard: no \(Self.schemas.joined(separator: " or ")) schema (Phosh before Stevia): only sm.puri.OSK0 follows presence")
        }
        if present && hasSessionBus {
            // Folded now; the setting keeps it folded on the next text field.
            _ = try? Squeekboard().switchOff()
        }
    }

    func putBack() throws {
        guard let (schema, value) = original else { return }
        let environment = self.environment
        _ = try DesktopProcess.bool {
            try GSettings(environment: environment).set(schema: schema, key: Self.key, value)
            return true
        }
        original = nil
    }
}
