// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    // Each function in its own section, so the release links' --symbol-ordering-file can
    // place the functions the service and the agent run next to each other. Without it a
    // module's object keeps most functions in one .text section, which the linker can only
    // move whole: the "ordered" functions spanned 3.8 MB of the service's text, and the
    // kernel maps code 64 KiB around every fault (BENCHMARKS.md, issue 23).
    .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release)),
]

/// Release builds of the per-event code skip the runtime exclusivity checks
/// (about a fifth of the instructions per event, see BENCHMARKS.md); debug
/// builds, and so every test run, keep them, and the compile-time checks stay on.
let hotPath: [SwiftSetting] = strict + [
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

/// The targets a replayed event passes through: generic readers and the per-event stages
/// are specialised across module boundaries (without it, +65% instructions per event).
let crossModule: [SwiftSetting] = hotPath + [
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

/// `-lstdc++` (which -static-stdlib adds) finds link/static-libstdc++/libstdc++.so first: a
/// linker script that links GCC's static libstdc++.a, so the process does not load
/// libstdc++.so.6 (~900 KiB resident at idle for its symbol tables and relocations).
let staticLibstdcxx = ["-L", "\(Context.packageDirectory)/link/static-libstdc++"]

/// The release link of the service binary (lld ships with the Swift toolchain).
let serviceLinkFlags = staticLibstdcxx + [
    "-static-stdlib", "-use-ld=lld",
    "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/kbd-commandd-daemon/functions.order",
    "-Xlinker", "--no-warn-symbol-ordering",
    // An executable exports nothing: the 4,200 public symbols of our modules in .dynsym,
    // .dynstr and .gnu.hash were consulted by the loader for every symbol the shared libraries
    // looked up (resident pages for nothing; the Swift runtime finds metadata through its
    // own sections, not dlsym).
    "-Xlinker", "--no-export-dynamic",
]

/// The agent's release link: static standard library, packed relocations (its idle memory
/// has the same goal as the service's).
let agentLinkFlags = staticLibstdcxx + [
    "-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/kbd-commandd-agent/functions.order",
    "-Xlinker", "--no-warn-symbol-ordering",
    "-Xlinker", "--no-export-dynamic",  // as the service's: nothing to export
]

/// The command-line tool's release link: the Swift runtime and FoundationEssentials (which the
/// argument parser uses) linked statically, so the installed tool needs only Debian's own
/// libraries (libc, libstdc++, libevdev, libxkbcommon) and not the toolchain's folder.
/// The static FoundationEssentials archive does not name the internal archives it uses
/// (its autolink misses them), so they are linked by name.
let cliLinkFlags = [
    "-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-Xlinker", "-l_FoundationCollections", "-Xlinker", "-l_FoundationCShims", "-Xlinker", "-lswiftSynchronization",
]

let package = Package(
    name: "kbd-commandd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "kbd-commandd", targets: ["kbd-commandd"]),
        .executable(name: "kbd-commandd-daemon", targets: ["kbd-commandd-daemon"]),
        .executable(name: "kbd-commandd-agent", targets: ["kbd-commandd-agent"]),
        .executable(name: "kbd-commandd-bar", targets: ["kbd-commandd-bar"]),
        .library(name: "HardwareInput", targets: ["HardwareInput"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CEvdev",
            pkgConfig: "libevdev",
            providers: [.apt(["libevdev-dev"])]
        ),
        .systemLibrary(
            name: "CXkb",
            pkgConfig: "xkbcommon",
            providers: [.apt(["libxkbcommon-dev"])]
        ),
        .systemLibrary(name: "CLinux"),
        // Starting commands without copying the service: clone(CLONE_VM | CLONE_VFORK) in C.
        .target(name: "CSpawn"),
        // sd-bus (libsystemd's headers; the library is loaded with dlopen, in the child process
        // the agent makes each bus call in), the client of the agent's D-Bus backends.
        .systemLibrary(
            name: "CSystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // GSettings from GIO (declared in the shim, so no GLib headers are needed; libgio is
        // loaded with dlopen, in the child process the agent makes each GSettings call in).
        .systemLibrary(name: "CGio"),
        // libxcb's headers (the library is loaded with dlopen when the agent's EWMH focus
        // source opens): the focused window on an X11 window manager without IPC.
        .systemLibrary(
            name: "CXcb",
            providers: [.apt(["libxcb1-dev"])]
        ),
        // The shortcuts bar's toolkit shim: GTK 3 and gtk-layer-shell (Debian libgtk-3-dev,
        // libgtk-layer-shell-dev), declared in the shim and linked by name (gtk_decls.h says why).
        .target(
            name: "CBarShim",
            linkerSettings: [.linkedLibrary("gtk-layer-shell"), .linkedLibrary("gtk-3"), .linkedLibrary("gdk-3"),
                             .linkedLibrary("gobject-2.0"), .linkedLibrary("glib-2.0"), .linkedLibrary("cairo"),
                             .linkedLibrary("pango-1.0")]
        ),
        // The library, one target per room (see README "Module map"): arrows point one way,
        // and SwiftPM refuses a cycle. `HardwareInput` is the umbrella that re-exports them.
        .target(name: "KbdJSON", swiftSettings: hotPath),
        .target(name: "KbdTOML", swiftSettings: hotPath),
        .target(name: "KbdSystem", dependencies: ["CLinux"], swiftSettings: crossModule),
        .target(name: "KbdCore", dependencies: ["KbdSystem", "CEvdev"], swiftSettings: crossModule),
        .target(name: "KbdGeometry", dependencies: ["KbdJSON"], swiftSettings: hotPath),
        .target(name: "KbdKeymap", dependencies: ["KbdCore", "KbdSystem", "CXkb"], swiftSettings: crossModule),
        .target(name: "KbdRecording", dependencies: ["KbdCore", "KbdSystem"], swiftSettings: crossModule),
        .target(name: "KbdEvdev", dependencies: ["KbdCore", "KbdSystem", "CEvdev", "CLinux"], swiftSettings: crossModule),
        // logind through sd-login (libsystemd loaded with dlopen when first needed): who is at each seat.
        .target(name: "KbdSeats", dependencies: ["KbdCore", "KbdSystem", "CSystemd"], swiftSettings: strict),
        .target(name: "KbdCommands", dependencies: ["KbdCore", "KbdKeymap", "KbdSystem"], swiftSettings: crossModule),
        .target(name: "KbdPipeline", dependencies: ["KbdCore", "KbdKeymap", "KbdCommands", "KbdGeometry"], swiftSettings: crossModule),
        .target(
            name: "KbdConfig",
            dependencies: ["KbdTOML", "KbdJSON", "KbdSystem", "KbdCore", "KbdKeymap", "KbdCommands", "KbdGeometry"],
            swiftSettings: hotPath
        ),
        .target(
            name: "KbdControl",
            dependencies: ["KbdJSON", "KbdSystem", "KbdCore", "KbdKeymap", "KbdCommands", "KbdGeometry", "KbdPipeline", "KbdConfig", "CLinux"],
            swiftSettings: crossModule
        ),
        // The process floor under the service, the agent and the bar: the event loop, the command
        // runner (CSpawn), forked children's lines, exit codes, arguments, logging, sd_notify.
        .target(
            name: "KbdProcess",
            dependencies: ["KbdSystem", "KbdCore", "CLinux", "CSpawn", .product(name: "Logging", package: "swift-log")],
            // As KbdDaemon's, where the runner was (release: no runtime exclusivity checks).
            swiftSettings: hotPath
        ),
        .target(
            name: "KbdDaemon",
            dependencies: ["KbdSystem", "KbdCore", "KbdKeymap", "KbdCommands", "KbdPipeline", "KbdConfig", "KbdControl",
                           "KbdGeometry", "KbdSeats", "KbdProcess", "CLinux", .product(name: "Logging", package: "swift-log")],
            swiftSettings: hotPath
        ),
        .target(
            name: "HardwareInput",
            dependencies: ["KbdJSON", "KbdTOML", "KbdSystem", "KbdCore", "KbdGeometry", "KbdKeymap", "KbdRecording",
                           "KbdEvdev", "KbdSeats", "KbdCommands", "KbdPipeline", "KbdConfig", "KbdControl", "KbdProcess", "KbdDaemon"],
            swiftSettings: strict
        ),
        // Shared by tests, the bench and the fuzz targets: fake devices, the recording generator, seeded randomness,
        // the daemon harness (a daemon on fake devices) and a client of its socket.
        .target(
            name: "KbdTestSupport",
            dependencies: ["KbdSystem", "KbdCore", "KbdRecording", "KbdSeats", "KbdKeymap", "KbdCommands", "KbdPipeline", "KbdConfig", "KbdProcess", "KbdDaemon",
                           "CLinux", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The service process: options, logging, sd_notify, signals (no argument parser, no Foundation).
        .target(
            name: "KbdService",
            dependencies: ["KbdSystem", "KbdCore", "KbdKeymap", "KbdRecording", "KbdEvdev", "KbdCommands", "KbdConfig", "KbdControl", "KbdDaemon",
                           "KbdProcess", "CLinux", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The per-user session agent: the user's own table, run in their session, and the
        // on-screen keyboard following the hardware keyboard. No argument parser, no Foundation.
        .target(
            name: "KbdAgent",
            dependencies: ["KbdProcess", "KbdJSON", "KbdSystem", "KbdCore", "KbdKeymap", "KbdCommands", "KbdConfig",
                           "KbdControl", "CSystemd", "CGio", "CXcb", "CLinux", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The shortcuts bar and HUD: what to show and when (pure), the connection; no toolkit.
        .target(name: "KbdBar", dependencies: ["KbdProcess", "KbdControl", "KbdGeometry", "KbdTOML", "KbdCommands", "KbdKeymap"], swiftSettings: strict),
        // `kbd-commandd bar` executes this: KbdBar drawn with GTK 3 + gtk-layer-shell (the shim).
        .executableTarget(
            name: "kbd-commandd-bar",
            dependencies: ["KbdBar", "CBarShim", "KbdControl", "KbdProcess", "KbdSystem"],
            swiftSettings: strict,
            // As the agent's link: no Swift runtime needed at run time, packed relocations.
            linkerSettings: [.unsafeFlags(["-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                                           "-Xlinker", "--no-export-dynamic"], .when(configuration: .release))]
        ),
        // `kbd-commandd agent` executes this (like `run` executes kbd-commandd-daemon).
        .executableTarget(
            name: "kbd-commandd-agent",
            dependencies: ["KbdAgent"],
            exclude: ["functions.order"],
            swiftSettings: strict,
            linkerSettings: [.unsafeFlags(agentLinkFlags, .when(configuration: .release))]
        ),
        // `kbd-commandd run` executes this: the small resident service. Release builds link the
        // Swift standard library statically, pack relative relocations (DT_RELR) and place the
        // functions the service runs next to each other (scripts/order-functions): each saves
        // resident memory, see BENCHMARKS.md.
        .executableTarget(
            name: "kbd-commandd-daemon",
            dependencies: ["KbdService"],
            exclude: ["functions.order"],
            swiftSettings: strict,
            linkerSettings: [.unsafeFlags(serviceLinkFlags, .when(configuration: .release))]
        ),
        .executableTarget(
            name: "kbd-commandd",
            dependencies: [
                "KbdJSON", "KbdTOML", "KbdSystem", "KbdCore", "KbdGeometry", "KbdKeymap", "KbdRecording", "KbdEvdev", "KbdCommands",
                "KbdPipeline", "KbdConfig", "KbdControl", "KbdDaemon",
                "KbdProcess", "KbdService", "KbdAgent",
                "CLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict,
            linkerSettings: [.unsafeFlags(cliLinkFlags, .when(configuration: .release))]
        ),
        .testTarget(
            name: "HardwareInputTests",
            dependencies: ["HardwareInput", "KbdBar", "KbdTestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        // Benchmarks: `swift build -c release` then `.build/release/kbd-bench run` (see BENCHMARKS.md).
        .executableTarget(
            name: "kbd-bench",
            dependencies: ["KbdJSON", "KbdSystem", "KbdCore", "KbdKeymap", "KbdRecording", "KbdCommands", "KbdPipeline", "KbdConfig", "KbdControl",
                           "KbdDaemon", "KbdProcess", "KbdService", "KbdTestSupport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // Fuzz targets (scripts/fuzz builds them for libFuzzer); normally a corpus runner.
        .executableTarget(
            name: "kbd-fuzz",
            dependencies: ["KbdJSON", "KbdSystem", "KbdCore", "KbdGeometry", "KbdKeymap", "KbdRecording", "KbdCommands", "KbdPipeline", "KbdConfig",
                           "KbdControl", "KbdTestSupport"],
            swiftSettings: strict
        ),
        // The C floor and oracle: libxkbcommon driven directly (see its header comment).
        .executableTarget(
            name: "xkb-reference",
            dependencies: ["CXkb"]
        ),
        // The tight C floor for replay speed (a copy of the shared bench's replay_floor.c):
        // parse, keysym and UTF-8 before the update, update on press and release.
        .executableTarget(
            name: "replay-floor",
            dependencies: ["CXkb"],
            cSettings: [.unsafeFlags(["-O2"])]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["kbd-commandd", "kbd-commandd-daemon", "kbd-commandd-agent", "kbd-commandd-bar", "KbdAgent", "KbdBar", "KbdService", "xkb-reference", "kbd-fuzz", "kbd-bench",
                           "HardwareInput", "KbdTestSupport",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
