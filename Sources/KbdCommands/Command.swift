public import KbdCore
public import KbdKeymap
/// One entry of the command table.
public struct Command: Sendable, Hashable {
    public var id: String
    public var title: String
    /// The chord, or the chords of a sequence, in order.
    public var keys: [ChordKey]
    /// The keys as the config wrote them, for listings.
    public var keysText: String
    public var scope: String
    /// Fire again on key repeat.
    public var `repeat`: Bool
    /// Fire even while text input is active.
    public var priorityOverTextInput: Bool
    /// Program and arguments to execute (no shell); empty for none.
    public var run: [String]
    /// Where it was defined, for error messages.
    public var location: SourceLocation

    public init(
        id: String, title: String, keys: [ChordKey], keysText: String? = nil, scope: String = CommandTable.globalScope,
        repeat: Bool = false, priorityOverTextInput: Bool = false, run: [String] = [],
        location: SourceLocation = SourceLocation(path: "<memory>", line: 0)
    ) {
        self.id = id
        self.title = title
        self.keys = keys
        self.keysText = keysText ?? keys.map(\.description).joined(separator: " ")
        self.scope = scope
        self.repeat = `repeat`
        self.priorityOverTextInput = priorityOverTextInput
        self.run = run
        self.location = location
    }

    /// The chord string in canonical form (`Ctrl+X Ctrl+S`).
    public var chordText: String { keys.map(\.description).joined(separator: " ") }
    public var isSequence: Bool { keys.count > 1 }
}
