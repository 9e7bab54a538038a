import KbdJSON
import KbdTOML
import KbdCore
import KbdGeometry
import KbdEvdev
import KbdControl
import Testing

@Suite("JSON decoding helpers")
struct JSONDecodingTests {
    @Test func pathsPrintLikeAccessExpressions() {
        #expect(JSONPath().description == "")
        #expect(JSONPath([.key("windows"), .index(1), .key("frame"), .key("width")]).description == "windows[1].frame.width")
        #expect(JSONPath([.index(0), .key("a")]).description == "[0].a")
        #expect(JSONPath([.key("labels"), .key("two words")]).description == #"labels["two words"]"#)
        #expect(JSONPath([.key("1st")]).description == #"["1st"]"#)
        #expect(JSONPath().appending(key: "steps").appending(index: 2).description == "steps[2]")
    }

    @Test func errorDescriptionIsPathColonMessage() {
        let error = JSONDecodingError(path: JSONPath([.key("windows"), .index(1), .key("frame"), .key("width")]), message: "expected a number")
        #expect(error.description == "windows[1].frame.width: expected a number")
        #expect(JSONDecodingError(path: JSONPath(), message: "expected an object").description == "expected an object")
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let json: String
        let message: String
        var testDescription: String { json }
    }

    /// Decodes `{"size": {"width": number, "height": number}, "tags": [string], "mode": "a"|"b", "count": integer ≥ 0}`.
    static func decode(_ text: String) throws -> String {
        let root = try JSONNode(JSONValue.parse(text)).object()
        try root.checkKeys(allowed: ["size", "tags", "mode", "count"])
        let size = try root.required("size").object()
        try size.checkKeys(allowed: ["width", "height"])
        let width = try size.required("width").positiveNumber()
        let height = try size.required("height").nonNegativeNumber()
        let tags = try root["tags"]?.array().map { node throws(JSONDecodingError) in try node.string() } ?? []
        let mode: Int = try root["mode"]?.oneOf([("a", 1), ("b", 2)]) ?? 0
        let count = try root["count"]?.nonNegativeInteger() ?? 0
        return "\(width)x\(height) \(tags) \(mode) \(count)"
    }

    static let cases: [Case] = [
        Case(json: "[]", message: "expected an object"),
        Case(json: "{}", message: #"missing required key "size""#),
        Case(json: #"{"size":{"width":1,"height":2},"colour":1}"#, message: "colour: unknown key; expected one of size, tags, mode, count"),
        Case(json: #"{"size":{"width":"1","height":2}}"#, message: "size.width: expected a number"),
        Case(json: #"{"size":{"width":0,"height":2}}"#, message: "size.width: expected a positive number"),
        Case(json: #"{"size":{"width":1,"height":-2}}"#, message: "size.height: expected a non-negative number"),
        Case(json: #"{"size":{"width":1}}"#, message: #"size: missing required key "height""#),
        Case(json: #"{"size":{"width":1,"height":2},"tags":["a",3]}"#, message: "tags[1]: expected a string"),
        Case(json: #"{"size":{"width":1,"height":2},"tags":{}}"#, message: "tags: expected an array"),
        Case(json: #"{"size":{"width":1,"height":2},"mode":"c"}"#, message: #"mode: expected one of "a", "b""#),
        Case(json: #"{"size":{"width":1,"height":2},"count":1.5}"#, message: "count: expected an integer"),
        Case(json: #"{"size":{"width":1,"height":2},"count":-1}"#, message: "count: expected a non-negative integer"),
        Case(json: #"{"size":null}"#, message: "size: expected an object"),
    ]

    @Test(arguments: cases)
    func reportsPathAndExpectation(_ example: Case) {
        do {
            _ = try Self.decode(example.json)
            Issue.record("expected an error")
        } catch let error as JSONDecodingError {
            #expect(error.description == example.message)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func decodesValidInput() throws {
        #expect(try Self.decode(#"{"size":{"width":1,"height":0},"tags":["x"],"mode":"b","count":3}"#) == #"1.0x0.0 ["x"] 2 3"#)
    }

    @Test func typedAccessorsOnNodes() throws {
        let node = JSONNode(true, path: JSONPath([.key("flag")]))
        #expect(try node.bool())
        #expect(throws: JSONDecodingError(path: JSONPath([.key("flag")]), message: "expected a number")) {
            try node.number()
        }
        #expect(throws: JSONDecodingError(path: JSONPath([.key("flag")]), message: "expected a string")) {
            try node.string()
        }
        #expect(try JSONNode(-3).integer() == -3)
        let missing = JSONObjectNode(["a": 1], path: JSONPath([.key("o")]))
        #expect(missing["b"] == nil)
        #expect(missing["a"]?.path.description == "o.a")
        #expect(throws: JSONDecodingError(path: JSONPath([.key("o"), .key("x")]), message: "unknown key for a test; expected one of b")) {
            try JSONObjectNode(["x": 1], path: JSONPath([.key("o")])).checkKeys(allowed: ["b"], context: "a test")
        }
    }
}
