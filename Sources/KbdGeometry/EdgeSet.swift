public import KbdJSON
/// A set of ``Edge``s, e.g. the edges a keyboard is near.
public struct EdgeSet: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The bits: top 1, bottom 2, leading 4, trailing 8.
    public let rawValue: UInt8

    /// The set with these bits.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The set holding `edges`.
    public init(_ edges: some Sequence<Edge>) {
        self = []
        for edge in edges { insert(EdgeSet(edge)) }
    }

    /// The set holding only `edge`.
    public init(_ edge: Edge) {
        switch edge {
        case .top: self = .top
        case .bottom: self = .bottom
        case .leading: self = .leading
        case .trailing: self = .trailing
        }
    }

    /// {top}
    public static let top = EdgeSet(rawValue: 1)
    /// {bottom}
    public static let bottom = EdgeSet(rawValue: 2)
    /// {leading}
    public static let leading = EdgeSet(rawValue: 4)
    /// {trailing}
    public static let trailing = EdgeSet(rawValue: 8)
    /// {leading, trailing}
    public static let horizontal: EdgeSet = [.leading, .trailing]
    /// All four edges.
    public static let all: EdgeSet = [.top, .bottom, .leading, .trailing]

    /// Whether `edge` is in the set.
    public func contains(_ edge: Edge) -> Bool {
        contains(EdgeSet(edge))
    }

    /// The edges in the set, in the order top, bottom, leading, trailing.
    public var edges: [Edge] {
        Edge.allCases.filter { contains($0) }
    }

    /// The edges not in the set.
    public var complement: EdgeSet {
        EdgeSet.all.subtracting(self)
    }

    /// `["top","bottom",…]` in edge order.
    public var jsonValue: JSONValue {
        .array(edges.map { .string($0.rawValue) })
    }

    /// `[top, leading]`.
    public var description: String {
        "[" + edges.map(\.rawValue).joined(separator: ", ") + "]"
    }
}
