/// A syntax error in JSON text, with where it is and what was expected there.
///
/// `description` reads `line 3, column 14: expected ',' or '}' after an object
/// member`. Lines and columns are 1-based; a line ends at LF, CR LF or a lone
/// CR; the column counts Unicode scalars (not bytes) from the line's start, so
/// it matches what an editor shows for text without tabs.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 1-based line of the offending character (or of the end of input).
    public var line: Int
    /// The 1-based column, in Unicode scalars, on that line.
    public var column: Int
    /// The 0-based UTF-8 byte offset in the text.
    public var offset: Int
    /// What was wrong, phrased as what was expected ("expected ':' after an object key").
    public var message: String

    /// An error at `line`, `column` (1-based) and byte `offset`.
    public init(line: Int, column: Int, offset: Int, message: String) {
        self.line = line
        self.column = column
        self.offset = offset
        self.message = message
    }

    /// `line L, column C: message`.
    public var description: String {
        "line \(line), column \(column): \(message)"
    }
}
