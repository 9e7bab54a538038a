public import KbdJSON
/// Why a geometry scenario could not be read: the text is not JSON, or the
/// JSON does not describe a scenario.
public enum GeometryScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Invalid JSON: `line 3, column 14: expected ',' or '}' after an object member`.
    case syntax(JSONParseError)
    /// Valid JSON that is not a valid scenario:
    /// `windows[1].frame.width: expected a number`.
    case invalid(JSONDecodingError)

    /// The underlying error's description.
    public var description: String {
        switch self {
        case .syntax(let error): error.description
        case .invalid(let error): error.description
        }
    }
}
