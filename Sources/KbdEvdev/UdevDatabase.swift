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

    /// What the service reads of a node's record: `ID_INTEGRATION` and `ID_SEAT`.
    public struct Record: Sendable, Equatable {
        public var integration: KeyboardIntegration?
        /// The logind seat (`ID_SEAT`); nil: unset, which logind reads as `seat0`.
        public var seat: String?
    }

    /// `ID_INTEGRATION` of the node, nil when udev has no record or did not set it.
    public func integration(device: UInt64) -> KeyboardIntegration? { record(device: device)?.integration }

    /// The node's `ID_INTEGRATION` and `ID_SEAT`, nil when udev has no record.
    public func record(device: UInt64) -> Record? {
        let fd = open(path(device: device), O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // udev's records are a few hundred bytes; a longer one is searched in its first 8 KiB.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8192) { buffer -> Record in
            var filled = 0
            while filled < buffer.count {
                let n = read(fd, buffer.baseAddress! + filled, buffer.count - filled)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                filled += n
            }
            let bytes = UnsafeBufferPointer(rebasing: buffer[0..<filled])
            return Record(integration: Self.integration(in: bytes), seat: Self.seat(in: bytes))
        }
    }

    /// What udev's input_id builtin marked a node as (`E:ID_INPUT_KEYBOARD=1`,
    /// `E:ID_INPUT_SWITCH=1`); nil when the record has no `E:ID_INPUT=1` (no record, or
    /// input_id did not run on it yet).
    public struct InputMarks: Sendable, Equatable {
        public var keyboard: Bool
        public var switchDevice: Bool
        public init(keyboard: Bool, switchDevice: Bool) {
            self.keyboard = keyboard
            self.switchDevice = switchDevice
        }
    }

    /// The input_id marks of a character device number (`st_rdev`); nil without a record or marks.
    public func inputMarks(device: UInt64) -> InputMarks? {
        let fd = open(path(device: device), O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes.withUnsafeBufferPointer { Self.inputMarks(in: $0) }
    }

    /// The input_id marks of a database file's text.
    public static func inputMarks(in text: String) -> InputMarks? {
        var copy = Array(text.utf8)
        return copy.withUnsafeMutableBufferPointer { inputMarks(in: UnsafeBufferPointer($0)) }
    }

    static func inputMarks(in bytes: UnsafeBufferPointer<UInt8>) -> InputMarks? {
        guard let input = value(of: "E:ID_INPUT=", in: bytes), input.elementsEqual("1".utf8) else { return nil }
        let keyboard = value(of: "E:ID_INPUT_KEYBOARD=", in: bytes).map { $0.elementsEqual("1".utf8) } ?? false
        let switchDevice = value(of: "E:ID_INPUT_SWITCH=", in: bytes).map { $0.elementsEqual("1".utf8) } ?? false
        return InputMarks(keyboard: keyboard, switchDevice: switchDevice)
    }

    /// The `ID_SEAT` of a database file's text.
    public static func seat(in text: String) -> String? {
        var copy = Array(text.utf8)
        return copy.withUnsafeMutableBufferPointer { seat(in: UnsafeBufferPointer($0)) }
    }

    /// `E:ID_SEAT=NAME`: a seat name is `seat` followed by letters, digits, `-` and `_` (as
    /// logind accepts them); anything else is ignored (the device stays on `seat0`).
    static func seat(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let value = value(of: "E:ID_SEAT=", in: bytes), value.count <= 255, value.starts(with: "seat".utf8),
              value.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F })
        else { return nil }
        return String(decoding: value, as: UTF8.self)
    }

    /// The value of the first line starting with `key`, without making strings.
    static func value(of key: StaticString, in bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        let keyBytes = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        var lineStart = 0
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != 0x0A { lineEnd += 1 }
            if lineEnd - lineStart > keyBytes.count, (0..<keyBytes.count).allSatisfy({ bytes[lineStart + $0] == keyBytes[$0] }) {
                return UnsafeBufferPointer(rebasing: bytes[(lineStart + keyBytes.count)..<lineEnd])
            }
            lineStart = lineEnd + 1
        }
        return nil
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
