import KbdSystem
import Testing

/// KbdSystem's substring search, which the service uses instead of _StringProcessing's.
struct TextSearchTests {
    @Test(arguments: [
        ("Permission denied", "denied", true),
        ("Permission denied", "Permission", true),
        ("Permission denied", "permission", false),
        ("abc", "abcd", false),
        ("aaab", "aab", true),
        ("", "", true),
        ("x", "", true),
        ("", "x", false),
        ("Clavier français é", "ç", true),
        ("Clavier français é", "é", true),
        ("sh -c 'echo ~/x'", "=~/", false),
        ("PATH=~/bin", "=~/", true),
    ])
    func includes(_ text: String, _ needle: String, _ expected: Bool) {
        #expect(text.includes(needle) == expected)
        #expect(Substring(text).includes(needle) == expected)
    }

    @Test func textAfter() {
        let line = "xkbcommon: WARNING: Unrecognized RMLVO option \"caps:escap\" was ignored"
        #expect(line.text(after: "option \"").map(String.init) == "caps:escap\" was ignored")
        #expect(line.text(after: "nothing like this") == nil)
        #expect("é-é".text(after: "é").map(String.init) == "-é")
        #expect("abc".text(after: "abc").map(String.init) == "")
    }
}
