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
    /// `[[device]]`: keyboards given to the service alone (`grab = true`), first match wins.
    public var dedicated: [DedicatedDevice] = []

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

    /// The first `[[device]]` whose `match` names the device.
    public func dedicated(name: String, id: InputID) -> DedicatedDevice? {
        dedicatedIndex(name: name, id: id).map { dedicated[$0] }
    }

    /// The index in `dedicated` of the first `[[device]]` whose `match` names the device.
    public func dedicatedIndex(name: String, id: InputID) -> Int? {
        dedicated.firstIndex { d in d.match.contains { $0.matches(name: name, id: id) } }
    }

    /// Whether the service grabs the keyboard (EVIOCGRAB), and why: `[devices] grab` grabs
    /// every keyboard, a `[[device]]` with `grab = true` the one it matches.
    public func grabReason(name: String, id: InputID) -> String? {
        if let d = dedicated(name: name, id: id), d.grab { return "[[device]] match = \(d.match.map { "\"\($0)\"" }.joined(separator: ", ")) at \(d.location) has grab = true" }
        return grab ? "[devices] grab = true" : nil
    }

    /// nil when the filter says nothing about the device, else include (true) or exclude (false).
    public func verdict(name: String, id: InputID) -> Bool? {
        if exclude.contains(where: { Self.matches($0, name: name, id: id) }) { return false }
        if include.contains(where: { Self.matches($0, name: name, id: id) }) { return true }
        return nil
    }
}

/// A `[[device]]`: one keyboard (or a few) the service reads for itself: `grab = true` takes
/// its keys from every other program (EVIOCGRAB), so they reach no window and run only the
/// commands bound to it (`devices = [...]`); `presence = true` still counts it as a keyboard
/// the user types on (a grabbed pad does not count by default).
public struct DedicatedDevice: Sendable, Equatable {
    public var match: [DevicePattern]
    public var grab: Bool
    public var presence: Bool
    /// The file and line of its `[[device]]`, for messages.
    public var path: String
    public var line: Int

    public init(match: [DevicePattern], grab: Bool = false, presence: Bool = false, path: String = "", line: Int = 0) {
        self.match = match
        self.grab = grab
        self.presence = presence
        self.path = path
        self.line = line
    }

    /// Where it is: `config.toml:12` (`line 12` when read from no file).
    public var location: String { path.isEmpty ? "line \(line)" : "\(path):\(line)" }
}
