public import KbdCore
public import KbdKeymap
public import KbdCommands
public import KbdGeometry
/// What the pipeline reports, in the order it happened. Sinks (replay output,
/// socket subscribers, the log, command execution) consume these.
public enum PipelineEvent: Sendable {
    /// `integration` and why (`integrationReason`) are set for keyboards.
    case attach(time: EventTime, device: String, keyboard: Bool, integration: KeyboardIntegration?, integrationReason: String? = nil)
    case detach(time: EventTime, device: String, keyboard: Bool)
    /// Carries typed text: only printed or sent when explicitly asked for.
    case key(KeyEvent, device: String)
    case chord(time: EventTime, device: String, chord: String)
    /// `phase`: when it fired (`press` for every command without key phases).
    case command(time: EventTime, device: String, command: Command, chord: String, phase: KeyPhase = .press)
    /// A command of a user's table (an agent's), for that agent only: never broadcast.
    case ownedCommand(owner: Int, time: EventTime, device: String, command: Command, chord: String, phase: KeyPhase = .press)
    case presence(time: EventTime, hardwareKeyboard: Bool, reason: PresenceReason)
    /// The layout guide after presence changed it (encoded at the wire, never here).
    case geometry(time: EventTime, report: GeometryReport)
    /// Events the pipeline dropped for a device (SYN_DROPPED frames, impossible transitions).
    case dropped(time: EventTime, device: String, count: Int, reason: String)
    /// The discoverability HUD shown (`view`: what it shows from the system table, which the
    /// daemon completes with each reader's own table) or hidden (`view` nil). Never a typed key.
    case hud(time: EventTime, trigger: HudTrigger, view: Discoverability.View?)

    public var time: EventTime {
        switch self {
        case .attach(let t, _, _, _, _), .detach(let t, _, _), .chord(let t, _, _), .command(let t, _, _, _, _), .ownedCommand(_, let t, _, _, _, _),
            .presence(let t, _, _), .geometry(let t, _), .dropped(let t, _, _, _), .hud(let t, _, _):
            return t
        case .key(let k, _): return k.time
        }
    }

    /// The `event` field of the JSON form (the wire's event kinds, KbdControl's
    /// `ControlEventKind`, spell these; the wire's also has the daemon's own, `session` and
    /// `toolbar`).
    public var kind: String {
        switch self {
        case .attach: return "attach"
        case .detach: return "detach"
        case .key: return "key"
        case .chord: return "chord"
        case .command, .ownedCommand: return "command"
        case .presence: return "presence"
        case .geometry: return "geometry"
        case .dropped: return "dropped"
        case .hud: return "hud"
        }
    }
}
