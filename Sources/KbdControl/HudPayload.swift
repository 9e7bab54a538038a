public import KbdCommands
/// The HUD's and the bar's payloads from the commands' view (KbdCommands): the wire's words.
extension ControlEvent.Group {
    /// The groups of a view; a command of a user's table (an owner) is `"table":"user"`.
    public static func groups(_ groups: [Discoverability.Group]) -> [ControlEvent.Group] {
        groups.map { g in
            ControlEvent.Group(title: g.title ?? ControlEvent.Group.other, commands: g.entries.map { e in
                ControlEvent.GroupedCommand(table: e.owner == nil ? .system : .user, scope: e.command.scope, id: e.command.id, title: e.command.title,
                                            discoverabilityTitle: e.command.shownTitle, chord: e.chord, shadowed: e.shadowed,
                                            textInputFiltered: e.textInputFiltered)
            })
        }
    }
}

extension ControlEvent.Hud {
    /// A shown HUD (`view`) or a hidden one (nil).
    public init(trigger: HudTrigger, view: Discoverability.View?) {
        guard let view else {
            self = .hidden(trigger)
            return
        }
        self.init(show: true, trigger: trigger, pending: view.pending?.text, scopes: view.scopes, textInput: view.textInput,
                  groups: ControlEvent.Group.groups(view.groups))
    }
}

extension ControlEvent.Toolbar {
    public init(_ view: Discoverability.View) {
        self.init(scopes: view.scopes, textInput: view.textInput, groups: ControlEvent.Group.groups(view.groups))
    }
}
