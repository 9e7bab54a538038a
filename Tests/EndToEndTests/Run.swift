#if canImport(Glibc)
import Glibc
#endif

/// The result of running the built `kbd-commandd`.
struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

enum Paths {
    /// The package root, from this file's location.
    static let root: String = {
        String(#filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/"))
    }()
    static let fixtures = root + "/Tests/HardwareInputTests/Fixtures"
    static func recording(_ name: String) -> String { fixtures + "/recordings/" + name }
    static let examples = root + "/examples"

    static let executable = builtProduct("kbd-commandd")
    static let reference = builtProduct("xkb-reference")

    /// An executable built next to the test bundle.
    static func builtProduct(_ name: String) -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        let exe = n > 0 ? String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        var dir = exe.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        // Inside an .xctest bundle on some layouts: walk up until kbd-commandd is beside us.
        while !dir.isEmpty {
            let candidate = dir.joined(separator: "/") + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
            dir = dir.dropLast()
        }
        return root + "/.build/debug/" + name
    }
}

/// Runs the executable with `arguments`, capturing stdout and stderr through temporary files.
/// The default environment names no system keyboard file, so a machine's /etc/default/keyboard
/// does not change what the tests expect (the system-keymap tests give their own files).
let testEnvironment = ["LANG": "en_US.UTF-8", "KBD_COMMANDD_SYSTEM_KEYBOARD": ""]

/// Spawns `executable` with no signal blocked and the default dispositions, whatever the test
/// thread that spawns it blocks (the in-process daemons' signalfd masks are per thread and
/// inherited): a program spawned with SIGTERM blocked cannot be stopped by it. Before,
/// dbus-run-session could not stop its own bus daemon, and every run of the test suite left
/// a session bus and the accessibility bus's three processes behind.
func spawnUnblocked(_ pid: inout pid_t, _ executable: String, _ actions: UnsafePointer<posix_spawn_file_actions_t>?,
                    _ argv: [UnsafeMutablePointer<CChar>?], _ envp: [UnsafeMutablePointer<CChar>?]) -> Int32 {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t(), defaults = sigset_t()
    sigemptyset(&none)
    sigemptyset(&defaults)
    for signal in [SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    return posix_spawn(&pid, executable, actions, &attributes, argv, envp)
}

func runTool(_ arguments: [String], environment: [String: String] = testEnvironment, executable: String = Paths.executable) -> RunResult {
    var template = Array("/tmp/kbd-e2e-XXXXXX".utf8CString)
    guard mkdtemp(&template) != nil else { fatalError("mkdtemp failed") }
    let dir = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let outPath = dir + "/out", errPath = dir + "/err"
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    var pid = pid_t()
    let rc = spawnUnblocked(&pid, executable, &actions, argv, envp)
    posix_spawn_file_actions_destroy(&actions)
    argv.forEach { free($0) }
    envp.forEach { free($0) }
    guard rc == 0 else { fatalError("cannot start \(executable): \(rc)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let result = RunResult(
        status: (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f),
        stdout: slurp(outPath), stderr: slurp(errPath))
    unlink(outPath)
    unlink(errPath)
    rmdir(dir)
    return result
}

private func slurp(_ path: String) -> String {
    guard let f = fopen(path, "r") else { return "" }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, f)
        if n <= 0 { break }
        bytes.append(contentsOf: chunk[0..<n])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// A running `kbd-commandd` process with its output going to files.
final class RunningTool {
    let pid: pid_t
    let dir: String
    var stdoutPath: String { dir + "/out" }
    var stderrPath: String { dir + "/err" }

    /// `brokenStderr`: standard error is a pipe whose reader is already gone (a log
    /// reader that went away), so every write to it fails with EPIPE.
    init(_ arguments: [String], environment: [String: String] = testEnvironment, brokenStderr: Bool = false,
         executable: String = Paths.executable) {
        var template = Array("/tmp/kbd-e2e-XXXXXX".utf8CString)
        _ = mkdtemp(&template)
        dir = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, dir + "/out", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var pipeFDs: [Int32] = [-1, -1]
        if brokenStderr {
            _ = pipe(&pipeFDs)
            close(pipeFDs[0])
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, dir + "/err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        var pid = pid_t()
        _ = spawnUnblocked(&pid, executable, &actions, argv, envp)
        posix_spawn_file_actions_destroy(&actions)
        if brokenStderr { close(pipeFDs[1]) }
        argv.forEach { free($0) }
        envp.forEach { free($0) }
        self.pid = pid
    }

    var stderr: String { slurp(stderrPath) }
    var stdout: String { slurp(stdoutPath) }

    /// Waits until stderr contains `text` (or `seconds` pass).
    func waitFor(_ text: String, seconds: Double = 10) -> Bool {
        for _ in 0..<Int(seconds * 50) {
            if stderr.contains(text) { return true }
            usleep(20_000)
        }
        return false
    }

    func signal(_ s: Int32) { kill(pid, s) }

    /// Waits for the exit status (or kills it after `seconds`).
    func wait(seconds: Double = 10) -> Int32 {
        var status: Int32 = 0
        for _ in 0..<Int(seconds * 50) {
            if waitpid(pid, &status, WNOHANG) == pid {
                return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        return -1
    }
}

func slurpFile(_ path: String) -> String { slurp(path) }
