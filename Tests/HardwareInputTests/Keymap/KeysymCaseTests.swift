import KbdCore
import KbdKeymap
import Testing

/// `Keysym.lowercased`/`uppercased` answer ASCII and the 0xFF00 block without calling
/// xkbcommon (they run several times per key press): every keysym of those ranges, and a
/// sample of the others, must give what `xkb_keysym_to_lower`/`_upper` give.
@Suite struct KeysymCaseTests {
    static let shortcutRanges: [ClosedRange<UInt32>] = [0x0...0x7F, 0xFF00...0xFFFF]
    static let otherSamples: [UInt32] = [0xA0, 0xB5, 0xC0, 0xD7, 0xDE, 0xDF, 0xE0, 0xF7, 0xFF, 0x1A1, 0x6C1, 0x6E1, 0x7C1,
                                         0x7E1, 0xFE01, 0xFE20, 0x1000100, 0x1000101, 0x10001E9E, 0x1001E9E, 0x100]

    @Test(arguments: shortcutRanges)
    func shortcutsAgreeWithXkbcommon(_ range: ClosedRange<UInt32>) {
        var disagreements: [String] = []
        for raw in range {
            let k = Keysym(raw)
            if k.lowercased != k.lowercasedByXkb { disagreements.append("lower 0x\(String(raw, radix: 16))") }
            if k.uppercased != k.uppercasedByXkb { disagreements.append("upper 0x\(String(raw, radix: 16))") }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    }

    @Test(arguments: otherSamples)
    func othersAreXkbcommons(_ raw: UInt32) {
        let k = Keysym(raw)
        #expect(k.lowercased == k.lowercasedByXkb)
        #expect(k.uppercased == k.uppercasedByXkb)
    }

    @Test func lettersAreCasedAndDigitsAreNot() {
        #expect(Keysym(0x61).isCased && Keysym(0x5A).isCased && Keysym(0xE9).isCased)
        #expect(!Keysym(0x31).isCased && !Keysym(0xFF0D).isCased && !Keysym(0x40).isCased && !Keysym(0x5B).isCased)
        #expect(Keysym(0x41).lowercased == Keysym(0x61) && Keysym(0x7A).uppercased == Keysym(0x5A))
    }
}
