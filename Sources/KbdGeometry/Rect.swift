public import KbdJSON
/// An axis-aligned rectangle in points; origin top-left, y grows downwards.
///
/// Frames are always physical: `x` counts from the left edge even in a
/// right-to-left window. Widths and heights are not negative.
public struct Rect: Sendable, Hashable, CustomStringConvertible {
    /// The left edge.
    public var x: Double
    /// The top edge.
    public var y: Double
    /// The horizontal extent.
    public var width: Double
    /// The vertical extent.
    public var height: Double

    /// The rectangle with its top-left corner at (`x`, `y`).
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The rectangle at `origin` of `size`.
    public init(origin: Point, size: Size) {
        self.init(x: origin.x, y: origin.y, width: size.width, height: size.height)
    }

    /// The zero rectangle.
    public static let zero = Rect(x: 0, y: 0, width: 0, height: 0)

    /// The top-left corner.
    public var origin: Point {
        get { Point(x: x, y: y) }
        set { x = newValue.x; y = newValue.y }
    }

    /// The width and height.
    public var size: Size {
        get { Size(width: width, height: height) }
        set { width = newValue.width; height = newValue.height }
    }

    /// The left edge.
    public var minX: Double { x }
    /// The top edge.
    public var minY: Double { y }
    /// The right edge.
    public var maxX: Double { x + width }
    /// The bottom edge.
    public var maxY: Double { y + height }
    /// The horizontal centre.
    public var midX: Double { x + width / 2 }
    /// The vertical centre.
    public var midY: Double { y + height / 2 }

    /// Whether the rectangle has no area.
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The overlap of the two rectangles, or nil when they share no area
    /// (rectangles that only touch along an edge do not overlap).
    public func intersection(_ other: Rect) -> Rect? {
        let left = max(minX, other.minX)
        let right = min(maxX, other.maxX)
        let top = max(minY, other.minY)
        let bottom = min(maxY, other.maxY)
        guard right > left, bottom > top else { return nil }
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The rectangle moved by (`dx`, `dy`).
    public func offsetBy(dx: Double, dy: Double) -> Rect {
        Rect(x: x + dx, y: y + dy, width: width, height: height)
    }

    /// `{"x":…,"y":…,"width":…,"height":…}`, keys in that order.
    public var jsonValue: JSONValue {
        ["x": .number(x), "y": .number(y), "width": .number(width), "height": .number(height)]
    }

    /// `(x, y, W×H)`.
    public var description: String {
        "(\(JSONValue.formatNumber(x)), \(JSONValue.formatNumber(y)), \(size))"
    }
}

extension Optional where Wrapped == Rect {
    /// The rectangle's JSON, or `null`.
    var jsonValue: JSONValue {
        map(\.jsonValue) ?? .null
    }
}
