extension String {
    /// This text with every control character written as an escape: `\n`, `\r`,
    /// `\t`, and `\u{XX}` for the rest of C0, DEL, C1 and the Unicode line and
    /// paragraph separators. Device names, file contents and client requests go
    /// through this before they reach a log line or a line of text output, so
    /// that a device called `"x\nINFO command ran"` cannot forge a log line and
    /// an escape sequence in a name cannot drive the terminal showing the log.
    public var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: Self.isControl) else { return self }
        var out = ""
        out.reserveCapacity(utf8.count + 8)
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where Self.isControl(scalar): out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether the text has a character `escapingControlCharacters` would escape.
    public var containsControlCharacters: Bool { unicodeScalars.contains(where: Self.isControl) }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029
    }
}
