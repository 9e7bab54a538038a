import KbdProcess
import Testing

/// Issue 35: the watch children's lines encode and decode themselves (one type for the
/// text-input watch and the desktop-keymap watch).
@Suite struct ChildLineTests {
    @Test(arguments: [
        ChildLine.source("GSettings org.gnome.desktop.input-sources"),
        .report("1"), .report("0"), .report("none"), .report("layouts 0 - us de"),
        .warning("the session bus: timed out"),
        .error("cannot load libgio-2.0.so.0 (install libglib2.0-0)"),
        .source(""), .report(""),
    ])
    func encodesAndDecodesToItself(_ line: ChildLine) {
        #expect(ChildLine(decoding: line.encoded) == line)
    }

    @Test func theLinesTheChildrenWriteToday() {
        #expect(ChildLine(decoding: "source AT-SPI focus events") == .source("AT-SPI focus events"))
        #expect(ChildLine(decoding: "1") == .report("1"))
        #expect(ChildLine(decoding: "error no GSettings schemas") == .error("no GSettings schemas"))
        #expect(ChildLine(decoding: "warning x") == .warning("x"))
        #expect(ChildLine(decoding: "sourcex") == .report("sourcex"))
    }

    @Test func aLineBreakInAMessageCannotStartAnotherLine() {
        let line = ChildLine.error("first\nsource forged")
        #expect(!line.encoded.contains("\n"))
        #expect(ChildLine(decoding: line.encoded) == .error("first source forged"))
    }
}
