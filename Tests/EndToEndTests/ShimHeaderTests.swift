import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 35 item 5: one dlopen idiom whose symbol types the compiler checks. Every load in
/// CSystemd, CXcb and CGio is `KBD_DLSYM(lib, field, symbol)`; CSystemd's and CXcb's fields
/// are `KBD_SYMBOL_TYPE(symbol)` (the real header's type), CGio's are checked against
/// GLib's headers here, so a field loaded with the wrong symbol does not compile.
/// SwiftPM does not rebuild a system library's header when it changes, so the headers are
/// compiled here, by the toolchain's clang, the way a C compiler sees them.
@Suite struct ShimHeaderTests {
    static let clang: String? = ["/opt/swift/usr/bin/clang", "/usr/bin/clang"].first { access($0, X_OK) == 0 }
    static let shims = ["Sources/CSystemd/shim.h", "Sources/CGio/shim.h", "Sources/CXcb/shim.h"]

    static func compile(_ path: String, flags: [String] = []) -> RunResult {
        runTool(["-fsyntax-only", "-Werror", "-Wno-unused-function"] + flags + ["-x", "c", path], executable: clang!)
    }

    /// GLib's compiler flags (CGio's check against GLib's headers), from pkg-config.
    static func gioFlags() -> [String] {
        let result = runTool(["--cflags", "gio-2.0"], executable: "/usr/bin/pkg-config")
        return result.status == 0 ? result.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init) : []
    }

    @Test(.enabled(if: clang != nil, "needs clang"))
    func theShimsCompileCleanly() {
        for shim in Self.shims {
            let result = Self.compile(Paths.root + "/" + shim)
            #expect(result.status == 0, "\(shim): \(result.stderr)")
        }
    }

    /// CGio is built without GLib's headers; compiled with them (KBD_CHECK_REAL_HEADERS) every
    /// field it loads has the type of GLib's declaration.
    @Test(.enabled(if: clang != nil, "needs clang"))
    func cgioMatchesGLibsHeaders() {
        let flags = Self.gioFlags()
        #expect(flags.contains { $0.hasPrefix("-I") && $0.contains("glib-2.0") }, "pkg-config --cflags gio-2.0: \(flags)")
        let result = Self.compile(Paths.root + "/Sources/CGio/shim.h", flags: ["-DKBD_CHECK_REAL_HEADERS"] + flags)
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// The check bites in every shim: a copy whose load gives a field another symbol (of
    /// another type) is refused. CSystemd: `sd_booted`'s field loaded with `sd_get_seats`;
    /// CXcb: `xcb_flush`'s with `xcb_disconnect`; CGio (against GLib's headers):
    /// `g_variant_n_children`'s with `g_variant_get_string`.
    @Test(.enabled(if: clang != nil, "needs clang"), arguments: [
        ("Sources/CSystemd/shim.h", "KBD_DLSYM(lib, f->booted, sd_booted);", "KBD_DLSYM(lib, f->booted, sd_get_seats);", false),
        ("Sources/CXcb/shim.h", "KBD_DLSYM(lib, x->flush, xcb_flush);", "KBD_DLSYM(lib, x->flush, xcb_disconnect);", false),
        ("Sources/CGio/shim.h", "KBD_DLSYM(lib, f->variant_n_children, g_variant_n_children);",
         "KBD_DLSYM(lib, f->variant_n_children, g_variant_get_string);", true),
    ])
    func aFieldLoadedWithTheWrongSymbolDoesNotCompile(shim: String, right: String, wrong: String, glib: Bool) throws {
        let text = String(decoding: try readAll(Paths.root + "/" + shim), as: UTF8.self)
        #expect(text.contains(right), "\(shim) no longer has \(right)")
        let swapped = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.contains(right) ? "    " + wrong : String($0) }.joined(separator: "\n")
        #expect(swapped.contains(wrong))
        let path = "/tmp/kbd-shim-\(getpid()).h"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(fd >= 0)
        _ = swapped.withCString { write(fd, $0, strlen($0)) }
        close(fd)
        defer { unlink(path) }
        let result = Self.compile(path, flags: glib ? ["-DKBD_CHECK_REAL_HEADERS"] + Self.gioFlags() : [])
        #expect(result.status != 0)
        let said = glib ? "does not have the type of its declaration" : "incompatible function pointer types"
        #expect(result.stderr.contains(said), "\(result.stderr)")
    }

    func readAll(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            out += buffer[0..<n]
        }
        return out
    }
}
