import KbdJSON
import KbdEvdev
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    struct Valid: Sendable, CustomTestStringConvertible {
        let text: String
        let value: JSONValue
        var testDescription: String { text.debugDescription }
    }

    static let valid: [Valid] = [
        Valid(text: "null", value: .null),
        Valid(text: "true", value: true),
        Valid(text: " false ", value: false),
        Valid(text: "0", value: 0),
        Valid(text: "-0", value: .number(-0.0)),
        Valid(text: "398", value: 398),
        Valid(text: "-12.5e2", value: -1250),
        Valid(text: "1E-2", value: 0.01),
        Valid(text: "6.02e+23", value: 6.02e23),
        Valid(text: #""""#, value: ""),
        Valid(text: "[]", value: []),
        Valid(text: "{}", value: .object([:])),
        Valid(text: "[1,[2,[3]]]", value: [1, [2, [3]]]),
        Valid(text: #"{"b":1,"a":[true,null]}"#, value: ["b": 1, "a": [true, .null]]),
        Valid(text: "\t\r\n[ 1 ,\n2 ]\n", value: [1, 2]),
        Valid(text: "\u{FEFF}[1]", value: [1]),
        Valid(text: #""\u0000""#, value: "\u{0}"),
        Valid(text: #""日本語 ok""#, value: "日本語 ok"),
        Valid(text: #"{"":{"x":[]}}"#, value: ["": ["x": []]]),
    ]

    @Test(arguments: valid)
    func parsesValidDocuments(_ example: Valid) throws {
        #expect(try JSONValue.parse(example.text) == example.value)
    }

    struct Invalid: Sendable, CustomTestStringConvertible {
        let text: String
        let message: String
        var testDescription: String { text.debugDescription }
    }

    static let invalid: [Invalid] = [
        Invalid(text: "", message: "line 1, column 1: expected a JSON value"),
        Invalid(text: "  ", message: "line 1, column 3: expected a JSON value"),
        Invalid(text: "{", message: "line 1, column 2: expected a string key or '}'"),
        Invalid(text: "{a:1}", message: "line 1, column 2: expected a string key or '}'"),
        Invalid(text: #"{"a" 1}"#, message: "line 1, column 6: expected ':' after an object key"),
        Invalid(text: #"{"a":1,}"#, message: "line 1, column 8: expected a string key after ','"),
        Invalid(text: #"{"a":1 "b":2}"#, message: "line 1, column 8: expected ',' or '}' after an object member"),
        Invalid(text: #"{"a":}"#, message: "line 1, column 6: expected a JSON value after ':'"),
        Invalid(text: "[", message: "line 1, column 2: expected a JSON value or ']'"),
        Invalid(text: "[1,]", message: "line 1, column 4: expected a JSON value after ','"),
        Invalid(text: "[1 2]", message: "line 1, column 4: expected ',' or ']' after an array element"),
        Invalid(text: "[1,2]]", message: "line 1, column 6: expected end of input after the JSON value"),
        Invalid(text: "1 2", message: "line 1, column 3: expected end of input after the JSON value"),
        Invalid(text: "tru", message: "line 1, column 1: expected 'true'"),
        Invalid(text: "[nul]", message: "line 1, column 2: expected 'null'"),
        Invalid(text: "True", message: "line 1, column 1: expected a JSON value"),
        Invalid(text: "NaN", message: "line 1, column 1: expected a JSON value"),
        Invalid(text: "+1", message: "line 1, column 1: expected a JSON value"),
        Invalid(text: "'a'", message: "line 1, column 1: expected a JSON value"),
        Invalid(text: "// comment\n1", message: "line 1, column 1: expected a JSON value"),
        Invalid(text: "01", message: "line 1, column 2: expected '.', 'e' or the end of the number after a leading '0'"),
        Invalid(text: "-", message: "line 1, column 2: expected a digit after '-'"),
        Invalid(text: "-a", message: "line 1, column 2: expected a digit after '-'"),
        Invalid(text: "1.", message: "line 1, column 3: expected a digit after '.'"),
        Invalid(text: ".5", message: "line 1, column 1: expected a JSON value"),
        Invalid(text: "1e+", message: "line 1, column 4: expected a digit in the exponent"),
        Invalid(text: "1e400", message: "line 1, column 1: expected a number within the range of a 64-bit float"),
        Invalid(text: #""abc"#, message: #"line 1, column 5: expected '"' to end the string"#),
        Invalid(text: "\"a\nb\"", message: "line 1, column 3: expected control character U+000A to be escaped in a string"),
        Invalid(text: "\"a\tb\"", message: "line 1, column 3: expected control character U+0009 to be escaped in a string"),
        Invalid(text: #""\x""#, message: #"line 1, column 2: expected an escape (\" \\ \/ \b \f \n \r \t or \uXXXX) after '\'"#),
        Invalid(text: #""\u12G4""#, message: #"line 1, column 2: expected 4 hex digits after '\u'"#),
        Invalid(text: #""\u12"#, message: #"line 1, column 2: expected 4 hex digits after '\u'"#),
        Invalid(text: #""\uD83D""#, message: #"line 1, column 8: expected a low surrogate (\uDC00-\uDFFF) after the high surrogate \uD83D"#),
        Invalid(text: #""\uD83D\u0041""#, message: #"line 1, column 8: expected a low surrogate (\uDC00-\uDFFF) after the high surrogate \uD83D"#),
        Invalid(text: #""\uDE00""#, message: #"line 1, column 2: expected a high surrogate (\uD800-\uDBFF) before the low surrogate \uDE00"#),
        Invalid(text: #"{"a":1,"a":2}"#, message: #"line 1, column 8: expected unique keys; "a" appears twice in this object"#),
        // The issue's own example: line 3, column 14.
        Invalid(text: "{\n  \"a\": 1,\n  \"width\": 1 \"x\": 2\n}", message: "line 3, column 14: expected ',' or '}' after an object member"),
        Invalid(text: "{\r\n\"a\":1\r\n,}", message: "line 3, column 2: expected a string key after ','"),
        Invalid(text: "{\r\"a\" 1}", message: "line 2, column 5: expected ':' after an object key"),
        // Columns count Unicode scalars, not bytes.
        Invalid(text: #"["é😀", x]"#, message: "line 1, column 8: expected a JSON value after ','"),
    ]

    @Test(arguments: invalid)
    func rejectsInvalidDocumentsWithLineAndColumn(_ example: Invalid) {
        do {
            _ = try JSONValue.parse(example.text)
            Issue.record("expected an error")
        } catch {
            #expect(error.description == example.message)
        }
    }

    @Test func errorCarriesLineColumnAndOffset() {
        do {
            _ = try JSONValue.parse("[1,\n  é x]")
            Issue.record("expected an error")
        } catch {
            #expect(error == JSONParseError(line: 2, column: 3, offset: 6, message: "expected a JSON value after ','"))
        }
    }

    @Test func decodesEscapes() throws {
        let text = #""\" \\ \/ \b \f \n \r \t \u00e9 \u00E9 \uD83D\uDE00 \u20AC""#
        #expect(try JSONValue.parse(text) == .string("\" \\ / \u{8} \u{C} \n \r \t é é 😀 €"))
    }

    @Test func escapedKeysAreKeys() throws {
        let value = try JSONValue.parse(#"{"k\u0065y":1}"#)
        #expect(value["key"] == 1)
    }

    @Test(arguments: [1, 2, 511, 512])
    func acceptsNestingUpToTheLimit(depth: Int) throws {
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try JSONValue.parse(text)
        var levels = 0
        while case .array(let elements) = value {
            levels += 1
            value = elements.first ?? .null
        }
        #expect(levels == depth)
    }

    @Test(arguments: [513, 200_000])
    func rejectsNestingBeyondTheLimit(depth: Int) {
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        do {
            _ = try JSONValue.parse(text)
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "line 1, column 513: expected at most 512 nested arrays and objects")
        }
    }

    @Test func customDepthLimitCountsObjectsToo() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"a":{"b":{}}}"#, maximumDepth: 2) }
        do {
            _ = try JSONValue.parse(#"{"a":{"b":{}}}"#, maximumDepth: 2)
        } catch {
            #expect(error.description == "line 1, column 11: expected at most 2 nested arrays and objects")
        }
        #expect(throws: Never.self) { try JSONValue.parse(#"{"a":{"b":1}}"#, maximumDepth: 2) }
    }

    /// Integers of up to 15 digits are read without making a string; every number still parses
    /// to exactly what `Double(text)` gives, sign of zero included.
    @Test(arguments: ["0", "-0", "7", "-7", "10", "398", "999999999999999", "-999999999999999", "123456789012345",
                      "1234567890123456", "9007199254740993", "-9007199254740993", "12345678901234567890", "0.5", "-0.0",
                      "1e3", "1E-2", "-12.5e2", "100000000000000000000000"])
    func numbersParseAsDoubleDoes(_ text: String) throws {
        let expected = try #require(Double(text))
        let parsed = try #require(try JSONValue.parse(text).numberValue)
        #expect(parsed.bitPattern == expected.bitPattern)
        #expect(try JSONValue.parse("[\(text)]")[0]?.numberValue?.bitPattern == expected.bitPattern)
    }

    /// Large containers, each with its element count. Parsing is linear: each case takes well
    /// under a second in a debug build. The parser before issue 17 copied a container on every
    /// element it appended (about n²/2 element copies: hours for these sizes).
    static let largeContainers: [(name: String, count: Int)] = [
        ("array", 1_000_000), ("object", 200_000), ("array of pairs", 300_000), ("array of objects", 200_000),
    ]

    static func largeContainer(_ name: String, _ count: Int) -> String {
        var text = ""
        switch name {
        case "array": text = "[" + Array(repeating: "0", count: count).joined(separator: ",") + "]"
        case "object": text = "{" + (0..<count).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        case "array of pairs": text = "[" + (0..<count).map { "[\($0),\"\($0)\"]" }.joined(separator: ",") + "]"
        default: text = "[" + (0..<count).map { "{\"i\":\($0)}" }.joined(separator: ",") + "]"
        }
        return text
    }

    /// A termination bound, not a latency check (see the plan of issue 17): a quadratic parser never finishes.
    @Test(.timeLimit(.minutes(1)), arguments: largeContainers)
    func largeContainersParseInLinearTime(name: String, count: Int) throws {
        let text = Self.largeContainer(name, count)
        let value = try JSONValue.parse(text)
        switch value {
        case .array(let elements): #expect(elements.count == count)
        case .object(let object): #expect(object.keys.count == count)
        default: Issue.record("expected a container")
        }
        #expect(value.serialized() == text)
    }

    @Test func deeplyNestedValueSerializes() throws {
        let text = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(try JSONValue.parse(text).serialized() == text)
    }

    @Test func accessors() throws {
        let value = try JSONValue.parse(#"{"n":2,"s":"x","b":true,"a":[1,"y"],"o":{"k":null},"f":2.5}"#)
        #expect(value["n"]?.numberValue == 2)
        #expect(value["n"]?.intValue == 2)
        #expect(value["f"]?.intValue == nil)
        #expect(value["s"]?.stringValue == "x")
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?[1] == "y")
        #expect(value["a"]?[2] == nil)
        #expect(value["o"]?["k"]?.isNull == true)
        #expect(value["missing"] == nil)
        #expect(value["a"]?.arrayValue?.count == 2)
        #expect(value.objectValue?.keys == ["n", "s", "b", "a", "o", "f"])
        #expect(value["s"]?.numberValue == nil)
        #expect(value.typeDescription == "an object")
    }
}
