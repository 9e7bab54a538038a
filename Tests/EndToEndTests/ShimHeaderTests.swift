import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 35 item 5: one dlopen idiom whose symbol types the compiler checks. CSystemd's
/// fields are `KBD_SYMBOL_TYPE(sd_…)` (the real header's type) and every load is
/// `KBD_DLSYM(lib, field, sd_…)`, so a field loaded with the wrong symbol does not compile.
/// SwiftPM does not rebuild a system library's header when it changes, so the headers are
/// compiled here, by the toolchain's clang, the way a C compiler sees them.
@Suite struct ShimHeaderTests {
    static let clang: String? = ["/opt/swift/usr/bin/clang", "/usr/bin/clang"].first { access($0, X_OK) == 0 }
    static let shims = ["Sources/CSystemd/shim.h", "Sources/CGio/shim.h", "Sources/CXcb/shim.h"]

    static func compile(_ path: String) -> RunResult {
        runTool(["-fsyntax-only", "-Werror", "-Wno-unused-function", "-x", "c", path], executable: clang!)
    }

    @Test(.enabled(if: clang != nil, "needs clang"))
    func theShimsCompileCleanly() {
        for shim in Self.shims {
            let result = Self.compile(Paths.root + "/" + shim)
            #expect(result.status == 0, "\(shim): \(result.stderr)")
        }
    }

    /// The check bites: a copy of CSystemd's shim that loads `sd_booted`'s field with
    /// `sd_get_seats` is refused, naming both types.
    @Test(.enabled(if: clang != nil, "needs clang"))
    func aFieldLoadedWithTheWrongSymbolDoesNotCompile() throws {
        let text = String(decoding: try readAll(Paths.root + "/Sources/CSystemd/shim.h"), as: UTF8.self)
        let wrong = "KBD_DLSYM(lib, f->booted, sd_get_seats);"
        let swapped = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.contains("KBD_DLSYM(lib, f->booted, sd_booted);") ? "    " + wrong : String($0) }.joined(separator: "\n")
        #expect(swapped.contains(wrong))
        let path = "/tmp/kbd-shim-\(getpid()).h"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(fd >= 0)
        _ = swapped.withCString { write(fd, $0, strlen($0)) }
        close(fd)
        defer { unlink(path) }
        let result = Self.compile(path)
        #expect(result.status != 0)
        #expect(result.stderr.contains("incompatible function pointer types"), "\(result.stderr)")
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
