/// Device selection from `[devices]`: names or `vendor:product` ids to include
/// even if they do not look like keyboards, or to exclude even if they do.
public struct DeviceFilter: Sendable, Equatable {
    public var include: [String]
    public var exclude: [String]
    /// Grab devices (EVIOCGRAB) so other programs do not see their keys.
    public var grab: Bool
    /// Keyboards to count as built in, as plugged in, or as a program's (never counted for
    /// presence), whatever their bus says.
    public var `internal`: [String]
    public var external: [String]
    public var virtual: [String]

    public init(include: [String] = [], exclude: [String] = [], grab: Bool = false, internal: [String] = [], external: [String] = [],
                virtual: [String] = []) {
        self.include = include
        self.exclude = exclude
        self.grab = grab
        self.internal = `internal`
        self.external = external
        self.virtual = virtual
    }

    /// The integration the config forces on the device, if any.
    public func integration(name: String, id: InputID) -> KeyboardIntegration? {
        if `internal`.contains(where: { Self.matches($0, name: name, id: id) }) { return .internal }
        if external.contains(where: { Self.matches($0, name: name, id: id) }) { return .external }
        if virtual.contains(where: { Self.matches($0, name: name, id: id) }) { return .virtual }
        return nil
    }

    /// Whether an entry (a device name, or `vvvv:pppp` in hex) names the device.
    static func matches(_ entry: String, name: String, id: InputID) -> Bool {
        entry == name || entry.lowercased() == id.vendorProduct
    }

    /// nil when the filter says nothing about the device, else include (true) or exclude (false).
    public func verdict(name: String, id: InputID) -> Bool? {
        if exclude.contains(where: { Self.matches($0, name: name, id: id) }) { return false }
        if include.contains(where: { Self.matches($0, name: name, id: id) }) { return true }
        return nil
    }
}
