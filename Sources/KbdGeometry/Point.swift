import KbdJSON
/// A point in points; origin top-left, y grows downwards.
public struct Point: Sendable, Hashable, CustomStringConvertible {
    /// Distance from the left edge.
    public var x: Double
    /// Distance from the top edge.
    public var y: Double

    /// The point (`x`, `y`).
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The origin (0, 0).
    public static let zero = Point(x: 0, y: 0)

    /// `(x, y)`.
    public var description: String {
        "(\(JSONValue.formatNumber(x)), \(JSONValue.formatNumber(y)))"
    }
}
