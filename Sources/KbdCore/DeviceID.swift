/// Identifies one input device for the lifetime of a pipeline (a replay or a daemon run).
public struct DeviceID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: Int
    public init(_ rawValue: Int) { self.rawValue = rawValue }
    public static func < (a: DeviceID, b: DeviceID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "device#\(rawValue)" }
}
