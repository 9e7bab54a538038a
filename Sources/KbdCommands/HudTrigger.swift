/// Why the discoverability HUD is shown (the `trigger` field of `hud` events; a contract).
public enum HudTrigger: String, Sendable, Equatable, CaseIterable {
    /// The hold modifier (`[hud] hold`, default Super) held alone past `[hud] delay_ms`.
    case hold
    /// A command with `action = "hud"` fired (it toggles the HUD).
    case chord
    /// A sequence prefix pending for `[hud] sequence_delay_ms`: its continuations.
    case sequence
}
