/// One entry of a command's `devices = [...]` or a `[[device]]`'s `match`: a USB or
/// Bluetooth `vendor:product` id in hex (`046d:c52b`), or a glob on the device's name
/// (`*`: any run of characters, `?`: one character; `"Keychron*"`).
public struct DevicePattern: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// Vendor and product, both matched.
        case id(vendor: UInt16, product: UInt16)
        /// A glob on the name.
        case name(String)
    }

    public let kind: Kind
    public let text: String

    /// Parses an entry: `VVVV:PPPP` (one to four hex digits each) is an id, anything else
    /// non-empty a name glob. Throws a message for an empty entry or a malformed id.
    public init(parsing text: String) throws(DevicePatternError) {
        guard !text.isEmpty else { throw DevicePatternError(message: "expected a vendor:product id such as \"046d:c52b\" or a device name glob such as \"Keychron*\", found an empty string") }
        self.text = text
        let halves = text.split(separator: ":", omittingEmptySubsequences: false)
        let hex = { (s: Substring) in !s.isEmpty && s.count <= 4 && s.allSatisfy(\.isHexDigit) }
        if halves.count == 2, halves.allSatisfy(hex), let v = UInt16(halves[0], radix: 16), let p = UInt16(halves[1], radix: 16) {
            kind = .id(vendor: v, product: p)
        } else if halves.count == 2, !halves[0].isEmpty, halves[0].allSatisfy(\.isHexDigit), !halves[1].isEmpty,
                  halves[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            throw DevicePatternError(message: "'\(text)' is not a vendor:product id: expected four hex digits on each side of the ':', such as \"046d:c52b\" ('kbd-commandd devices' lists the ids)")
        } else {
            kind = .name(text)
        }
    }

    public var description: String { text }

    /// Whether the pattern names the device.
    public func matches(name: String, id: InputID) -> Bool {
        switch kind {
        case .id(let v, let p): return id.vendor == v && id.product == p
        case .name(let glob): return Self.glob(Array(glob.unicodeScalars), Array(name.unicodeScalars))
        }
    }

    /// `*` any run, `?` one character, everything else itself.
    static func glob(_ p: [Unicode.Scalar], _ s: [Unicode.Scalar]) -> Bool {
        var pi = 0, si = 0, star = -1, mark = 0
        while si < s.count {
            if pi < p.count, p[pi] == "?" || p[pi] == s[si] {
                pi += 1; si += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi; mark = si; pi += 1
            } else if star >= 0 {
                pi = star + 1; mark += 1; si = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}

public struct DevicePatternError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Who a keyboard is, for commands bound to keyboards (`devices = [...]`): its name and
/// id, and whether the service grabbed it for itself (`[[device]] grab = true`: then only
/// the commands bound to it run from its keys).
public final class DeviceIdentity: Sendable {
    public let name: String
    public let id: InputID
    public let grabbed: Bool

    public init(name: String, id: InputID, grabbed: Bool = false) {
        self.name = name
        self.id = id
        self.grabbed = grabbed
    }

    public func matches(_ patterns: [DevicePattern]) -> Bool { patterns.contains { $0.matches(name: name, id: id) } }
}
