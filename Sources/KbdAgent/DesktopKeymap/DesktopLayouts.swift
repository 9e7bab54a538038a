package import KbdKeymap
package import KbdControl
package import KbdJSON

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
        guard !layouts.isEmpty else { return (nil, "no layouts") }
        // xkb has 4 groups at most (GNOME allows more sources): the first layout (the Latin
        // fallback of chords on a non-Latin one) and the active one.
        if layouts.count > ControlRequest.Keymap.maxLayouts {
            var kept = self
            kept.layouts = active <= 0 || active >= layouts.count ? [layouts[0]] : [layouts[0], layouts[active]]
            kept.active = kept.layouts.count - 1
            return kept.keymap(rules: rules)
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

// MARK: - What each desktop says

extension DesktopLayouts {
    /// GNOME's `org.gnome.desktop.input-sources`: `sources` (`('xkb', 'de+nodeadkeys')`
    /// pairs, in group order), the active source (the first of `mru-sources` since GNOME
    /// 3.30; the deprecated `current` index when that list is empty) and `xkb-options`.
    /// Only `xkb` sources are layouts; while an input method (`ibus`) is the active source,
    /// the first layout counts. nil when there is no `xkb` source (GNOME then uses the
    /// system's keyboard, as the service does on its own).
    package static func gnome(sources: [(type: String, id: String)], mru: [(type: String, id: String)], current: Int,
                              options: [String]) -> DesktopLayouts? {
        let xkb = sources.filter { $0.type == "xkb" && !$0.id.isEmpty }
        guard !xkb.isEmpty else { return nil }
        let names = xkb.map { source -> String in
            guard let plus = source.id.firstIndex(of: "+") else { return source.id }
            return "\(source.id[..<plus])(\(source.id[source.id.index(after: plus)...]))"
        }
        var activeSource: (type: String, id: String)?
        if let first = mru.first { activeSource = first } else if current >= 0, current < sources.count { activeSource = sources[current] }
        let active = activeSource.flatMap { a in xkb.firstIndex { $0.type == a.type && $0.id == a.id } } ?? 0
        let opts = options.filter { !$0.isEmpty }
        return DesktopLayouts(layouts: names, described: false, options: opts.isEmpty ? nil : opts.joined(separator: ","), active: active)
    }

    /// KDE's `org.kde.keyboard` (`/Layouts`, `org.kde.KeyboardLayouts`, served by KWin on
    /// Wayland and by kded's keyboard module on X11): `getLayoutsList` names each layout
    /// (its first field, the short name, is the xkb layout) and `getLayout` the active one.
    /// Variants and options are not on the bus: they come from `kxkbrc` (`[Layout]`
    /// `LayoutList`, `VariantList`, `Options`), the file KDE's settings write and KWin reads,
    /// when its `LayoutList` is the list the bus names (else the file is not what is in use).
    package static func kde(shortNames: [String], active: Int, kxkbrc: String?) -> DesktopLayouts? {
        let names = shortNames.filter { !$0.isEmpty }
        guard !names.isEmpty, names.count == shortNames.count else { return nil }
        var layouts = names
        var options: String?
        if let kxkbrc {
            let entries = kconfigGroup(kxkbrc, "Layout")
            let listed = (entries["LayoutList"] ?? "").split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmed }
            if listed == names {
                let variants = (entries["VariantList"] ?? "").split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmed }
                layouts = names.enumerated().map { i, name in i < variants.count && !variants[i].isEmpty ? "\(name)(\(variants[i]))" : name }
                if let o = entries["Options"]?.trimmed, !o.isEmpty { options = o }
            }
        }
        return DesktopLayouts(layouts: layouts, described: false, options: options, active: min(max(0, active), names.count - 1))
    }

    /// KDE without `org.kde.keyboard` on the bus (KWin serves it only with two layouts or
    /// more): kxkbrc's layout when its `[Layout]` says `Use=true` (else KWin uses the system's
    /// keyboard, as the service does on its own).
    package static func kde(kxkbrc: String) -> DesktopLayouts? {
        let entries = kconfigGroup(kxkbrc, "Layout")
        guard ["true", "on", "yes", "1"].contains((entries["Use"] ?? "").lowercased()) else { return nil }
        let names = (entries["LayoutList"] ?? "").split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmed }
        guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty }) else { return nil }
        return kde(shortNames: names, active: 0, kxkbrc: kxkbrc)
    }

    /// The entries of one group of a KConfig file (`[Group]`, `Key=Value`; `Key[$i]`, an
    /// immutable entry, counts as `Key`; comments start with `#`).
    package static func kconfigGroup(_ text: String, _ wanted: String) -> [String: String] {
        var group = ""
        var entries: [String: String] = [:]
        for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                group = String(line.dropFirst().prefix { $0 != "]" })
                continue
            }
            guard group == wanted, let eq = line.firstIndex(of: "=") else { continue }
            var key = line[..<eq].trimmed
            if let bracket = key.firstIndex(of: "[") { key = String(key[..<bracket]) }
            entries[key] = line[line.index(after: eq)...].trimmed
        }
        return entries
    }

    /// Hyprland's `j/devices` (the command socket's answer to `hyprctl devices -j`): the
    /// main keyboard's (`"main": true`, else the first) `layout`, `variant` and `options` (as
    /// in hyprland.conf's `kb_*`), and the active layout: `active_layout_index` (Hyprland
    /// 0.42 and later), else `active_keymap`, the active layout's description, found among
    /// the layouts' descriptions in the rules list (`rules` is read only then).
    package static func hyprland(devices: JSONValue, rules: () -> XkbRulesList?) -> DesktopLayouts? {
        guard let keyboards = devices["keyboards"]?.arrayValue, !keyboards.isEmpty else { return nil }
        let keyboard = keyboards.first { $0["main"]?.boolValue == true } ?? keyboards[0]
        let names = (keyboard["layout"]?.stringValue ?? "").split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmed }
        guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty }) else { return nil }
        let variants = (keyboard["variant"]?.stringValue ?? "").split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmed }
        let layouts = names.enumerated().map { i, name in i < variants.count && !variants[i].isEmpty ? "\(name)(\(variants[i]))" : name }
        var active = 0
        if let index = keyboard["active_layout_index"]?.intValue {
            active = index
        } else if let description = keyboard["active_keymap"]?.stringValue, let list = rules() {
            active = names.indices.first { i in
                let variant = i < variants.count ? variants[i] : ""
                let entry = variant.isEmpty ? list.layouts.first { $0.name == names[i] }
                                            : list.variants.first { $0.name == variant && $0.layout == names[i] }
                return entry?.description == description
            } ?? 0
        }
        let options = (keyboard["options"]?.stringValue ?? "").trimmed
        return DesktopLayouts(layouts: layouts, described: false, options: options.isEmpty ? nil : options,
                              active: min(max(0, active), layouts.count - 1))
    }

    // MARK: - The keymap child's lines

    /// One line for the agent's keymap child to send: `layouts ACTIVE OPTIONS NAME…`
    /// (options `-` when the desktop names none; xkb names have no spaces).
    package var line: String {
        "layouts \(active) \(options ?? "-") \(layouts.joined(separator: " "))"
    }

    /// A `layouts` line read back (nil: not one).
    package init?(line: Substring) {
        let words = line.split(separator: " ")
        guard words.count >= 4, words[0] == "layouts", let active = Int(words[1]), active >= 0, active < words.count - 3 else { return nil }
        self.init(layouts: words.dropFirst(3).map(String.init), described: false, options: words[2] == "-" ? nil : String(words[2]),
                  active: active)
    }
}

extension StringProtocol {
    fileprivate var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
