/// Where a value sits in a JSON document, for error messages:
/// `windows[1].frame.width`.
///
/// Keys that are identifiers (`[A-Za-z_][A-Za-z0-9_]*`) print after a dot;
/// other keys print as a quoted subscript (`labels["two words"]`). The root
/// prints as the empty string.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    /// One step down into a document.
    public enum Component: Sendable, Hashable {
        /// An object member.
        case key(String)
        /// An array element (0-based).
        case index(Int)
    }

    /// The steps from the root, outermost first.
    public var components: [Component]

    /// The root path, or a path made of `components`.
    public init(_ components: [Component] = []) {
        self.components = components
    }

    /// This path extended by an object key.
    public func appending(key: String) -> JSONPath {
        JSONPath(components + [.key(key)])
    }

    /// This path extended by an array index.
    public func appending(index: Int) -> JSONPath {
        JSONPath(components + [.index(index)])
    }

    /// `windows[1].frame.width`; empty for the root.
    public var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key):
                if Self.isIdentifier(key) {
                    if !text.isEmpty { text += "." }
                    text += key
                } else {
                    text += "["
                    JSONValue.appendQuoted(key, to: &text)
                    text += "]"
                }
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }

    private static func isIdentifier(_ key: String) -> Bool {
        guard let first = key.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return key.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
    }
}
