/// An edge of a window, named the way layout guides name them: leading and
/// trailing follow the window's ``LayoutDirection`` (leading is the left edge
/// in a left-to-right window, the right edge in a right-to-left one).
///
/// Edges are always listed in declaration order: top, bottom, leading, trailing.
public enum Edge: String, Sendable, Hashable, CaseIterable, Comparable {
    /// The top edge.
    case top
    /// The bottom edge.
    case bottom
    /// The edge where lines start.
    case leading
    /// The edge where lines end.
    case trailing

    /// Orders edges top, bottom, leading, trailing.
    public static func < (lhs: Edge, rhs: Edge) -> Bool {
        lhs.order < rhs.order
    }

    private var order: Int {
        switch self {
        case .top: 0
        case .bottom: 1
        case .leading: 2
        case .trailing: 3
        }
    }
}
