import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 15: the standard config files (`ROOT/config.toml` and `ROOT/config.d/*.toml`, ROOT
/// moved by KBD_COMMANDD_CONFIG_DIR so nothing is written to /etc), used by `check`,
/// `commands`, `run` and `reload` when no --config is given.
@Suite(.serialized)
struct ConfigPathsEndToEndTests {
    /// A fresh config root with `files` (relative path → text); mode 0755 so the strict checks pass.
    static func root(_ files: [String: String]) -> String {
        var template = Array("/tmp/kbd-e2e-etc-XXXXXX".utf8CString)
        _ = mkdtemp(&template)
        let dir = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(dir, 0o755)
        mkdir(dir + "/config.d", 0o755)
        for (name, text) in files { write(dir + "/" + name, text) }
        return dir
    }

    static func write(_ path: String, _ text: String) {
        let f = fopen(path, "w")
        fputs(text, f)
        fclose(f)
        chmod(path, 0o644)
    }

    static func environment(_ root: String) -> [String: String] {
        ["LANG": "en_US.UTF-8", "KBD_COMMANDD_CONFIG_DIR": root, "PATH": "/usr/bin:/bin"]
    }

    static func remove(_ root: String) {
        for name in Self.names(root + "/config.d") { unlink(root + "/config.d/" + name) }
        rmdir(root + "/config.d")
        unlink(root + "/config.toml")
        rmdir(root)
    }

    static func names(_ dir: String) -> [String] {
        guard let d = opendir(dir) else { return [] }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafePointer(to: e.pointee.d_name) { $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) } }
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }

    @Test func checkAndCommandsMergeTheDropInsInNameOrder() {
        let root = Self.root([
            "config.toml": "[keymap]\nlayout = \"us\"\n\n[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n",
            "config.d/20-media.toml": "[[command]]\nid = \"louder\"\ntitle = \"Louder\"\nkeys = \"XF86AudioRaiseVolume\"\n",
            "config.d/10-term.toml": "[[command]]\nid = \"term\"\ntitle = \"Terminal\"\nkeys = \"Super+Return\"\n",
            "config.d/notes.txt": "not a config",
        ])
        defer { Self.remove(root) }
        let check = runTool(["check"], environment: Self.environment(root))
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout == "\(root)/config.toml, \(root)/config.d/10-term.toml, \(root)/config.d/20-media.toml: OK: 3 commands (0 sequences) in 1 scopes; keymap us English (US) (from the config's [keymap])\n")
        let commands = runTool(["commands", "--format", "json"], environment: Self.environment(root))
        #expect(commands.status == 0)
        // File order: the main file's commands first, then each drop-in's.
        let ids: [String.Index?] = ["save", "term", "louder"].map { commands.stdout.firstRange(of: "\"id\":\"\($0)\"")?.lowerBound }
        #expect(!ids.contains(nil) && ids[0]! < ids[1]! && ids[1]! < ids[2]!, "\(commands.stdout)")
    }

    @Test func errorsNameTheDropInAndBothPlacesOfADuplicate() {
        let root = Self.root([
            "config.toml": "[keymap]\nlayout = \"us\"\n\n[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n",
            "config.d/10-a.toml": "[keymap]\nlayout = \"de\"\n\n[[command]]\nid = \"save\"\nkeys = \"Ctrl+Shift+S\"\n\n[[command]]\nid = \"write\"\nkeys = \"Ctrl+S\"\n",
            "config.d/20-b.toml": "[[command]]\nid = \"x\"\nkeys = \"Ctrl+Sprocket\"\n",
        ])
        defer { Self.remove(root) }
        let check = runTool(["check"], environment: Self.environment(root))
        #expect(check.status == 78)
        #expect(check.stderr == """
            Error: \(root)/config.d/10-a.toml:2: keymap.layout is also set at \(root)/config.toml:2; set it in one file only
            Error: \(root)/config.d/10-a.toml:4: duplicate command id 'save'; first defined at \(root)/config.toml:4
            Error: \(root)/config.d/10-a.toml:8: 'Ctrl+S' (write) is already bound to command 'save' at \(root)/config.toml:4 in scope 'global'
            Error: \(root)/config.d/20-b.toml:3: keys = 'Ctrl+Sprocket': unknown key name 'Sprocket'; expected a keysym name such as a, 1, exclam, Return, F4 (see xkbcommon-keysyms.h)

            """)
    }

    /// Every section key is merged from the file that sets it, and set twice is an error.
    @Test func settingsFromADropInApplyAndTwiceIsAnError() {
        let root = Self.root([
            "config.toml": "[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n",
            "config.d/50-presence.toml": "[settings]\npresence = \"any-keyboard\"\n\n[devices]\ngrab = true\n",
        ])
        defer { Self.remove(root) }
        let check = runTool(["check"], environment: Self.environment(root))
        #expect(check.status == 0, "\(check.stderr)")
        // grab from the drop-in is in effect: check warns about it at the drop-in's line.
        #expect(check.stderr.contains("Warning: \(root)/config.d/50-presence.toml:5: devices.grab = true"), "\(check.stderr)")
        Self.write(root + "/config.d/60-more.toml", "[settings]\npresence = \"auto\"\n")
        let twice = runTool(["check"], environment: Self.environment(root))
        #expect(twice.status == 78)
        #expect(twice.stderr == "Error: \(root)/config.d/60-more.toml:2: settings.presence is also set at \(root)/config.d/50-presence.toml:2; set it in one file only\n")
    }

    @Test func noConfigAnywhereIsExit66NamingTheDefault() {
        let root = Self.root([:])
        defer { Self.remove(root) }
        let check = runTool(["check"], environment: Self.environment(root))
        #expect(check.status == 66)
        #expect(check.stderr.hasPrefix("Error: \(root)/config.toml:0: cannot read the config"), "\(check.stderr)")
        // Drop-ins alone are a config.
        Self.write(root + "/config.d/a.toml", "[[command]]\nid = \"a\"\nkeys = \"Ctrl+A\"\n")
        let again = runTool(["check"], environment: Self.environment(root))
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.hasPrefix("\(root)/config.d/a.toml: OK: 1 commands"))
    }

    /// The service reads the standard files, and `kbd-commandd reload` asks it over the socket:
    /// a refused config prints every problem with the drop-in's file:line and exits 78.
    @Test func reloadOverTheSocketPrintsWhyAConfigIsRefused() {
        let root = Self.root([
            "config.toml": "[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n",
        ])
        defer { Self.remove(root) }
        let socket = root + "/s.sock"
        let daemon = RunningTool(["run", "--socket", socket, "--input-dir", "/nonexistent/input"], environment: Self.environment(root))
        #expect(daemon.waitFor("ready: 1 commands, 0 keyboards"))

        Self.write(root + "/config.d/50-term.toml", "[[command]]\nid = \"term\"\nkeys = \"Super+Return\"\n")
        let ok = runTool(["reload", "--socket", socket], environment: Self.environment(root))
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout == "reloaded: 2 commands\n")
        // Issue 33 (7e): the log names every file read, the drop-in that changed among them.
        #expect(daemon.waitFor("reloaded \(root)/config.toml, \(root)/config.d/50-term.toml: 2 commands"), "\(daemon.stderr)")

        Self.write(root + "/config.d/60-bad.toml", "[[command]]\nid = \"term\"\nkeys = \"Ctrl+Alt-Del\"\n")
        let refused = runTool(["reload", "--socket", socket], environment: Self.environment(root))
        #expect(refused.status == 78)
        #expect(refused.stderr.hasPrefix("Error: \(root)/config.d/60-bad.toml:3: keys = 'Ctrl+Alt-Del'"), "\(refused.stderr)")
        #expect(refused.stderr.hasSuffix("The service keeps its previous config (2 commands).\n"))
        unlink(root + "/config.d/60-bad.toml")

        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        unlink(socket)
    }

    /// The installed starter binds nothing, and every example in it is valid once uncommented.
    @Test func theStarterConfigIsNeutralAndItsExamplesWork() {
        let starter = Paths.examples + "/config.toml"
        let plain = runTool(["check", "--config", starter])
        #expect(plain.status == 0)
        #expect(plain.stdout.contains(": OK: 0 commands"))
        let text = slurpFile(starter)
        // Issue 33 (7e): its [keymap] comment says the default as the service finds it:
        // XKB_DEFAULT_*, else /etc/default/keyboard, else us.
        let keymapComment = text.split(separator: "\n").drop { !$0.hasPrefix("# [keymap]") }.prefix { !$0.contains("layout =") }.joined(separator: "\n")
        let order = ["XKB_DEFAULT_*", "/etc/default/keyboard", "\"us\""].map { keymapComment.firstRange(of: $0)?.lowerBound }
        #expect(!order.contains(nil) && order[0]! < order[1]! && order[1]! < order[2]!, "\(keymapComment)")
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            // "# key = value" and "# [table]" lines are the examples; prose lines stay comments.
            let body = line.hasPrefix("# ") ? String(line.dropFirst(2)) : String(line)
            let isExample = body.hasPrefix("[") || body.split(separator: " ").dropFirst().first == "="
            return line.hasPrefix("# ") && isExample ? body : String(line)
        }.joined(separator: "\n")
        let root = Self.root(["config.toml": uncommented])
        defer { Self.remove(root) }
        let check = runTool(["check"], environment: Self.environment(root))
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains(": OK: 2 commands"), "\(check.stdout)")
        // Issue 27: they work as the service runs them: none needs a desktop session.
        #expect(!check.stderr.contains("desktop session"), "\(check.stderr)")
    }

    /// Issue 27: the service warns at start, as `check` does, about a program that needs a
    /// desktop session (it runs as a system user outside any) and about shell syntax in `run`.
    @Test func theServiceWarnsAboutSessionProgramsAtStart() {
        let root = Self.root(["config.toml": "[[command]]\nid = \"vol\"\nkeys = \"XF86AudioRaiseVolume\"\nrun = [\"wpctl\", \"set-volume\", \"@DEFAULT_AUDIO_SINK@\", \"5%+\"]\n\n[[command]]\nid = \"shot\"\nkeys = \"Print\"\nrun = [\"/usr/bin/logger\", \"~/shot\"]\n"])
        defer { Self.remove(root) }
        let daemon = RunningTool(["run", "--no-socket", "--input-dir", "/nonexistent"], environment: Self.environment(root))
        #expect(daemon.waitFor("ready: 2 commands"))
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        #expect(daemon.stderr.contains("WARNING \(root)/config.toml:1: run = [\"wpctl\", \"set-volume\", \"@DEFAULT_AUDIO_SINK@\", \"5%+\"] (command 'vol'): 'wpctl' is an audio tool"), "\(daemon.stderr)")
        #expect(daemon.stderr.contains("~/.config/kbd-commandd/config.toml"))
        #expect(daemon.stderr.contains("(command 'shot'): '~/shot' starts with '~'"), "\(daemon.stderr)")
    }

    @Test func reloadWithoutAServiceSaysWhy() {
        let r = runTool(["reload", "--socket", "/tmp/kbd-e2e-nobody-reload.sock"])
        #expect(r.status == 66)
        #expect(r.stderr.contains("cannot connect to the daemon"))
    }
}
