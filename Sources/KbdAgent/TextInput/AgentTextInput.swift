import Logging
import KbdConfig
import KbdProcess

/// The text-input watch in the agent: a child process on the loop, started again when
/// `[text_input] source` changed.
extension AgentLoop {
    /// (Re)starts the text-input watch when `[text_input] source` changed (or at start); on a
    /// text console there is no text field to watch (and no accessibility bus to start).
    func startTextInputWatch() {
        guard !textConsole else { return }
        let source = config?.textInputSource ?? .auto
        guard source != textWatchSource else { return }
        stopTextInputWatch()
        textWatchSource = source
        guard source != .none else {
            logger.info("text input: only the [scopes] entries marked text_input (source = \"none\")")
            return
        }
        do {
            let window = focusedApplication
            let watch = try TextInputWatch(source: source, currentDesktop: ProcessEnvironment.current()["XDG_CURRENT_DESKTOP"], window: window)
            try loop.watch(watch.fd, as: .textInput)
            textWatch = watch
            toldWindow = window
        } catch {
            logger.warning("text input: cannot start the watch: \(error)")
        }
    }

    func stopTextInputWatch() {
        if let watch = textWatch { loop.unwatch(watch.fd) }
        textWatch = nil
        desktopTextInput = nil
    }

    func readTextInput() {
        guard let watch = textWatch else { return }
        let (lines, ended) = watch.read()
        var failure: String?
        for line in lines {
            switch line {
            case .source(let name): logger.info("text input: follows \(name)")
            case .textInput(let on): desktopTextInput = on
            case .warning(let message): logger.warning("text input: \(message)")
            case .error(let message): failure = message
            }
        }
        if ended {
            logger.warning("text input: \(failure ?? "the watch ended"); only the [scopes] entries marked text_input set it")
            loop.unwatch(watch.fd)
            textWatch = nil
            desktopTextInput = nil
        }
        applyFocus()
    }
}
