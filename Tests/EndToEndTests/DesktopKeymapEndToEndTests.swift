import KbdJSON
import KbdTOML
import KbdSystem
import KbdCore
import KbdKeymap
import KbdConfig
import KbdControl
import KbdDaemon
import KbdAgent
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 26 item 3: the agent follows GNOME's and Hyprland's keymap and active layout and
/// tells the service (`set_keymap`). A real agent process against a stand-in service (this
/// test holds the control socket and reads what the agent sends). GNOME: the real schema
/// (gsettings-desktop-schemas) through GIO's keyfile backend in a throwaway
/// XDG_CONFIG_HOME, changed with the real `gsettings` tool. Hyprland is not in Debian 12:
/// the test serves its two sockets (`.socket2.sock`, `.socket.sock`) with Hyprland's own
/// line and JSON formats. KDE runs against the real KWin in tests-desktop/keymap-e2e.sh.
@Suite(.serialized)
struct DesktopKeymapEndToEndTests {
    /// A throwaway directory, removed with everything in it.
    final class Scratch {
        let path: String
        init() {
            var template = Array("/tmp/kbd-keymap-e2e-XXXXXX".utf8CString)
            _ = mkdtemp(&template)
            path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        deinit { _ = run(["/bin/rm", "-rf", path], environment: [:]) }

        func write(_ name: String, _ text: String, mode: mode_t = 0o600) {
            let f = fopen(path + "/" + name, "w")
            fputs(text, f)
            fclose(f)
            chmod(path + "/" + name, mode)
        }
    }

    /// A listening socket; `accept` waits up to `seconds`.
    final class Listener {
        let path: String
        let fd: Int32
        init(_ path: String) throws {
            self.path = path
            fd = try UnixSocketAddress.streamSocket(nonBlocking: true)
            try UnixSocketAddress(path: path).bind(fd)
            listen(fd, 8)
        }
        deinit { close(fd) }

        func accept(seconds: Int32 = 15) -> Connection? {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, seconds * 1000) > 0 else { return nil }
            let c = Glibc.accept(fd, nil, nil)
            return c >= 0 ? Connection(c) : nil
        }
    }

    final class Connection {
        let fd: Int32
        private var pending: [UInt8] = []
        init(_ fd: Int32) { self.fd = fd }
        deinit { close(fd) }

        func send(_ text: String) {
            let bytes = Array(text.utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { return }
                sent += n
            }
        }

        /// The next line (without its newline), waiting up to `seconds`; nil at the end.
        func line(seconds: Int32 = 10) -> String? {
            let deadline = time(nil) + Int(seconds)
            while true {
                if let nl = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<nl], as: UTF8.self)
                    pending.removeSubrange(...nl)
                    return line
                }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard time(nil) < deadline, poll(&p, 1, 200) >= 0 else { return nil }
                if p.revents == 0 { continue }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n > 0 { pending += chunk[0..<n] } else if n == 0 || errno != EAGAIN { return nil }
            }
        }

        /// Everything up to the peer's end of what it sent (a request on Hyprland's command socket).
        func request(seconds: Int32 = 10) -> String {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, seconds * 1000) > 0 else { return "" }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            return n > 0 ? String(decoding: chunk[0..<n], as: UTF8.self) : ""
        }
    }

    /// Runs a program to its end; its exit status.
    @discardableResult
    static func run(_ argv: [String], environment: [String: String]) -> Int32 {
        let args = argv.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { args.forEach { free($0) }; envp.forEach { free($0) } }
        var pid = pid_t()
        guard posix_spawn(&pid, argv[0], nil, nil, args, envp) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    /// The agent's next `set_keymap` (other requests are skipped); nil when none comes.
    static func nextKeymap(_ agent: Connection, seconds: Int32 = 10) -> String? {
        while let line = agent.line(seconds: seconds) {
            if line.contains(#""request":"set_keymap""#) { return line }
        }
        return nil
    }

    /// Whether the agent's `set_keymap`s reach `expected` (others before it are skipped).
    static func keymap(_ agent: Connection, becomes expected: String) -> Bool {
        while let line = nextKeymap(agent) {
            if line == expected { return true }
        }
        return false
    }

    static let agentConfig = "[osk]\nbackend = \"none\"\n\n[text_input]\nsource = \"none\"\n"

    /// Starts a real agent against this test's socket; the connection it made.
    static func startAgent(_ scratch: Scratch, environment: [String: String]) throws -> (RunningTool, Listener, Connection?) {
        let service = try Listener(scratch.path + "/socket")
        scratch.write("config.toml", agentConfig)
        let agent = RunningTool(["agent", "--socket", service.path, "--config", scratch.path + "/config.toml", "--log-level", "debug"],
                                environment: environment)
        return (agent, service, service.accept())
    }

    static func stop(_ agent: RunningTool) {
        agent.signal(SIGTERM)
        _ = agent.wait()
    }

    // MARK: - GNOME

    @Test func gnomesInputSourcesReachTheService() throws {
        let scratch = Scratch()
        let environment = ["LANG": "C.UTF-8", "HOME": scratch.path, "XDG_RUNTIME_DIR": scratch.path, "PATH": "/usr/bin:/bin",
                           "XDG_CONFIG_HOME": scratch.path + "/config", "XDG_DATA_DIRS": "/usr/share",
                           "GSETTINGS_BACKEND": "keyfile", "XDG_CURRENT_DESKTOP": "GNOME"]
        try #require(access("/usr/bin/gsettings", X_OK) == 0, "needs the gsettings tool (libglib2.0-bin; scripts/install-deps)")
        func gsettings(_ key: String, _ value: String) {
            #expect(Self.run(["/usr/bin/gsettings", "set", "org.gnome.desktop.input-sources", key, value], environment: environment) == 0)
        }
        gsettings("sources", "[('xkb', 'us'), ('xkb', 'de+nodeadkeys')]")
        let (agent, _, connection) = try Self.startAgent(scratch, environment: environment)
        defer { Self.stop(agent) }
        let service = try #require(connection, "the agent did not connect: \(agent.stderr)")
        // GNOME's sources as names; nothing in mru-sources yet: `current` (0) is the active one.
        #expect(Self.nextKeymap(service) == #"{"request":"set_keymap","layout":"us,de","variant":",nodeadkeys","group":0}"#, "\(agent.stderr)")
        // GNOME 40+ switches by moving the source to the front of mru-sources.
        gsettings("mru-sources", "[('xkb', 'de+nodeadkeys'), ('xkb', 'us')]")
        #expect(Self.nextKeymap(service) == #"{"request":"set_keymap","layout":"us,de","variant":",nodeadkeys","group":1}"#, "\(agent.stderr)")
        gsettings("xkb-options", "['ctrl:nocaps', 'compose:ralt']")
        #expect(Self.nextKeymap(service)
                == #"{"request":"set_keymap","layout":"us,de","variant":",nodeadkeys","options":"ctrl:nocaps,compose:ralt","group":1}"#, "\(agent.stderr)")
        gsettings("mru-sources", "[('xkb', 'us'), ('xkb', 'de+nodeadkeys')]")
        #expect(Self.nextKeymap(service)
                == #"{"request":"set_keymap","layout":"us,de","variant":",nodeadkeys","options":"ctrl:nocaps,compose:ralt","group":0}"#, "\(agent.stderr)")
        // No xkb source left: GNOME uses the system's keyboard; the service its own keymap.
        gsettings("sources", "[]")
        #expect(Self.nextKeymap(service) == #"{"request":"set_keymap"}"#, "\(agent.stderr)")
        // More sources than xkb's 4 groups: the first and the active one, at every switch.
        gsettings("sources", "[('xkb', 'us'), ('xkb', 'de'), ('xkb', 'fr'), ('xkb', 'ru'), ('xkb', 'ua')]")
        gsettings("mru-sources", "[('xkb', 'ru'), ('xkb', 'us')]")
        // (The sources' own change may come first, with `us` active: layout us alone.)
        #expect(Self.keymap(service, becomes: #"{"request":"set_keymap","layout":"us,ru","options":"ctrl:nocaps,compose:ralt","group":1}"#),
                "\(agent.stderr)")
        gsettings("mru-sources", "[('xkb', 'ua'), ('xkb', 'ru'), ('xkb', 'us')]")
        #expect(Self.nextKeymap(service) == #"{"request":"set_keymap","layout":"us,ua","options":"ctrl:nocaps,compose:ralt","group":1}"#, "\(agent.stderr)")
        #expect(agent.stderr.contains("keymap: follows GNOME's input sources"))
    }

    // MARK: - Hyprland

    static func devices(layout: String, variant: String, options: String = "", index: Int?, keymap: String) -> String {
        // The shape of Hyprland's devicesRequest (hyprctl devices -j): a non-main keyboard
        // first, then the main one; `active_layout_index` only from Hyprland 0.42, and there
        // `none` (not JSON) for a keyboard without a keymap.
        """
        {
        "mice": [],
        "keyboards": [
            {
                "address": "0x55c4f6a0c2b0",
                "name": "power-button",
                "rules": "", "model": "", "layout": "us", "variant": "", "options": "",
                \(index == nil ? "" : "\"active_layout_index\": none,")
                "active_keymap": "none",
                "capsLock": false, "numLock": false,
                "main": false
            },
            {
                "address": "0x55c4f6a0d410",
                "name": "at-translated-set-2-keyboard",
                "rules": "", "model": "pc105",
                "layout": "\(layout)", "variant": "\(variant)", "options": "\(options)",
                \(index.map { "\"active_layout_index\": \($0)," } ?? "")
                "active_keymap": "\(keymap)",
                "capsLock": false, "numLock": false,
                "main": true
            }
        ],
        "tablets": [],
        "touch": [],
        "switches": []
        }
        """
    }

    @Test(arguments: [true, false])
    func hyprlandsLayoutsReachTheService(withIndex: Bool) throws {
        let scratch = Scratch()
        let signature = "v0.41_1718000000_abcdef"
        mkdir(scratch.path + "/hypr", 0o700)
        mkdir(scratch.path + "/hypr/" + signature, 0o700)
        let events = try Listener(scratch.path + "/hypr/\(signature)/.socket2.sock")
        let commands = try Listener(scratch.path + "/hypr/\(signature)/.socket.sock")
        let environment = ["LANG": "C.UTF-8", "HOME": scratch.path, "XDG_RUNTIME_DIR": scratch.path, "PATH": "/usr/bin:/bin",
                           "HYPRLAND_INSTANCE_SIGNATURE": signature, "XDG_CURRENT_DESKTOP": "Hyprland"]
        let (agent, _, connection) = try Self.startAgent(scratch, environment: environment)
        defer { Self.stop(agent) }
        let eventSocket = try #require(events.accept(), "the agent did not open the event socket: \(agent.stderr)")
        func answerDevices(_ json: String) {
            guard let request = commands.accept() else { return #expect(Bool(false), "no j/devices request: \(agent.stderr)") }
            #expect(request.request() == "j/devices")
            request.send(json)
        }
        answerDevices(Self.devices(layout: "us,de", variant: ",nodeadkeys", options: "ctrl:nocaps", index: withIndex ? 0 : nil,
                                   keymap: "English (US)"))
        let service = try #require(connection, "the agent did not connect: \(agent.stderr)")
        #expect(Self.nextKeymap(service)
                == #"{"request":"set_keymap","layout":"us,de","variant":",nodeadkeys","options":"ctrl:nocaps","group":0}"#, "\(agent.stderr)")
        // The layout switch (hyprctl switchxkblayout): the event names the description, which may hold commas.
        eventSocket.send("activewindow>>foot,~\nactivelayout>>at-translated-set-2-keyboard,German (no dead keys)\n")
        answerDevices(Self.devices(layout: "us,de", variant: ",nodeadkeys", options: "ctrl:nocaps", index: withIndex ? 1 : nil,
                                   keymap: "German (no dead keys)"))
        #expect(Self.nextKeymap(service)
                == #"{"request":"set_keymap","layout":"us,de","variant":",nodeadkeys","options":"ctrl:nocaps","group":1}"#, "\(agent.stderr)")
        // hyprland.conf edited (kb_layout = ru,us): configreloaded.
        eventSocket.send("configreloaded>>\n")
        answerDevices(Self.devices(layout: "ru,us", variant: "", index: withIndex ? 0 : nil, keymap: "Russian"))
        #expect(Self.nextKeymap(service) == #"{"request":"set_keymap","layout":"ru,us","group":0}"#, "\(agent.stderr)")
    }
}
