#if canImport(Glibc)
import Glibc
#endif

/// The process environment as a dictionary, read once at start-up and passed
/// down: library code never reads the environment itself.
public enum ProcessEnvironment {
    public static func current() -> [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") {
                out[String(s[..<eq])] = String(s[s.index(after: eq)...])
            }
            p += 1
        }
        return out
    }
}

extension ProcessEnvironment {
    /// The directory of the running executable (from `/proc/self/exe`), where the
    /// programs installed or built beside it are; nil if /proc cannot tell.
    public static func executableDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard n > 0 else { return nil }
        let exe = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return exe.lastIndex(of: "/").map { String(exe[..<$0]) } ?? "."
    }
}
