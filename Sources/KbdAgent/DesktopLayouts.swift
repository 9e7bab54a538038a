package import KbdKeymap
package import KbdControl

/// The session's keyboard layouts as the desktop reports them, and the one active: what the
/// agent sends the service as `set_keymap`. sway's and Hyprland's IPC name layouts by their
/// descriptions ("English (US)", "German (no dead keys)"), which the rules' list turns back
/// into xkb names; GNOME and KDE give the names themselves.
package struct DesktopLayouts: Equatable, Sendable {
    /// The layouts, in group order: xkb names (`de`, `de(nodeadkeys)`), or descriptions
    /// when `described`.
    package var layouts: [String]
    package var described: Bool
    /// The desktop's xkb options, when it says (sway's IPC does not).
    package var options: String?
    /// The active layout's index.
    package var active: Int

    package init(layouts: [String], described: Bool, options: String? = nil, active: Int) {
        self.layouts = layouts
        self.described = described
        self.options = options
        self.active = active
    }

    /// The request's keymap: names (`de(nodeadkeys)` split into layout and variant), or nil
    /// with the reason when a description is not on the rules' list or there are no layouts.
    package func keymap(rules: XkbRulesList?) -> (keymap: ControlRequest.Keymap?, problem: String?) {
        guard !layouts.isEmpty, layouts.count <= ControlRequest.Keymap.maxLayouts else {
            return (nil, "\(layouts.count) layouts (the service takes 1 to \(ControlRequest.Keymap.maxLayouts))")
        }
        var names: [(layout: String, variant: String)] = []
        for layout in layouts {
            if described {
                guard let rules else { return (nil, "no xkb rules list to read the layout names from") }
                if let l = rules.layouts.first(where: { $0.description == layout }) {
                    names.append((l.name, ""))
                } else if let v = rules.variants.first(where: { $0.description == layout }), let base = v.layout {
                    names.append((base, v.name))
                } else {
                    return (nil, "the layout '\(layout)' is not on the xkb rules list")
                }
            } else if let open = layout.firstIndex(of: "("), layout.hasSuffix(")") {
                names.append((String(layout[..<open]), String(layout[layout.index(after: open)..<layout.index(before: layout.endIndex)])))
            } else {
                names.append((layout, ""))
            }
        }
        let variants = names.map(\.variant)
        let keymap = ControlRequest.Keymap(
            layout: names.map(\.layout).joined(separator: ","),
            variant: variants.allSatisfy(\.isEmpty) ? nil : variants.joined(separator: ","),
            options: options, group: min(max(0, active), names.count - 1))
        return (keymap, nil)
    }
}
