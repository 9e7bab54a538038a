import HardwareInput
#if canImport(Glibc)
import Glibc
#endif
import KbdTestSupport
import Testing

/// The module map as the compiler sees it: every `import` in every source file, checked
/// against the floors of docs/architecture.md ("Module map"). SwiftPM already refuses a cycle; these
/// tests fail when an arrow points the wrong way or a module reaches past its floor.
@Suite struct ModuleArrowTests {
    /// What each target may import (C modules and the system libraries included).
    static let allowed: [String: Set<String>] = [
        "KbdJSON": [],
        "KbdTOML": [],
        "KbdSystem": ["CLinux"],
        "KbdCore": ["KbdSystem", "CEvdev"],
        "KbdGeometry": ["KbdJSON"],
        "KbdKeymap": ["KbdCore", "KbdSystem", "CXkb"],
        "KbdRecording": ["KbdCore", "KbdSystem"],
        "KbdEvdev": ["KbdCore", "KbdSystem", "CEvdev", "CLinux"],
        "KbdCommands": ["KbdCore", "KbdKeymap", "KbdSystem"],  // KbdSystem: escaping the config's text in listings
        "KbdPipeline": ["KbdCore", "KbdKeymap", "KbdCommands", "KbdGeometry"],
        "KbdConfig": ["KbdTOML", "KbdJSON", "KbdSystem", "KbdCore", "KbdKeymap", "KbdCommands", "KbdGeometry"],
        "KbdControl": ["KbdJSON", "KbdSystem", "KbdCore", "KbdKeymap", "KbdCommands", "KbdGeometry", "KbdPipeline"],
        // Handed a device source: never KbdEvdev or KbdRecording.
        "KbdDaemon": ["KbdSystem", "KbdCore", "KbdKeymap", "KbdCommands", "KbdPipeline", "KbdConfig", "KbdControl",
                      "KbdGeometry", "KbdJSON", "CLinux", "Logging"],
    ]
    /// Imported by anything: the platform, never a module of ours.
    static let platform: Set<String> = ["Glibc", "Darwin", "Synchronization"]
    static let codecs: Set<String> = ["KbdJSON", "KbdTOML"]
    static let libraryTargets = allowed.keys.sorted() + ["HardwareInput", "KbdService"]

    /// `import X` lines of every Swift file below Sources/TARGET (any access level, `@_exported` too).
    static func imports(of target: String) -> [(file: String, module: String)] {
        let dir = Fixtures.root.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
            + "/Sources/" + target
        var out: [(String, String)] = []
        for file in Files.list(dir, suffix: ".swift") {
            guard let text = try? String(decoding: readWholeFile(path: file, limit: 1 << 20), as: UTF8.self) else { continue }
            for line in text.split(separator: "\n") {
                var words = line.split(separator: " ").map(String.init)
                while let first = words.first, ["@_exported", "public", "package", "internal", "@preconcurrency"].contains(first) {
                    words.removeFirst()
                }
                if words.count >= 2, words[0] == "import" { out.append((file, words[1])) }
            }
        }
        return out
    }

    @Test("every target imports only what its floor allows", arguments: allowed.keys.sorted())
    func floors(target: String) {
        let found = Self.imports(of: target)
        #expect(!found.isEmpty || target == "KbdJSON" || target == "KbdTOML", "no sources found for \(target)")
        for (file, module) in found where !Self.platform.contains(module) {
            #expect(Self.allowed[target]!.contains(module), "\(file): \(target) imports \(module), which is not on its floor")
        }
    }

    @Test("no codec below the config and the wire", arguments: ["KbdSystem", "KbdCore", "KbdKeymap", "KbdRecording", "KbdEvdev", "KbdCommands", "KbdPipeline"])
    func noCodec(target: String) {
        for (file, module) in Self.imports(of: target) {
            #expect(!Self.codecs.contains(module), "\(file): \(target) imports the codec \(module)")
        }
    }

    @Test("Logging only in the daemon and above", arguments: allowed.keys.sorted().filter { $0 != "KbdDaemon" })
    func loggingOnlyAbove(target: String) {
        for (file, module) in Self.imports(of: target) {
            #expect(module != "Logging", "\(file): \(target) imports Logging")
        }
    }

    @Test("no Foundation or ArgumentParser in the library or the service", arguments: libraryTargets + ["kbd-commandd-daemon", "KbdTestSupport"])
    func noFoundation(target: String) {
        for (file, module) in Self.imports(of: target) {
            #expect(!module.hasPrefix("Foundation") && module != "ArgumentParser", "\(file): \(target) imports \(module)")
        }
    }

    @Test("the check itself sees a wrong arrow")
    func seesViolations() {
        // KbdDaemon imports Logging and KbdControl: both would be violations for KbdPipeline.
        let daemon = Set(Self.imports(of: "KbdDaemon").map(\.module))
        #expect(daemon.contains("Logging") && daemon.contains("KbdControl"))
        #expect(!Self.allowed["KbdPipeline"]!.contains("Logging") && !Self.allowed["KbdPipeline"]!.contains("KbdControl"))
    }
}

/// Lists files below a directory (no Foundation).
enum Files {
    static func list(_ dir: String, suffix: String) -> [String] {
        var out: [String] = []
        for (name, isDirectory) in Directory.entries(dir) {
            let path = dir + "/" + name
            if isDirectory { out += list(path, suffix: suffix) } else if name.hasSuffix(suffix) { out.append(path) }
        }
        return out.sorted()
    }
}
