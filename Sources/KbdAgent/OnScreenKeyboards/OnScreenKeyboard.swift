import Logging
import KbdConfig
import KbdSystem
import KbdCore
#if canImport(Glibc)
import Glibc
#endif

/// One on-screen keyboard as a switch the agent can turn off and on again: squeekboard's
/// visibility, KWin's `enabled`, GNOME's setting, the user's wvkbd processes.
protocol KeyboardSwitch: AnyObject {
    /// For the log ("squeekboard", "GNOME's screen keyboard", …).
    var name: String { get }
    /// Turns it off if it is on (shown, enabled); returns whether it was on, and so is off
    /// now because of the agent.
    func switchOff() throws -> Bool
    func switchOn() throws
}

/// An on-screen keyboard that follows presence both ways (Phosh's): told every change, not
/// only hidden while a keyboard is present, and told to put back what it changed.
protocol PresenceFollower: AnyObject {
    var name: String { get }
    /// Presence changed (the first report included).
    func follow(present: Bool) throws
    /// Puts back what `follow` changed (the agent stops, or the service is gone).
    func putBack() throws
}

/// What the agent talks to: which backend `auto` stands for, and each backend's switch.
protocol OnScreenKeyboardDesktop: AnyObject {
    /// The backend that is running now (`none` when none is).
    func running() -> OnScreenKeyboardSettings.Backend
    /// The switch of `backend`; nil when it cannot be reached (the reason is logged).
    func keyboard(_ backend: OnScreenKeyboardSettings.Backend) -> (any KeyboardSwitch)?
    /// The follower of `backend` (Phosh's); nil for the others.
    func follower(_ backend: OnScreenKeyboardSettings.Backend) -> (any PresenceFollower)?
}

extension OnScreenKeyboardDesktop {
    func follower(_ backend: OnScreenKeyboardSettings.Backend) -> (any PresenceFollower)? { nil }
}

/// Makes the on-screen keyboard give way while a hardware keyboard is present, and
/// puts back what was there before when it leaves: the iPad behaviour. It remembers
/// the state it found, so a keyboard the user had hidden or switched off stays that way.
final class OnScreenKeyboard {
    private var settings: OnScreenKeyboardSettings
    private let desktop: any OnScreenKeyboardDesktop
    private let logger: Logger
    private let run: ([String], String) -> Void
    /// The keyboard the agent switched off when presence became true, to switch on again.
    private var switchedOff: (any KeyboardSwitch)?
    private var present: Bool?
    /// Where the agent notes a keyboard it switched off (nil: not noted): KWin and GNOME
    /// keep the setting across logins, so an agent killed while a keyboard was present
    /// would leave it off for good. The next agent finds the note and puts it back.
    private let marker: String?
    /// The backend a previous agent left switched off, until the first presence settles it.
    private var leftOff: OnScreenKeyboardSettings.Backend?
    /// The hooks (`on_present`, `on_absent`) run at most once per debounce time, and never
    /// twice in a row for the same value (a reconnect, presence toggling faster than the
    /// service's debounce): `hooked` is the value whose hook ran last, `hookedAt` when.
    /// A change inside the debounce time waits until `hookDue`, then runs the hook of the
    /// value presence has by then, if it is not the one that ran.
    private var hooked: Bool?
    private var hookedAt: EventTime?
    package private(set) var hookDue: EventTime?
    let debounceMilliseconds: Int
    private let clock: () -> EventTime

    /// `run(argv, label)` starts `on_present` / `on_absent` through the agent's runner.
    init(settings: OnScreenKeyboardSettings, desktop: any OnScreenKeyboardDesktop, logger: Logger, marker: String? = nil,
         debounceMilliseconds: Int = KeyboardPresence.defaultDebounceMilliseconds, clock: @escaping () -> EventTime = monotonicNow,
         run: @escaping ([String], String) -> Void) {
        self.debounceMilliseconds = debounceMilliseconds
        self.clock = clock
        self.settings = settings
        self.desktop = desktop
        self.logger = logger
        self.marker = marker
        self.run = run
        if let marker, let bytes = try? readFile(path: marker, limit: 64, trust: .any) {
            leftOff = OnScreenKeyboardSettings.Backend(rawValue: String(String(decoding: bytes, as: UTF8.self).prefix { $0 != "\n" }))
            if leftOff == nil { unlink(marker) }
        }
    }

    convenience init(settings: OnScreenKeyboardSettings, environment: [String: String], logger: Logger,
                     run: @escaping ([String], String) -> Void) {
        self.init(settings: settings, desktop: LiveDesktop(environment: environment, logger: logger), logger: logger,
                  marker: Self.markerPath(environment: environment), run: run)
    }

    /// `$XDG_STATE_HOME/kbd-commandd/osk-switched-off` (`~/.local/state/…` by default).
    static func markerPath(environment: [String: String]) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/kbd-commandd/osk-switched-off" }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return home + "/.local/state/kbd-commandd/osk-switched-off"
    }

    private func note(_ backend: OnScreenKeyboardSettings.Backend?) {
        guard let marker else { return }
        guard let backend else {
            unlink(marker)
            return
        }
        // The folders as `mkdir -p` makes them, private to the user.
        var path = ""
        for part in marker.split(separator: "/").dropLast() {
            path += "/" + part
            mkdir(path, 0o700)
        }
        do {
            let out = try FileOutput.create(path: marker, mode: 0o600)
            out.write(backend.rawValue + "\n")
            try out.flush()
        } catch { logger.warning("on-screen keyboard: cannot note \(marker): \(error)") }
    }

    /// Takes the `[osk]` of a (re)loaded config; applies from the next change.
    func update(settings: OnScreenKeyboardSettings) { self.settings = settings }

    /// The follower in use (Phosh's), from the first presence to the agent's end.
    private var follower: (any PresenceFollower)?

    /// Applies a presence change (repeats of the same value do nothing).
    func hardwareKeyboard(present now: Bool) {
        guard now != present else { return }
        present = now
        let backend = settings.backend == .auto ? desktop.running() : settings.backend
        if backend == .phosh || follower != nil {
            if follower == nil { follower = desktop.follower(.phosh) }
            if let follower {
                do {
                    try follower.follow(present: now)
                    logger.info("on-screen keyboard: \(follower.name) follows presence (\(now ? "hardware keyboard present" : "absent"))")
                } catch { logger.warning("on-screen keyboard: \(follower.name): \(error)") }
            }
            let program = now ? settings.onPresent : settings.onAbsent
            if !program.isEmpty { run(program, now ? "osk.on_present" : "osk.on_absent") }
            return
        }
        if let backend = leftOff {
            // A previous agent stopped without putting the keyboard back.
            leftOff = nil
            if let keyboard = desktop.keyboard(backend) {
                if now {
                    switchedOff = keyboard  // off, as it should be now: ours to put back later
                    logger.info("on-screen keyboard: \(keyboard.name) was left off by an agent that did not stop cleanly; on again when the keyboard leaves")
                    hook(true)
                    return
                }
                switchedOff = keyboard
                logger.info("on-screen keyboard: \(keyboard.name) was left off by an agent that did not stop cleanly")
            } else {
                note(nil)
            }
        }
        if now {
            switchedOff = hide()
            if switchedOff != nil { note(hiddenBackend) }
            hook(true)
        } else {
            restore()
            hook(false)
        }
    }

    /// Runs the hook of `value` unless it ran last, or waits until the debounce time since
    /// the last hook has passed.
    private func hook(_ value: Bool) {
        guard value != hooked else {
            hookDue = nil
            return
        }
        if let at = hookedAt, clock() < at.adding(milliseconds: debounceMilliseconds) {
            hookDue = at.adding(milliseconds: debounceMilliseconds)
            return
        }
        hookDue = nil
        hooked = value
        hookedAt = clock()
        if value {
            if !settings.onPresent.isEmpty { run(settings.onPresent, "osk.on_present") }
        } else if !settings.onAbsent.isEmpty {
            run(settings.onAbsent, "osk.on_absent")
        }
    }

    /// At `hookDue`: the hook of the presence now, if it is not the one that ran last.
    func settleHooks() {
        guard let due = hookDue, clock() >= due else { return }
        hookDue = nil
        if let present { hook(present) }
    }

    /// Puts back what `hide` changed (presence false, the service gone, the agent stopping).
    func restore() {
        if let follower {
            do {
                try follower.putBack()
                logger.info("on-screen keyboard: \(follower.name) put back")
            } catch { logger.warning("on-screen keyboard: \(follower.name): \(error)") }
            self.follower = nil
        }
        guard let keyboard = switchedOff else { return }
        switchedOff = nil
        do {
            try keyboard.switchOn()
            logger.info("on-screen keyboard: \(keyboard.name) on again")
            note(nil)
        } catch { logger.warning("on-screen keyboard: \(keyboard.name): \(error)") }
    }

    /// Forgets the state (the service is gone: presence is unknown until it is back).
    func forgetPresence() {
        restore()
        present = nil
    }

    /// The backend a switch belongs to (the one `hide` asked for).
    private var hiddenBackend: OnScreenKeyboardSettings.Backend = .none

    /// Switches the keyboard off when it was on; returns it then (nil: nothing to undo).
    private func hide() -> (any KeyboardSwitch)? {
        let backend = settings.backend == .auto ? desktop.running() : settings.backend
        hiddenBackend = backend
        guard let keyboard = desktop.keyboard(backend) else { return nil }
        do {
            // Only a keyboard that was on is switched on again later.
            guard try keyboard.switchOff() else {
                logger.info("on-screen keyboard: \(keyboard.name) was off; left as it is")
                return nil
            }
            logger.info("on-screen keyboard: \(keyboard.name) off (hardware keyboard present)")
            return keyboard
        } catch {
            logger.warning("on-screen keyboard: \(keyboard.name): \(error)")
            return nil
        }
    }

    /// The backend `auto` picks, by the desktop (XDG_CURRENT_DESKTOP, a colon-separated
    /// list): Phosh first (Phosh:GNOME; its keyboard, Stevia or squeekboard, owns
    /// sm.puri.OSK0 and follows ignore-hw-keyboards), KDE is KWin, GNOME is GNOME Shell; elsewhere wvkbd when it runs, else `none`. Never by bus names, which
    /// any client of the session may own (issue 25): set `backend` for squeekboard elsewhere.
    static func pick(currentDesktop: String?, wvkbdRunning: Bool) -> OnScreenKeyboardSettings.Backend {
        let desktops = (currentDesktop ?? "").split(separator: ":").map { $0.uppercased() }
        if desktops.contains("PHOSH") { return .phosh }
        if desktops.contains("KDE") { return .kwin }
        if desktops.contains("GNOME") { return .gnome }
        return wvkbdRunning ? .wvkbd : .none
    }
}
