import KbdSystem
import KbdCore
import KbdKeymap
import KbdEvdev
import KbdCommands
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
        // logind through sd-login: libsystemd loaded with dlopen (CSystemd's shim).
        "KbdSeats": ["KbdCore", "KbdSystem", "CSystemd"],
        "KbdCommands": ["KbdCore", "KbdKeymap", "KbdSystem"],  // KbdSystem: escaping the config's text in listings
        "KbdPipeline": ["KbdCore", "KbdKeymap", "KbdCommands", "KbdGeometry"],
        "KbdConfig": ["KbdTOML", "KbdJSON", "KbdSystem", "KbdCore", "KbdKeymap", "KbdCommands", "KbdGeometry"],
        // KbdConfig: a registered table is held to a config's rules; CLinux: SO_PEERCRED.
        "KbdControl": ["KbdJSON", "KbdSystem", "KbdCore", "KbdKeymap", "KbdCommands", "KbdGeometry", "KbdPipeline", "KbdConfig", "CLinux"],
        // The process floor (issue 35): the event loop, the command runner and CSpawn, forked
        // children, exit codes, arguments, the stderr log handler, sd_notify. Not the wire.
        "KbdProcess": ["KbdSystem", "KbdCore", "CLinux", "CSpawn", "Logging"],
        // Handed a device source: never KbdEvdev or KbdRecording.
        "KbdDaemon": ["KbdSystem", "KbdCore", "KbdKeymap", "KbdCommands", "KbdPipeline", "KbdConfig", "KbdControl",
                      "KbdGeometry", "KbdSeats", "KbdProcess", "CLinux", "Logging"],
        // The umbrella: re-exports the library for tools and tests outside the package.
        "HardwareInput": Self.library,
        // Floor 7 and the helpers: what they use, by name; never the umbrella.
        "KbdService": Self.library.subtracting(["KbdTOML"]).union(["CLinux", "Logging"]),
        // The agent: the wire through KbdControl's client, its config, the process floor (the
        // runner, children, options) it shares with the daemon and the bar, the desktop's C
        // libraries; JSON for sway/i3 IPC and Hyprland. Never KbdService or KbdDaemon.
        "KbdAgent": ["KbdJSON", "KbdTOML", "KbdSystem", "KbdCore", "KbdKeymap", "KbdCommands", "KbdPipeline", "KbdConfig", "KbdControl",
                     "KbdProcess", "CLinux", "CSystemd", "CGio", "CXcb", "Logging"],
        "KbdTestSupport": Self.library.union(["CLinux", "Logging", "Synchronization"]),
        // The shortcuts bar: the wire's types and client, the geometry's metrics, TOML for its
        // one key ([bar] enabled; not the config loader); no toolkit (what to show is decided
        // without one), no Logging.
        "KbdBar": ["KbdProcess", "KbdControl", "KbdGeometry", "KbdJSON", "KbdTOML", "KbdPipeline", "KbdCommands"],
        // Its executable: KbdBar drawn by the GTK shim; exit codes and the version.
        "kbd-commandd-bar": ["KbdBar", "CBarShim", "KbdControl", "KbdProcess", "KbdSystem"],
        "kbd-commandd-agent": ["KbdAgent"],
        "kbd-commandd-daemon": ["KbdService"],
        // KbdAgent: `portal list|revoke` read and write the agent's approvals file with its codec.
        "kbd-commandd": Self.library.union(["KbdService", "KbdAgent", "CLinux", "ArgumentParser", "Logging"]),
        "kbd-bench": Self.library.union(["KbdService", "KbdTestSupport", "Logging", "Synchronization"]),
        // The control target's logind is KbdTestSupport's FakeLogin.
        "kbd-fuzz": Self.library.union(["KbdTestSupport"]),
    ]
    /// The library's modules (what the umbrella re-exports).
    static let library: Set<String> = ["KbdJSON", "KbdTOML", "KbdSystem", "KbdCore", "KbdGeometry", "KbdKeymap", "KbdRecording",
                                       "KbdEvdev", "KbdSeats", "KbdCommands", "KbdPipeline", "KbdConfig", "KbdControl", "KbdProcess", "KbdDaemon"]
    /// Imported by anything: the platform, never a module of ours.
    static let platform: Set<String> = ["Glibc", "Darwin", "Synchronization"]
    static let codecs: Set<String> = ["KbdJSON", "KbdTOML"]
    static let libraryTargets = ["KbdJSON", "KbdTOML", "KbdSystem", "KbdCore", "KbdGeometry", "KbdKeymap", "KbdRecording", "KbdEvdev",
                                 "KbdSeats", "KbdCommands", "KbdPipeline", "KbdConfig", "KbdControl", "KbdProcess", "KbdDaemon", "HardwareInput", "KbdService"]
    /// Every Swift target of Package.swift (the C ones have no Swift to read).
    static let swiftTargets = ["KbdJSON", "KbdTOML", "KbdSystem", "KbdCore", "KbdGeometry", "KbdKeymap", "KbdRecording", "KbdEvdev",
                               "KbdSeats", "KbdCommands", "KbdPipeline", "KbdConfig", "KbdControl", "KbdProcess", "KbdDaemon", "HardwareInput", "KbdTestSupport",
                               "KbdService", "KbdAgent", "kbd-commandd-agent", "kbd-commandd-daemon", "kbd-commandd", "kbd-bench", "kbd-fuzz",
                               "KbdBar", "kbd-commandd-bar"]

    /// `import X` lines of every Swift file below Sources/TARGET (any access level, `@_exported` too).
    static let sources = Fixtures.root.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/") + "/Sources"

    static func imports(of target: String) -> [(file: String, module: String)] {
        let dir = sources + "/" + target
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

    /// Every Swift target has a row: a new target cannot slip past the floors.
    @Test func everyTargetHasARow() throws {
        let manifest = String(decoding: try readWholeFile(path: Self.sources + "/../Package.swift", limit: 1 << 20), as: UTF8.self)
        var declared: [String] = []
        for line in manifest.split(separator: "\n") where line.contains("name: \"") && !line.contains("package:") && !line.contains("testTarget") {
            guard let start = line.firstRange(of: "name: \"")?.upperBound, let end = line[start...].firstIndex(of: "\"") else { continue }
            declared.append(String(line[start..<end]))
        }
        let swift = declared.filter { !Self.imports(of: $0).isEmpty || Files.list(Self.sources + "/" + $0, suffix: ".swift").count > 0 }
        #expect(Set(swift) == Set(Self.swiftTargets), "targets without a row: \(Set(swift).subtracting(Self.swiftTargets).sorted())")
        #expect(Set(Self.allowed.keys) == Set(Self.swiftTargets))
    }

    /// Issue 24: the service, the agent, the CLI and the helpers imported the umbrella and so
    /// could reach any module. Only the umbrella itself names the modules wholesale.
    @Test("no target imports the umbrella", arguments: swiftTargets.filter { $0 != "HardwareInput" })
    func noUmbrella(target: String) {
        for (file, module) in Self.imports(of: target) {
            #expect(module != "HardwareInput", "\(file): \(target) imports the HardwareInput umbrella instead of the modules it uses")
        }
    }

    /// Issue 35: test files import the modules they test; at most five the umbrella.
    @Test func atMostFiveTestFilesImportTheUmbrella() {
        let tests = Self.sources + "/../Tests"
        var umbrella: [String] = []
        for file in Files.list(tests, suffix: ".swift") {
            guard let text = try? String(decoding: readWholeFile(path: file, limit: 1 << 20), as: UTF8.self) else { continue }
            if text.split(separator: "\n").contains(where: { $0 == "import HardwareInput" || $0 == "@testable import HardwareInput" }) {
                umbrella.append(file)
            }
        }
        #expect(umbrella.count <= 5, "\(umbrella.count) test files import the HardwareInput umbrella: \(umbrella.joined(separator: ", "))")
    }

    /// Issue 35: one argument scanner (KbdProcess's ArgumentScanner), and processes are forked
    /// only by the process floor (KbdProcess, CSpawn; the bench's and the test support's
    /// attackers and fakes aside).
    @Test func oneArgumentScannerAndForksOnlyInTheProcessFloor() {
        let forkAllowed = ["/KbdProcess/", "/kbd-bench/", "/KbdTestSupport/"]
        for target in Self.swiftTargets {
            for file in Files.list(Self.sources + "/" + target, suffix: ".swift") {
                guard let text = try? String(decoding: readWholeFile(path: file, limit: 1 << 20), as: UTF8.self) else { continue }
                if !file.contains("/KbdProcess/") {
                    #expect(!text.contains("struct ArgumentScanner"), "\(file): a second argument scanner")
                }
                if !forkAllowed.contains(where: { file.contains($0) }) {
                    #expect(!text.contains("fork()"), "\(file): fork() outside the process floor")
                }
            }
        }
    }

    /// Issue 35: the agent runs programs and reads its options through KbdProcess, never
    /// through the service's or the daemon's modules. (KbdPipeline goes when the wire has
    /// its own event kinds.)
    @Test func theAgentImportsNeitherTheServiceNorTheDaemon() {
        for (file, module) in Self.imports(of: "KbdAgent") + Self.imports(of: "KbdBar") + Self.imports(of: "kbd-commandd-bar") {
            #expect(module != "KbdService" && module != "KbdDaemon", "\(file) imports \(module)")
        }
    }

    /// Issue 35: event-loop tokens are enum values (KbdProcess's EventLoop), not bits packed
    /// above a descriptor (`1 << 32`). A hand-written loop not yet on the EventLoop keeps its
    /// own, counted per file (one line each, so each loop's move lowers its own line); none
    /// may be added. The daemon's loop is on the EventLoop: none left in KbdDaemon.
    static let bitPackedTokensAllowed: [String: Int] = [
        "/KbdAgent/Agent.swift": 2,
    ]

    @Test func noNewBitPackedLoopTokens() {
        for target in Self.swiftTargets {
            for file in Files.list(Self.sources + "/" + target, suffix: ".swift") {
                guard let text = try? String(decoding: readWholeFile(path: file, limit: 1 << 20), as: UTF8.self) else { continue }
                let tokens = text.split(separator: "\n").filter { $0.contains(": UInt64 = ") && $0.contains(" << 32") }.count
                let allowed = Self.bitPackedTokensAllowed.first { file.hasSuffix($0.key) }?.value ?? 0
                #expect(tokens <= allowed, "\(file): \(tokens) event-loop tokens packed with << 32 (use an enum registration)")
            }
        }
    }

    @Test("no codec below the config and the wire", arguments: ["KbdSystem", "KbdCore", "KbdKeymap", "KbdRecording", "KbdEvdev", "KbdCommands", "KbdPipeline"])
    func noCodec(target: String) {
        for (file, module) in Self.imports(of: target) {
            #expect(!Self.codecs.contains(module), "\(file): \(target) imports the codec \(module)")
        }
    }

    @Test("Logging only in the daemon and above", arguments: ["KbdJSON", "KbdTOML", "KbdSystem", "KbdCore", "KbdGeometry", "KbdKeymap",
                                                              "KbdRecording", "KbdEvdev", "KbdCommands", "KbdPipeline", "KbdConfig", "KbdControl"])
    func loggingOnlyAbove(target: String) {
        for (file, module) in Self.imports(of: target) {
            #expect(module != "Logging", "\(file): \(target) imports Logging")
        }
    }

    @Test("no Foundation or ArgumentParser in the library, the service or the agent",
          arguments: libraryTargets + ["kbd-commandd-daemon", "KbdTestSupport", "KbdAgent", "kbd-commandd-agent", "kbd-fuzz", "KbdBar", "kbd-commandd-bar"])
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
