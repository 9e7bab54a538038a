#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole (small) file; fails with EFBIG past `limit` bytes.
public func readWholeFile(path: String, limit: Int) throws(SystemError) -> [UInt8] {
    var source = try FileByteSource(path: path)
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let n = try chunk.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) -> Int in try source.read(into: raw) }
        }.get()
        if n == 0 { return out }
        out.append(contentsOf: chunk[0..<n])
        if out.count > limit { throw SystemError(operation: "read", path: path, errno: EFBIG) }
    }
}
