import KbdKeymap

/// The keymaps desktops asked for with `set_keymap`, compiled once: the newest four that
/// compiled (a layout switch sends the same names with another group, which only locks it)
/// and the newest sixteen that did not, with the reason, so asking again for a refused
/// name costs a lookup, not another compile on the event loop.
struct DesktopKeymapCache {
    private var compiled: [(names: KeymapNames, keymap: XkbKeymap)] = []
    private var refused: [(names: KeymapNames, error: KeymapError)] = []
    static let compiledKept = 4
    static let refusedKept = 16

    /// Whether `names` were compiled or refused before (no compile needed to answer).
    func knows(_ names: KeymapNames) -> Bool {
        compiled.contains { $0.names == names } || refused.contains { $0.names == names }
    }

    /// The keymap of `names`, compiled in `context` unless known.
    mutating func keymap(_ names: KeymapNames, context: XkbContext) throws(KeymapError) -> XkbKeymap {
        if let i = compiled.firstIndex(where: { $0.names == names }) {
            let hit = compiled.remove(at: i)
            compiled.append(hit)
            return hit.keymap
        }
        if let known = refused.first(where: { $0.names == names }) { throw known.error }
        do {
            let keymap = try XkbKeymap(context: context, names: names)
            compiled.append((names, keymap))
            if compiled.count > Self.compiledKept { compiled.removeFirst() }
            return keymap
        } catch {
            refused.append((names, error))
            if refused.count > Self.refusedKept { refused.removeFirst() }
            throw error
        }
    }

    /// Forgets everything (a reload may change the rules and model the names compile with).
    mutating func removeAll() {
        compiled.removeAll()
        refused.removeAll()
    }
}
