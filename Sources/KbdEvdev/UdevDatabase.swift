public import KbdCore
import KbdSystem

/// What udev recorded about a device node: its database file
/// (`/run/udev/data/c<major>:<minor>`) holds the properties as `E:NAME=value` lines.
/// Read without libudev: the service needs one property, `ID_INTEGRATION`, which
/// systemd's integration rules set to `internal` or `external`.
public struct UdevDatabase: Sendable {
    public static let defaultDirectory = "/run/udev/data"
    public let directory: String

    public init(directory: String = defaultDirectory) {
        self.directory = directory
    }

    /// The database file of a character device number (`st_rdev`).
    public func path(device: UInt64) -> String {
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        return "\(directory)/c\(major):\(minor)"
    }

    /// `ID_INTEGRATION` of the node, nil when udev has no record or did not set it.
    public func integration(device: UInt64) -> KeyboardIntegration? {
        guard let bytes = try? readFile(path: path(device: device), limit: 1 << 16, trust: .any) else { return nil }
        return Self.integration(in: String(decoding: bytes, as: UTF8.self))
    }

    /// The properties (`E:` lines) of a database file's text.
    public static func properties(in text: String) -> [String: String] {
        var out: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("E:") {
            let body = line.dropFirst(2)
            guard let eq = body.firstIndex(of: "=") else { continue }
            out[String(body[..<eq])] = String(body[body.index(after: eq)...])
        }
        return out
    }

    public static func integration(in text: String) -> KeyboardIntegration? {
        properties(in: text)["ID_INTEGRATION"].flatMap(KeyboardIntegration.init(rawValue:))
    }
}
