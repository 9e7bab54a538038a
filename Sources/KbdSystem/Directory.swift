#if canImport(Glibc)
import Glibc
#endif

/// Directory listings. A `struct dirent` from readdir(3) is only as long as its record
/// (`d_reclen`): its `d_name` is read in place up to the NUL, never copied as the
/// declared 256 bytes (which reads past the record: AddressSanitizer caught it).
public enum Directory {
    /// The names in `path` (without "." and ".."), unsorted; empty if it cannot be read.
    /// The corresponding C functions are `opendir`, `readdir` and `closedir`.
    public static func names(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var out: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeMutablePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) { String(cString: $0) }
            }
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }

    /// The names of subdirectories and files in `path`, with whether each is a directory.
    public static func entries(_ path: String) -> [(name: String, isDirectory: Bool)] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var out: [(String, Bool)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeMutablePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) { String(cString: $0) }
            }
            if name != "." && name != ".." { out.append((name, entry.pointee.d_type == UInt8(DT_DIR))) }
        }
        return out
    }
}
