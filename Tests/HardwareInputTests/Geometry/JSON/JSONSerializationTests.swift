import KbdJSON
import KbdTOML
import KbdCore
import Testing

@Suite("JSON serialization")
struct JSONSerializationTests {
    struct Example: Sendable, CustomTestStringConvertible {
        let value: JSONValue
        let text: String
        var testDescription: String { text }
    }

    static let examples: [Example] = [
        Example(value: ["a": 1, "b": [true, .null]], text: #"{"a":1,"b":[true,null]}"#),
        Example(value: ["event": "geometry", "time": 1.25, "z": [:], "a": []], text: #"{"event":"geometry","time":1.25,"z":{},"a":[]}"#),
        Example(value: 398, text: "398"),
        Example(value: .number(398.0), text: "398"),
        Example(value: .number(-0.0), text: "0"),
        Example(value: -12, text: "-12"),
        Example(value: 0.1, text: "0.1"),
        Example(value: 519.5, text: "519.5"),
        Example(value: 1e-5, text: "1e-05"),
        Example(value: 1e300, text: "1e+300"),
        Example(value: 9_007_199_254_740_992, text: "9007199254740992"),
        Example(value: -9_007_199_254_740_992, text: "-9007199254740992"),
        Example(value: 9_007_199_254_740_994, text: "9.007199254740994e+15"),
        Example(value: .number(.nan), text: "null"),
        Example(value: .number(.infinity), text: "null"),
        Example(value: .number(-.infinity), text: "null"),
        Example(value: "plain", text: #""plain""#),
        Example(value: "a\"b\\c/", text: #""a\"b\\c/""#),
        Example(value: "line\nfeed\ttab\r\u{0}\u{1F}", text: #""line\u000afeed\u0009tab\u000d\u0000\u001f""#),
        Example(value: "é😀\u{7F}€", text: "\"é😀\\u007f€\""),
        Example(value: [[[]]], text: "[[[]]]"),
    ]

    @Test(arguments: examples)
    func serializesCompactly(_ example: Example) {
        #expect(example.value.serialized() == example.text)
    }

    @Test(arguments: examples.filter { $0.text != "null" })
    func roundTrips(_ example: Example) throws {
        let reparsed = try JSONValue.parse(example.value.serialized())
        #expect(reparsed == example.value)
        #expect(reparsed.serialized() == example.text)
    }

    @Test(arguments: [
        #"{"step":0,"layout":"docked","keyboard_frame":null,"windows":[{"id":"m","near":["bottom"]}]}"#,
        #"[1,-2.5,1e-07,"\u0001\"",{"":false}]"#,
        #"{"z":1,"a":2,"m":{"y":[],"b":{}}}"#,
    ])
    func parseThenSerializeIsIdentityOnCompactText(text: String) throws {
        #expect(try JSONValue.parse(text).serialized() == text)
    }

    @Test func whitespaceIsDroppedAndOrderKept() throws {
        let text = "{ \"b\" : [ 1 , 2 ] ,\n \"a\" : { \"y\" : null , \"x\" : \"\\u00e9\" } }"
        #expect(try JSONValue.parse(text).serialized() == #"{"b":[1,2],"a":{"y":null,"x":"é"}}"#)
    }

    @Test func escaperWritesLinesWithoutTrees() {
        var line = #"{"event":"attach","device":"#
        JSONValue.appendQuoted("Kbd \"Pro\"\n", to: &line)
        line += #","code":"#
        JSONValue.appendNumber(30, to: &line)
        line += "}"
        #expect(line == #"{"event":"attach","device":"Kbd \"Pro\"\u000a","code":30}"#)
        var inner = ""
        JSONValue.appendEscaped("a\\b", to: &inner)
        #expect(inner == #"a\\b"#)
        #expect(JSONValue.quoted("x") == #""x""#)
        #expect(JSONValue.formatNumber(2.5) == "2.5")
    }

    @Test func objectKeepsInsertionOrderAndReplacesInPlace() {
        var object: JSONObject = ["event": "key", "time": 1]
        object["code"] = "KEY_A"
        object["event"] = "chord"
        #expect(object.keys == ["event", "time", "code"])
        #expect(JSONValue.object(object).serialized() == #"{"event":"chord","time":1,"code":"KEY_A"}"#)
        #expect(object.updateValue(2, forKey: "time") == 1)
        #expect(object.removeValue(forKey: "event") == "chord")
        #expect(object.keys == ["time", "code"])
        #expect(object["code"] == "KEY_A")
        #expect(object["event"] == nil)
        object["time"] = nil
        #expect(object.keys == ["code"])
        #expect(object.count == 1)
        #expect(!object.isEmpty)
        #expect(object.members.map(\.key) == ["code"])
        #expect(Array(object).map(\.value) == ["KEY_A"])
    }

    @Test func objectEqualityIsOrderSensitive() {
        let ab: JSONObject = ["a": 1, "b": 2]
        let ba: JSONObject = ["b": 2, "a": 1]
        #expect(ab != ba)
        #expect(ab == JSONObject([("a", 1), ("b", 2)]))
        // A repeated key keeps its first position and its last value.
        #expect(JSONObject([("a", 1), ("b", 2), ("a", 3)]) == ["a": 3, "b": 2])
    }
}
