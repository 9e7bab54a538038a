/// A loaded configuration: keymap names, settings and the command table.
public struct Config: Sendable {
    public var path: String
    /// `[keymap]`: what the file asks for (unset fields fall back to the environment, then `us`).
    public var keymap: KeymapNames
    public var table: CommandTable
    /// `[devices]`: which devices to watch besides the automatic keyboard detection.
    public var devices: DeviceFilter
    /// `[geometry]`: the raw table, interpreted by the geometry model when present.
    public var geometry: TOMLTable?

    public init(path: String, keymap: KeymapNames = KeymapNames(), table: CommandTable, devices: DeviceFilter = DeviceFilter(), geometry: TOMLTable? = nil) {
        self.path = path
        self.keymap = keymap
        self.table = table
        self.devices = devices
        self.geometry = geometry
    }

    /// An empty configuration (no commands), for replay without `--config`.
    public static func empty() -> Config {
        Config(path: "<none>", table: try! CommandTable(commands: []))
    }
}

/// Device selection from `[devices]`: names or `vendor:product` ids to include
/// even if they do not look like keyboards, or to exclude even if they do.
public struct DeviceFilter: Sendable, Equatable {
    public var include: [String]
    public var exclude: [String]
    /// Grab devices (EVIOCGRAB) so other programs do not see their keys.
    public var grab: Bool

    public init(include: [String] = [], exclude: [String] = [], grab: Bool = false) {
        self.include = include
        self.exclude = exclude
        self.grab = grab
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
