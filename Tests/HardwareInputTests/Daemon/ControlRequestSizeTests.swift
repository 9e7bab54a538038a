import KbdPipeline
import KbdJSON
import KbdKeymap
import KbdControl
import KbdProcess
import Testing

/// Requests as large as the control socket lets through (one line of at most 64 KiB) parse
/// in one pass, and the request parser accepts and rejects them exactly as small ones.
@Suite struct ControlRequestSizeTests {
    /// `{"request":NAME,"pad":[0,0,…]}` (or with `FIELD` as the array) padded to `bytes` bytes.
    static func padded(_ head: String, field: String = "pad", element: String = "0", bytes: Int) -> (line: String, elements: Int) {
        let open = head + ",\"\(field)\":["
        let room = bytes - open.utf8.count - 2
        let count = (room + 1) / (element.utf8.count + 1)
        return (open + Array(repeating: element, count: count).joined(separator: ",") + "]}", count)
    }

    struct Message: Error, Equatable { let text: String }

    struct Case: Sendable, CustomTestStringConvertible {
        let head: String
        let field: String
        let element: String
        /// The parsed request, or the error message.
        let expected: Result<ControlRequest, Message>
        var testDescription: String { "\(head) with \(field) of \(element)" }
    }

    static let cases: [Case] = [
        // The issue's attack: a ping carrying a 32,000-element array the server ignores.
        Case(head: #"{"request":"ping""#, field: "pad", element: "0", expected: .success(.ping)),
        Case(head: #"{"request":"list_commands""#, field: "pad", element: #"{"a":[1,2]}"#, expected: .success(.listCommands)),
        Case(head: #"{"request":"subscribe""#, field: "events", element: #""chord""#, expected: .success(.subscribe([.chord]))),
        Case(head: #"{"request":"set_scopes""#, field: "scopes", element: "0",
             expected: .failure(Message(text: #"set_scopes: expected "scopes" as an array of strings"#))),
        // Nesting is still limited (8 levels for a request) however long the line.
        Case(head: #"{"request":"ping""#, field: "pad", element: "[[[[[[[[0]]]]]]]]",
             expected: .failure(Message(text: "invalid JSON: line 1, column 32: expected at most 8 nested arrays and objects"))),
    ]

    @Test(.timeLimit(.minutes(1)), arguments: cases)
    func a64KiBRequestParsesAsASmallOneDoes(_ example: Case) throws {
        let (line, elements) = Self.padded(example.head, field: example.field, element: example.element, bytes: 65_000)
        #expect(line.utf8.count <= 65_000 && line.utf8.count > 64_000)
        #expect(elements > 3_000)
        let parsed = Result { () throws(ControlRequestError) -> ControlRequest in try ControlRequest.parse(line) }
        #expect(parsed.mapError { Message(text: $0.message) } == example.expected)
    }

    @Test func theIssuesRequestHolds32ThousandElements() throws {
        let (line, elements) = Self.padded(#"{"request":"ping""#, bytes: 65_000)
        #expect(elements > 32_000)
        #expect(try JSONValue.parse(line)["pad"]?.arrayValue?.count == elements)
    }
}
