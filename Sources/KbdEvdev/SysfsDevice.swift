public import KbdCore
#if canImport(Glibc)
import Glibc
#endif

/// Where a character device lives in sysfs: `/sys/dev/char/MAJOR:MINOR` is a link to the
/// node's folder (`../../devices/virtual/input/input7/event5`), whose parent is the input
/// device. A uinput device (a program's keyboard, such as a remapper's) is under
/// `/devices/virtual/input` whatever bus it declares; a real one is under its bus's parent
/// (`/devices/pci0000:00/…/usb1/…`, `/devices/platform/i8042/serio0/…`; a uhid device, such
/// as a Bluetooth LE keyboard through BlueZ, is under `/devices/virtual/misc/uhid`).
public struct SysfsDevice: Sendable {
    public static let defaultRoot = "/sys"
    /// The sysfs mount (a test gives its own folder).
    public let root: String

    public init(root: String = defaultRoot) {
        self.root = root
    }

    /// The input device's path below the sysfs root (`/devices/virtual/input/input7`) of a
    /// character device number (`st_rdev`); nil when sysfs has no link for it.
    public func inputDevicePath(device: UInt64) -> String? {
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        let link = "\(root)/dev/char/\(major):\(minor)"
        let target: String? = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 4096) { buffer in
            let n = readlink(link, buffer.baseAddress!, buffer.count)
            guard n > 0, n < buffer.count else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: n), as: UTF8.self)
        }
        guard let target else { return nil }
        return Self.inputDevicePath(link: target)
    }

    /// A capability mask of a character device number's input device (`kind`: `key`, `sw`,
    /// `ev`), from `/sys/dev/char/MAJOR:MINOR/device/capabilities/KIND`, readable by anyone:
    /// hexadecimal words of a `long` each, the most significant first. Nil when sysfs has none.
    public func capabilities(device: UInt64, kind: String) -> Bitmask? {
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        let fd = open("\(root)/dev/char/\(major):\(minor)/device/capabilities/\(kind)", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 2048)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        return Self.capabilities(text: String(decoding: bytes[0..<n], as: UTF8.self))
    }

    /// Parses a sysfs capability mask (`"120013"`, `"3 0 0 ffefffdfffefffff fffffffffffffffe"`).
    public static func capabilities(text: String) -> Bitmask? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        var mask = Bitmask()
        let bitsPerWord = MemoryLayout<Int>.size * 8
        for (index, word) in words.reversed().enumerated() {
            guard let value = UInt64(word, radix: 16) else { return nil }
            for bit in 0..<bitsPerWord where value & (1 << UInt64(bit)) != 0 { mask.insert(index * bitsPerWord + bit) }
        }
        return mask
    }

    /// The link's target made absolute below the sysfs root and cut to the input device
    /// (`../../devices/virtual/input/input7/event5` → `/devices/virtual/input/input7`).
    public static func inputDevicePath(link: String) -> String? {
        var parts: [Substring] = []
        // The link is relative to /sys/dev/char.
        for part in [Substring("dev"), Substring("char")] + link.split(separator: "/") {
            switch part {
            case "", ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(part)
            }
        }
        // The node's folder (eventN) is in the input device's folder.
        if let last = parts.last, last.hasPrefix("event") { parts.removeLast() }
        guard parts.first == "devices" else { return nil }
        return "/" + parts.joined(separator: "/")
    }
}
