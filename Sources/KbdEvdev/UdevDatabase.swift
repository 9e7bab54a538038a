public import KbdCore
#if canImport(Glibc)
import Glibc
#endif

/// What udev recorded about a device node: its database file
/// (`/run/udev/data/c<major>:<minor>`) holds the properties as `E:NAME=value` lines.
/// Read without libudev: the service needs one property, `ID_INTEGRATION`, which
/// systemd's integration rules set to `internal` or `external`.
///
/// The file is read into a small stack buffer and searched byte by byte: the resident
/// service reads it for every device it opens, and parsing it into strings and a
/// dictionary pulled in enough standard-library code to cost ~0.8 MB of resident memory
/// (measured in the real-kernel idle test: 8,840 KiB against 8,060 KiB without the read).
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
        let fd = open(path(device: device), O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // udev's records are a few hundred bytes; a longer one is searched in its first 8 KiB.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8192) { buffer -> KeyboardIntegration? in
            var filled = 0
            while filled < buffer.count {
                let n = read(fd, buffer.baseAddress! + filled, buffer.count - filled)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                filled += n
            }
            return Self.integration(in: UnsafeBufferPointer(rebasing: buffer[0..<filled]))
        }
    }

    /// The `ID_INTEGRATION` of a database file's text.
    public static func integration(in text: String) -> KeyboardIntegration? {
        var copy = Array(text.utf8)
        return copy.withUnsafeMutableBufferPointer { integration(in: UnsafeBufferPointer($0)) }
    }

    /// Finds the line `E:ID_INTEGRATION=internal` (or `external`) without making strings.
    static func integration(in bytes: UnsafeBufferPointer<UInt8>) -> KeyboardIntegration? {
        let key: StaticString = "E:ID_INTEGRATION="
        let keyBytes = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        var lineStart = 0
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != 0x0A { lineEnd += 1 }
            if lineEnd - lineStart > keyBytes.count, (0..<keyBytes.count).allSatisfy({ bytes[lineStart + $0] == keyBytes[$0] }) {
                let value = UnsafeBufferPointer(rebasing: bytes[(lineStart + keyBytes.count)..<lineEnd])
                if value.elementsEqual("internal".utf8) { return .internal }
                if value.elementsEqual("external".utf8) { return .external }
                return nil
            }
            lineStart = lineEnd + 1
        }
        return nil
    }
}
