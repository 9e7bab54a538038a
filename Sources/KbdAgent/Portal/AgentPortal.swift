import Logging
import KbdConfig
import KbdControl
import KbdProcess
import KbdCommands

/// The desktop portal's GlobalShortcuts backend in the agent: its child (PortalWatch) is
/// started with the loop, told the policy and the user's chords after every load, and its
/// bindings are registered ahead of the user's table.
extension AgentLoop {
    /// Starts the backend's child (not on a text console: no portal there).
    func startPortal() {
        guard !textConsole else { return }
        do {
            let watch = try PortalWatch(policy: config?.portalApprove ?? "ask", approvalsPath: PortalApprovals.path(environment: environment),
                                        consentDialog: bar.installedPath)
            try loop.watch(watch.fd, as: .portal)
            portal = watch
            tellPortal()
        } catch {
            logger.warning("portal: cannot start the GlobalShortcuts backend: \(error)")
        }
    }

    /// The policy and the chords of the user's table (conflicts), after every load.
    func tellPortal() {
        portal?.tell(policy: config?.portalApprove ?? "ask", table: (config?.table.commands ?? []).map { ($0.keysText, $0.title) })
    }

    /// What the child said: the bindings changed (register again) or it ended.
    func readPortal() {
        guard let watch = portal else { return }
        let (changed, ended) = watch.read(logger: logger)
        if ended {
            loop.unwatch(watch.fd)
            portal = nil
        }
        if changed { register() }
    }
}
