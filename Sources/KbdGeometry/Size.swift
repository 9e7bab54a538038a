public import KbdJSON
/// A width and a height in points.
public struct Size: Sendable, Hashable, CustomStringConvertible {
    /// The horizontal extent.
    public var width: Double
    /// The vertical extent.
    public var height: Double

    /// A size of `width` × `height`.
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// 0 × 0.
    public static let zero = Size(width: 0, height: 0)

    /// `{"width":…,"height":…}`.
    public var jsonValue: JSONValue {
        ["width": .number(width), "height": .number(height)]
    }

    /// `W×H`.
    public var description: String {
        "\(JSONValue.formatNumber(width))×\(JSONValue.formatNumber(height))"
    }
}
