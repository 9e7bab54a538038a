@testable import KbdConfig
import KbdSystem
import KbdCore
import KbdCommands
import Testing

/// Issue 24: the config's keys live in one table (ConfigLoader.keys): a key is added in one
/// place, and what is generated from the table (unknown-key messages, drop-in merging, the
/// one-file-only check) follows. The table and the manual must agree.
@Suite struct ConfigKeyTableTests {
    @Test func everyKeyIsUniqueAndDocumented() throws {
        let names = ConfigLoader.keys.map { "\($0.section).\($0.name)" }
        #expect(Set(names).count == names.count)
        #expect(ConfigLoader.keys.allSatisfy { !$0.doc.isEmpty })
        #expect(Set(ConfigLoader.keys.map(\.section)) == Set(ConfigLoader.keyedSections))
        let manual = String(decoding: try readWholeFile(path: Fixtures.root + "/../../../man/kbd-commandd.toml.5", limit: 1 << 20), as: UTF8.self)
        for key in ConfigLoader.keys {
            #expect(manual.contains(key.name), "kbd-commandd.toml(5) does not mention \(key.section).\(key.name)")
        }
    }

    /// Each file's keys reach the merged config through the table's merge (a key may be set in
    /// one file only: the check comes from the same table).
    @Test func dropInsMergeKeyByKey() throws {
        let dir = ConfigDropIns(prefix: "kbd-config-keys")
        try dir.write("config.toml", "[settings]\nsequence_timeout_ms = 900\n[accessibility]\nsticky_keys = true\n")
        try dir.write("config.d/10-a.toml", "[settings]\npresence = \"external-only\"\n")
        let config = try ConfigLoader.load(dir.files)
        #expect(config.table.sequenceTimeoutMilliseconds == 900)
        #expect(config.presence == .externalOnly)
        #expect(config.stickyKeys)
    }
}
