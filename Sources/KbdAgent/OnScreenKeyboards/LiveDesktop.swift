import Logging
import KbdConfig
import KbdSystem
#if canImport(Glibc)
import Glibc
#endif


/// The user's desktop. Bus and GSettings calls are made in a child process each
/// (DesktopProcess): the agent never loads libsystemd or GIO itself.
final class LiveDesktop: OnScreenKeyboardDesktop {
    private let environment: [String: String]
    private let logger: Logger

    init(environment: [String: String], logger: Logger) {
        self.environment = environment
        self.logger = logger
    }

    /// Whether there is a session bus to talk to (sd-bus finds it from these).
    private var hasSessionBus: Bool {
        environment["DBUS_SESSION_BUS_ADDRESS"] != nil || environment["XDG_RUNTIME_DIR"] != nil
    }

    /// Chosen by the desktop the session says it is (XDG_CURRENT_DESKTOP), never by a bus
    /// name: any client of the session bus may own `org.kde.KWin` or `sm.puri.OSK0`.
    func running() -> OnScreenKeyboardSettings.Backend {
        OnScreenKeyboard.pick(currentDesktop: environment["XDG_CURRENT_DESKTOP"], wvkbdRunning: !Wvkbd.processes().isEmpty)
    }

    func keyboard(_ backend: OnScreenKeyboardSettings.Backend) -> (any KeyboardSwitch)? {
        switch backend {
        case .auto, .none:
            return nil
        case .squeekboard, .kwin:
            guard hasSessionBus else {
                logger.warning("on-screen keyboard: no session bus (DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR are unset)")
                return nil
            }
            return backend == .squeekboard ? Squeekboard() : KWinVirtualKeyboard()
        case .gnome:
            return GnomeScreenKeyboard(environment: environment)
        case .wvkbd:
            return Wvkbd(pids: Wvkbd.processes())
        case .phosh:
            return nil  // a follower: see `follower`
        }
    }

    func follower(_ backend: OnScreenKeyboardSettings.Backend) -> (any PresenceFollower)? {
        backend == .phosh ? PhoshKeyboard(environment: environment, logger: logger) : nil
    }
}
