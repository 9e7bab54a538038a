/// The kinds of event a client subscribes to and reads, named as the `event` field of each
/// event line: the wire's own vocabulary (docs/protocol.md), so a client needs nothing below
/// KbdControl to subscribe. The service maps the pipeline's events to these
/// (`PipelineEvent.eventKind`); `session` and `toolbar` are the daemon's, not the pipeline's.
public enum ControlEventKind: String, Sendable, Hashable, CaseIterable {
    case attach, detach, key, chord, command, presence, geometry, dropped
    /// A seat's active session changed hands (sent by the daemon, not the pipeline): to
    /// the agents of the users who came and left, and to operators' subscribers.
    case session
    /// The discoverability HUD shown or hidden (hold, `action = "hud"`, a pending sequence):
    /// the active responder chain's commands, grouped. Not in the default subscription.
    case hud
    /// What the shortcuts bar shows (the active chain's commands, grouped), sent on
    /// subscribing and whenever it changes. Not in the default subscription.
    case toolbar
}
