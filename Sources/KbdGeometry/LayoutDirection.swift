/// A window's layout direction, which decides which physical side is its
/// leading edge.
public enum LayoutDirection: String, Sendable, Hashable, CaseIterable {
    /// Left to right: leading is the left edge, trailing the right edge.
    case ltr
    /// Right to left: leading is the right edge, trailing the left edge.
    case rtl

    /// The logical edge that is on the physical left.
    public var leftEdge: Edge { self == .ltr ? .leading : .trailing }

    /// The logical edge that is on the physical right.
    public var rightEdge: Edge { self == .ltr ? .trailing : .leading }
}
