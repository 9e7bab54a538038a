import KbdCore
import KbdConfig
import KbdCommands
import KbdKeymap
import KbdTestSupport
import Testing

/// The command table's chord filter lets the router skip the hash lookups for keys bound
/// nowhere. It must never hide a bound chord (that would be a shortcut that does not fire),
/// and it should hide most unbound ones at every table size (the cost of routing a key must
/// not depend on how many commands there are).
@Suite struct ChordFilterTests {
    @Test(arguments: [10, 100, 1_000, 10_000])
    func everyBoundChordPassesAndMostUnboundOnesDoNot(_ count: Int) throws {
        let table = try ConfigLoader.parse(ConfigGenerator.commands(count), path: "big.toml").table
        var bound = Set<ChordKey>()
        for command in table.commands { bound.formUnion(command.keys) }
        let missed = bound.filter { !table.mayBind($0) }
        #expect(missed.isEmpty, "bound chords the filter hides: \(missed.prefix(5).map(\.description))")
        // Plain and Shift+ letters, digits and punctuation: typed text, rarely bound.
        var unbound = 0, passed = 0
        for raw in UInt32(0x20)...0x7E {
            for mods in [ModifierSet(), .shift] {
                let chord = ChordKey(modifiers: mods, keysym: Keysym(raw))
                guard !bound.contains(chord) else { continue }
                unbound += 1
                if table.mayBind(chord) { passed += 1 }
            }
        }
        #expect(unbound > 100)
        #expect(passed * 10 < unbound, "\(passed) of \(unbound) unbound typed chords pass the filter")
    }
}
