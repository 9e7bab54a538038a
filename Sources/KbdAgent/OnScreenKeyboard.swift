import HardwareInput
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Makes the on-screen keyboard give way while a hardware keyboard is present, and
/// puts back what was there before when it leaves: the iPad behaviour. It remembers
/// the state it found, so a keyboard the user had hidden or switched off stays that way.
final class OnScreenKeyboard {
    /// What the agent did when presence became true, to undo when it goes false.
    private enum Undo {
        case nothing
        case squeekboard
        case kwin
        case wvkbd([pid_t])
    }

    private var settings: OnScreenKeyboardSettings
    private let logger: Logger
    private let run: ([String], String) -> Void
    private let environment: [String: String]
    private var bus: SessionBus?
    private var undo: Undo = .nothing
    private var present: Bool?

    static let squeekboardName = "sm.puri.OSK0"
    static let squeekboardPath = "/sm/puri/OSK0"
    static let kwinName = "org.kde.KWin"
    static let kwinPath = "/VirtualKeyboard"
    static let kwinInterface = "org.kde.kwin.VirtualKeyboard"

    /// `run(argv, label)` starts `on_present` / `on_absent` through the agent's runner.
    init(settings: OnScreenKeyboardSettings, environment: [String: String], logger: Logger, run: @escaping ([String], String) -> Void) {
        self.settings = settings
        self.environment = environment
        self.logger = logger
        self.run = run
    }

    /// The session bus, opened when first needed (nil without one).
    private func sessionBus() -> SessionBus? {
        if bus == nil, environment["DBUS_SESSION_BUS_ADDRESS"] != nil || environment["XDG_RUNTIME_DIR"] != nil {
            do { bus = try SessionBus() } catch { logger.warning("on-screen keyboard: no session bus (\(error))") }
        }
        return bus
    }

    /// Takes the `[osk]` of a (re)loaded config; applies from the next change.
    func update(settings: OnScreenKeyboardSettings) { self.settings = settings }

    /// Applies a presence change (repeats of the same value do nothing).
    func hardwareKeyboard(present now: Bool) {
        guard now != present else { return }
        present = now
        if now {
            undo = hide()
            if !settings.onPresent.isEmpty { run(settings.onPresent, "osk.on_present") }
        } else {
            restore()
            if !settings.onAbsent.isEmpty { run(settings.onAbsent, "osk.on_absent") }
        }
    }

    /// Puts back what `hide` changed (presence false, the service gone, the agent stopping).
    func restore() {
        let what = undo
        undo = .nothing
        switch what {
        case .nothing:
            break
        case .squeekboard:
            do {
                try sessionBus()?.call(Self.squeekboardName, Self.squeekboardPath, Self.squeekboardName, "SetVisible", bool: true)
                logger.info("on-screen keyboard: squeekboard shown again")
            } catch { logger.warning("on-screen keyboard: squeekboard: \(error)") }
        case .kwin:
            do {
                try sessionBus()?.setBool(Self.kwinName, Self.kwinPath, Self.kwinInterface, "enabled", true)
                logger.info("on-screen keyboard: KWin's virtual keyboard enabled again")
            } catch { logger.warning("on-screen keyboard: KWin: \(error)") }
        case .wvkbd(let pids):
            let alive = pids.filter { Self.isWvkbd($0) }
            for pid in alive { kill(pid, SIGUSR2) }
            if !alive.isEmpty { logger.info("on-screen keyboard: wvkbd shown again") }
        }
    }

    /// Forgets the state (the service is gone: presence is unknown until it is back).
    func forgetPresence() {
        restore()
        present = nil
    }

    private func hide() -> Undo {
        let backend = settings.backend == .auto ? detect() : settings.backend
        switch backend {
        case .auto, .none:
            return .nothing
        case .squeekboard:
            guard let bus = sessionBus() else { return .nothing }
            do {
                // Only a keyboard that was showing is shown again later.
                guard try bus.getBool(Self.squeekboardName, Self.squeekboardPath, Self.squeekboardName, "Visible") else {
                    logger.info("on-screen keyboard: squeekboard was hidden; left as it is")
                    return .nothing
                }
                try bus.call(Self.squeekboardName, Self.squeekboardPath, Self.squeekboardName, "SetVisible", bool: false)
                logger.info("on-screen keyboard: squeekboard hidden (hardware keyboard present)")
                return .squeekboard
            } catch {
                logger.warning("on-screen keyboard: squeekboard: \(error)")
                return .nothing
            }
        case .kwin:
            guard let bus = sessionBus() else { return .nothing }
            do {
                guard try bus.getBool(Self.kwinName, Self.kwinPath, Self.kwinInterface, "enabled") else {
                    logger.info("on-screen keyboard: KWin's virtual keyboard was disabled; left as it is")
                    return .nothing
                }
                try bus.setBool(Self.kwinName, Self.kwinPath, Self.kwinInterface, "enabled", false)
                logger.info("on-screen keyboard: KWin's virtual keyboard disabled (hardware keyboard present)")
                return .kwin
            } catch {
                logger.warning("on-screen keyboard: KWin: \(error)")
                return .nothing
            }
        case .wvkbd:
            let pids = Self.wvkbdProcesses()
            for pid in pids { kill(pid, SIGUSR1) }
            if !pids.isEmpty { logger.info("on-screen keyboard: wvkbd hidden (hardware keyboard present)") }
            return .wvkbd(pids)
        }
    }

    /// The first backend that is running: squeekboard, KWin, then wvkbd.
    private func detect() -> OnScreenKeyboardSettings.Backend {
        if let bus = sessionBus() {
            if bus.hasOwner(Self.squeekboardName) { return .squeekboard }
            if bus.hasOwner(Self.kwinName) { return .kwin }
        }
        return Self.wvkbdProcesses().isEmpty ? .none : .wvkbd
    }

    /// This user's live wvkbd processes (`wvkbd-*` in /proc, not zombies): signals go to
    /// nobody else's.
    static func wvkbdProcesses() -> [pid_t] {
        Directory.names("/proc").compactMap { pid_t($0) }.filter { isWvkbd($0) }.sorted()
    }

    /// Whether `pid` is a live wvkbd of this user.
    static func isWvkbd(_ pid: pid_t) -> Bool {
        guard let bytes = try? readWholeFile(path: "/proc/\(pid)/stat", limit: 4096) else { return false }
        let text = String(decoding: bytes, as: UTF8.self)
        // "PID (comm) S …": the name is between the first '(' and the last ')'.
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return false }
        let comm = text[text.index(after: open)..<close]
        let state = text[text.index(after: close)...].dropFirst().first
        guard comm.hasPrefix("wvkbd"), state != "Z", state != "X" else { return false }
        var st = Glibc.stat()
        return lstat("/proc/\(pid)", &st) == 0 && st.st_uid == getuid()
    }
}
