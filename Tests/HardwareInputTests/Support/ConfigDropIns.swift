import KbdSystem
import KbdRecording
import KbdConfig
#if canImport(Glibc)
import Glibc
#endif

/// A main config and its drop-in folder in a new temporary directory, for the tests of
/// how files merge: `write` puts a file there, `files` is what `ConfigLoader.load` reads.
struct ConfigDropIns {
    let directory: String

    init(prefix: String) {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        mkdir(directory + "/config.d", 0o755)
    }

    var files: ConfigFiles { ConfigFiles(main: directory + "/config.toml", dropInDirectory: directory + "/config.d") }

    /// Writes `text` to `path` (relative: "config.toml", "config.d/10-x.toml").
    func write(_ path: String, _ text: String) throws {
        let out = try FileOutput.create(path: directory + "/" + path)
        out.write(text)
        try out.flush()
    }
}
