/// What the keyboard area shows overall.
public enum GeometryLayout: String, Sendable, Hashable, CaseIterable {
    /// Nothing: no text input is active.
    case hidden
    /// The docked software keyboard.
    case docked
    /// The undocked software keyboard.
    case undocked
    /// The split software keyboard.
    case split
    /// The floating software keyboard.
    case floating
    /// The shortcuts bar of a hardware keyboard.
    case miniToolbar = "mini-toolbar"
}
