import Logging
import KbdConfig
import KbdControl
import KbdProcess
import KbdSystem

/// The focused window in the agent: its source on the loop, the scopes and text input it
/// means for the service (logged without the window's title), and what the text-input watch
/// is told of it.
extension AgentLoop {
    func openFocusSource(environment: [String: String]) {
        var tried: [String] = []
        focus = FocusSources.open(environment: environment, tried: &tried)
        for t in tried { logger.warning("focus: cannot use \(t)") }
        guard let focus else {
            logger.info("focus: no desktop interface (SWAYSOCK, I3SOCK, HYPRLAND_INSTANCE_SIGNATURE, or DISPLAY outside a Wayland session); scopes do not follow the focused window")
            return
        }
        do { try loop.watch(focus.fd, as: .focus) } catch {
            logger.warning("focus: cannot watch \(focus.name): \(error.message)")
            self.focus = nil
            return
        }
        logger.info("focus: scopes follow the focused window through \(focus.name)")
        readFocus()
    }

    func readFocus() {
        guard let source = focus else { return }
        do {
            let change = try source.read()
            applyKeymap()
            guard let change else { return }
            focused = change.window
            tellTextInputWatch()
        } catch {
            logger.warning("focus: \(source.name): \(error.message); scopes no longer follow the focused window")
            loop.unwatch(source.fd)
            focus = nil
            focused = nil
            tellTextInputWatch()
            applyKeymap()
        }
        applyFocus()
    }

    /// The focused window's application as the text-input watch needs it: unknown without a
    /// focus source or when the source does not say whose window it is.
    var focusedApplication: FocusedApplication {
        guard focus != nil else { return .unknown }
        guard let window = focused else { return .none }
        return window.pid.map { .pid($0) } ?? .unknown
    }

    /// Tells the text-input watch whose window has the focus, when that changed.
    func tellTextInputWatch() {
        guard let watch = textWatch else { return }
        let now = focusedApplication
        guard now != toldWindow else { return }
        if !watch.tell(now) { logger.warning("text input: the watch did not take the focused window") }
        toldWindow = now
    }

    /// Sends the scopes for the focused window and whether text input is on (what the
    /// desktop says of the focused widget, unless `[scopes]` marks the app) when they differ
    /// from what the service has. Logged without the window's title.
    func applyFocus() {
        guard client.isConnected else { return }
        let active = (config?.scopes ?? ScopeMap()).resolve(app: focused?.app, title: focused?.title, desktopTextInput: desktopTextInput)
        if focus != nil || sentScopes != nil, active.scopes != sentScopes {
            send(.setScopes(active.scopes))
            sentScopes = active.scopes
            logger.debug("focus: \(focused.map { "app \($0.app)\($0.pid.map { " (pid \($0))" } ?? "")" } ?? "no window") -> scopes [\(active.scopes.joined(separator: ", "))]")
        }
        if active.textInput != (sentTextInput ?? false) {
            send(.setTextInput(active.textInput))
            sentTextInput = active.textInput
            logger.debug("text input \(active.textInput ? "on" : "off")")
        }
    }
}
