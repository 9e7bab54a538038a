/// Safe-area insets of a window, in points. Leading and trailing follow the
/// window's ``LayoutDirection``. The geometry model uses the bottom inset (the
/// height of the guide when the keyboard is dismissed); the others are kept
/// for clients and drawings.
public struct EdgeInsets: Sendable, Hashable {
    /// Inset from the top edge.
    public var top: Double
    /// Inset from the bottom edge.
    public var bottom: Double
    /// Inset from the leading edge.
    public var leading: Double
    /// Inset from the trailing edge.
    public var trailing: Double

    /// Insets of the given sizes (0 by default).
    public init(top: Double = 0, bottom: Double = 0, leading: Double = 0, trailing: Double = 0) {
        self.top = top
        self.bottom = bottom
        self.leading = leading
        self.trailing = trailing
    }

    /// No insets.
    public static let zero = EdgeInsets()
}
