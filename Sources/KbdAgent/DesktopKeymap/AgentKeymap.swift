import Logging
import KbdConfig
import KbdControl
import KbdProcess
import KbdKeymap

/// The desktop's keymap and sticky keys in the agent: from the focus socket (sway,
/// Hyprland) or the watch child (GNOME, KDE), sent as claims when they changed.
extension AgentLoop {
    /// Sends the desktop's layouts and the active one (`set_keymap`) when they differ from
    /// what the service has from this agent; withdraws them when the desktop stopped saying.
    func applyKeymap() {
        guard client.isConnected else { return }
        var keymap: ControlRequest.Keymap?
        if let hyprland = focus as? HyprlandEvents, hyprland.layoutProblem != saidLayoutProblem {
            saidLayoutProblem = hyprland.layoutProblem
            if let problem = saidLayoutProblem { logger.warning("keymap: Hyprland: \(problem)") }
        }
        if let layouts = focus?.keyboardLayouts ?? watchedLayouts {
            // A switch keeps the names (more layouts than xkb's groups are cut around the active one).
            if let resolved = resolvedLayouts, resolved.layouts.layouts == layouts.layouts, resolved.layouts.options == layouts.options,
               layouts.layouts.count <= ControlRequest.Keymap.maxLayouts {
                keymap = resolved.keymap
                keymap?.group = min(layouts.active, max(0, layouts.layouts.count - 1))
            } else {
                // Read only when the layouts changed (a layout switch keeps the names).
                let (k, problem) = layouts.keymap(rules: layouts.described ? XkbRulesList.load(rules: nil) : nil)
                if let problem { logger.warning("keymap: \(problem); the service keeps its own keymap") }
                keymap = k
            }
            resolvedLayouts = (layouts, keymap)
        }
        guard keymap != nil || sentKeymap != nil, sentKeymap != .some(keymap) else { return }
        send(.setKeymap(keymap))
        sentKeymap = .some(keymap)
        let source = focus?.keyboardLayouts != nil ? focus?.name : keymapWatch?.desktop.name
        logger.info(keymap.map { k in
            "keymap: the desktop's, layout \(k.layout)\(k.variant.map { " variant \($0)" } ?? "")\(k.options.map { " options \($0)" } ?? "") group \(k.group) (\(source ?? ""))"
        } ?? "keymap: withdrawn")
    }

    /// On GNOME and KDE (by XDG_CURRENT_DESKTOP), unless the focus socket already reports the
    /// layouts (sway, Hyprland), starts the child that watches the desktop's layouts.
    func startKeymapWatch() {
        guard let desktop = DesktopKeymapWatch.desktop(environment) else { return }
        if let focus, focus is HyprlandEvents || focus.name == "sway IPC" { return }
        do {
            let watch = try DesktopKeymapWatch(desktop: desktop, environment: environment)
            try loop.watch(watch.fd, as: .keymap)
            keymapWatch = watch
        } catch {
            logger.warning("keymap: cannot watch \(desktop.name): \(error)")
        }
    }

    func readKeymapWatch() {
        guard let watch = keymapWatch else { return }
        let (lines, ended) = watch.read()
        var failure: String?
        for line in lines {
            switch line {
            case .source(let name): logger.info("keymap: follows \(watch.desktop.name) (\(name))")
            case .layouts(let layouts): watchedLayouts = layouts
            case .none: watchedLayouts = nil
            case .warning(let message): logger.warning("keymap: \(message)")
            case .error(let message): failure = message
            }
        }
        if ended {
            logger.warning("keymap: \(failure ?? "the watch of \(watch.desktop.name) ended"); the service keeps its own keymap")
            loop.unwatch(watch.fd)
            keymapWatch = nil
            watchedLayouts = nil
        }
        applyKeymap()
    }

    /// Reads the desktop's sticky-keys setting (at connect and reload) and sends it when it changed.
    func readDesktopStickyKeys() {
        let (enabled, problem) = DesktopStickyKeys.read(environment)
        if let problem { logger.info("sticky keys: cannot read the desktop's setting (\(problem))") }
        desktopStickyKeys = enabled
        guard client.isConnected, enabled != nil || sentStickyKeys != nil, sentStickyKeys != .some(enabled) else { return }
        send(.setStickyKeys(enabled))
        sentStickyKeys = .some(enabled)
        logger.info("sticky keys: the desktop's setting is \(enabled.map { $0 ? "on" : "off" } ?? "gone")")
    }
}
