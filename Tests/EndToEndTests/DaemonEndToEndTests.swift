import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The built daemon as a process: start without devices (even without /dev/input),
/// control socket, SIGHUP with a bad then a good config, SIGTERM exits 0.
@Suite(.serialized)
struct DaemonEndToEndTests {
    @Test func runsWithoutInputDirectoryReloadsOnSIGHUPAndStopsOnSIGTERM() throws {
        let config = "/tmp/kbd-e2e-run.toml"
        let socket = "/tmp/kbd-e2e-run.sock"
        func writeConfig(_ text: String) {
            let f = fopen(config, "w")
            fputs(text, f)
            fclose(f)
        }
        writeConfig("[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n")
        let daemon = RunningTool(["run", "--config", config, "--socket", socket, "--input-dir", "/nonexistent/input"])
        #expect(daemon.waitFor("ready: 1 commands, 0 keyboards"))
        #expect(daemon.stderr.contains("WARNING") == false || daemon.stderr.contains("will retry"))

        let listed = runTool(["watch", "--socket", socket, "--request", #"{"request":"list_commands"}"#])
        #expect(listed.status == 0)
        #expect(listed.stdout == #"{"reply":"list_commands","ok":true,"commands":[{"scope":"global","id":"save","title":"save","chord":"Ctrl+S","repeat":false}],"scopes":["global"],"text_input":false}"# + "\n")

        // What is active now, as text: the chain (global only: no client set scopes), text input, the table.
        let active = runTool(["commands", "--active", "--socket", socket])
        #expect(active.status == 0)
        #expect(active.stdout == "active scopes: global\ntext input: off\nglobal\n  save  Ctrl+S\n", "\(active.stdout)\(active.stderr)")

        writeConfig("[[command]]\nid = \"save\"\nkeys = \"Ctrl+Bogus\"\n")
        daemon.signal(SIGHUP)
        #expect(daemon.waitFor("reload failed, keeping the previous config"))
        let still = runTool(["watch", "--socket", socket, "--request", #"{"request":"list_commands"}"#])
        #expect(still.stdout.contains(#""id":"save""#))

        writeConfig("[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n[[command]]\nid = \"open\"\nkeys = \"Ctrl+O\"\n")
        daemon.signal(SIGHUP)
        #expect(daemon.waitFor("reloaded \(config): 2 commands"))

        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        #expect(daemon.stderr.contains("INFO stopped"))
        #expect(access(socket, F_OK) != 0)  // the socket is removed on exit
        unlink(config)
    }

    /// Its log reader gone (journald restarted, a closed terminal pipe), the service goes
    /// on: writes to the log fail with EPIPE instead of killing it with SIGPIPE.
    @Test func aVanishedLogReaderDoesNotKillTheService() throws {
        let config = "/tmp/kbd-e2e-sigpipe.toml"
        let socket = "/tmp/kbd-e2e-sigpipe.sock"
        let f = fopen(config, "w")
        fputs("[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n", f)
        fclose(f)
        defer { unlink(config) }
        let daemon = RunningTool(["run", "--config", config, "--socket", socket, "--input-dir", "/nonexistent/input"], brokenStderr: true)
        let ping = runTool(["watch", "--socket", socket, "--retry", "5", "--request", #"{"request":"ping"}"#])
        #expect(ping.stdout == #"{"reply":"ping","ok":true}"# + "\n")
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    @Test func aBadConfigAtStartIsAnErrorWithFileAndLine() {
        let config = "/tmp/kbd-e2e-bad-run.toml"
        let f = fopen(config, "w")
        fputs("[[command]]\nid = \"a\"\nkeys = \"Ctrl+Bogus\"\n", f)
        fclose(f)
        let r = runTool(["run", "--config", config, "--no-socket", "--input-dir", "/nonexistent"])
        #expect(r.status == 78)
        #expect(r.stderr.contains("Error: \(config):3: keys = 'Ctrl+Bogus'"))
        unlink(config)
    }

    /// Issue 33 (7b): under systemd a bad config exits 78 and the unit does not restart it
    /// (RestartPreventExitStatus): the journal says why it stopped, with file:line, and that it
    /// stays stopped until the config is fixed.
    @Test func aBadConfigAtStartSaysTheServiceWillNotRestart() {
        let config = "/tmp/kbd-e2e-bad-run-journal-\(getpid()).toml"
        let f = fopen(config, "w")
        fputs("[[command]]\nid = \"a\"\nkeys = \"Ctrl+Bogus\"\n", f)
        fclose(f)
        defer { unlink(config) }
        var environment = testEnvironment
        environment["JOURNAL_STREAM"] = "8:1234"
        let r = runTool(["run", "--config", config, "--no-socket", "--input-dir", "/nonexistent"], environment: environment)
        #expect(r.status == 78)
        #expect(r.stderr.contains("<3>Error: \(config):3: keys = 'Ctrl+Bogus'"), "\(r.stderr)")
        #expect(r.stderr.contains("<3>stopping: \(config) cannot be used (the problems above, with file:line); the service will not restart until the config is fixed"), "\(r.stderr)")
        let unit = slurpFile(Paths.root + "/udev/kbd-commandd.service")
        #expect(unit.contains("\nRestartPreventExitStatus=64 66 78\n"))
    }

    @Test func watchWithoutADaemonSaysWhy() {
        let r = runTool(["watch", "--socket", "/tmp/kbd-e2e-nobody.sock"])
        #expect(r.status == 66)
        #expect(r.stderr.contains("cannot connect to the daemon"))
    }

    @Test func devicesClassifiesRecordedDescriptions() {
        let r = runTool(["devices", "--format", "json", Paths.recording("evemu-devices--logitech-ultrathin-touch-mouse.evemu"),
                         Paths.recording("evemu-devices--razer-blackwidow-2013.keyboard.desc.evemu")])
        #expect(r.status == 0)
        #expect(r.lines.count == 2)
        #expect(r.lines[0].contains(#""keyboard":false,"reason":"a mouse that advertises keyboard keys (name says mouse)""#))
        #expect(r.lines[1].contains(#""name":"Razer Razer BlackWidow 2013","id":"bus 0003 1532:011b v0111","keyboard":true"#))
    }

    /// A laptop's built-in keyboard, its tablet-mode switch and a lid switch (real descriptions).
    @Test func devicesTellsInternalKeyboardsAndSwitches() {
        let files = ["switches/xorg-integration-tests--at-translated-set-2-keyboard.x220t.desc.evemu",
                     "switches/evemu-devices--hp-wmi-hotkeys.desc.evemu",
                     "switches/systemd--test-35-login.fake-lid-switch.extracted.evemu",
                     "evemu-devices--razer-blackwidow-2013.keyboard.desc.evemu"].map(Paths.recording)
        let r = runTool(["devices"] + files)
        #expect(r.status == 0)
        #expect(r.lines.filter { $0.hasPrefix("    ") } == [
            "    keyboard (internal: bus i8042): has KEY_ESC…KEY_S",
            "    switch: switch device (SW_TABLET_MODE)",
            "    switch: switch device (SW_LID)",
            "    keyboard (external: bus USB): has KEY_ESC…KEY_S",
        ])
        let json = runTool(["devices", "--format", "json"] + files)
        #expect(json.lines[0].contains(#""keyboard":true,"reason":"has KEY_ESC…KEY_S","integration":"internal","integration_reason":"bus i8042""#))
        #expect(json.lines[1].contains(#""keyboard":false,"reason":"switch device (SW_TABLET_MODE)","switch":true"#))
    }

    @Test(.enabled(if: access("/usr/bin/systemd-analyze", X_OK) == 0, "needs systemd-analyze"))
    func theUserUnitOfTheAgentVerifies() {
        let unit = slurpFile(Paths.root + "/udev/kbd-commandd-agent.service")
            .replacingAll("/usr/libexec/kbd-commandd/kbd-commandd-agent", with: Paths.builtProduct("kbd-commandd-agent"))
        #expect(unit.contains("PartOf=graphical-session.target") && unit.contains("WantedBy=graphical-session.target"))
        let path = "/tmp/kbd-e2e-unit/kbd-commandd-agent.service"
        mkdir("/tmp/kbd-e2e-unit", 0o755)
        let f = fopen(path, "w")
        fputs(unit, f)
        fclose(f)
        // --man=no: the man: pages are checked installed, by tests-package/run.sh.
        let r = runTool(["--user", "verify", "--man=no", path], environment: ["PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": "/tmp/kbd-e2e-unit"],
                        executable: "/usr/bin/systemd-analyze")
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test(.enabled(if: access("/usr/bin/systemd-analyze", X_OK) == 0, "needs systemd-analyze"))
    func theSystemdUnitVerifies() {
        // Point ExecStart at the built service binary so verify can check it exists.
        let unit = slurpFile(Paths.root + "/udev/kbd-commandd.service")
            .replacingAll("/usr/libexec/kbd-commandd/kbd-commandd-daemon", with: Paths.builtProduct("kbd-commandd-daemon"))
            .replacingAll("/usr/bin/kbd-commandd ", with: Paths.builtProduct("kbd-commandd") + " ")
        #expect(slurpFile(Paths.root + "/udev/kbd-commandd.service").contains("ExecReload=/usr/bin/kbd-commandd reload"))
        #expect(!unit.contains("SupplementaryGroups=input"), "the service reads through the udev rule's ACL, not group input")
        let path = "/tmp/kbd-e2e-unit/kbd-commandd.service"
        mkdir("/tmp/kbd-e2e-unit", 0o755)
        let f = fopen(path, "w")
        fputs(unit, f)
        fclose(f)
        let r = runTool(["verify", "--man=no", path], environment: ["PATH": "/usr/bin:/bin"], executable: "/usr/bin/systemd-analyze")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr == "")
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound] + replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}

/// sd_notify: the daemon tells systemd READY=1, RELOADING=1 (with MONOTONIC_USEC) and STOPPING=1.
@Suite(.serialized)
struct SystemdNotifyEndToEndTests {
    @Test func readyReloadingStopping() throws {
        let path = "/tmp/kbd-e2e-notify.sock"
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        defer { close(fd); unlink(path) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        func receive() -> String {
            var buf = [UInt8](repeating: 0, count: 512)
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return n > 0 ? String(decoding: buf[0..<n], as: UTF8.self) : ""
        }
        let config = "/tmp/kbd-e2e-notify.toml"
        let f = fopen(config, "w")
        fputs("[[command]]\nid = \"a\"\nkeys = \"Ctrl+A\"\n", f)
        fclose(f)
        defer { unlink(config) }
        let daemon = RunningTool(["run", "--config", config, "--no-socket", "--input-dir", "/nonexistent"],
                                 environment: ["NOTIFY_SOCKET": path, "JOURNAL_STREAM": "8:1234"])
        #expect(receive() == "READY=1")
        daemon.signal(SIGHUP)
        let reloading = receive()
        #expect(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        #expect(receive() == "READY=1")
        daemon.signal(SIGTERM)
        #expect(receive() == "STOPPING=1")
        #expect(daemon.wait() == 0)
        // Under systemd (JOURNAL_STREAM) log lines carry sd-daemon priority prefixes.
        #expect(daemon.stderr.contains("<6>ready: 1 commands, 0 keyboards"))
    }
}

/// scripts/install puts every file at its Debian place (staged with DESTDIR) and --uninstall removes them.
@Suite(.serialized)
struct InstallEndToEndTests {
    @Test func installAndUninstallIntoADestdir() {
        let dest = "/tmp/kbd-e2e-destdir"
        _ = runTool(["-rf", dest], environment: [:], executable: "/bin/rm")
        let env = ["DESTDIR": dest, "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"]
        // The udev rule an earlier version installed (MODE="0660" on every event node, issue 17 D19).
        let oldRule = dest + "/usr/lib/udev/rules.d/70-kbd-commandd.rules"
        _ = runTool(["-p", dest + "/usr/lib/udev/rules.d"], environment: [:], executable: "/bin/mkdir")
        let f = fopen(oldRule, "w")
        fputs("SUBSYSTEM==\"input\", KERNEL==\"event[0-9]*\", GROUP=\"input\", MODE=\"0660\"\n", f)
        fclose(f)
        let install = runTool([Paths.root + "/scripts/install", "--binary", Paths.executable], environment: env, executable: "/bin/bash")
        #expect(install.status == 0, "\(install.stderr)")
        for file in Self.installed + ["/etc/kbd-commandd/config.toml"] {
            #expect(access(dest + file, F_OK) == 0, "missing \(file)")
        }
        // The old rule (it set MODE and GROUP, overriding local policy) is gone; the new one
        // only adds a read ACL entry for the service's user.
        #expect(access(oldRule, F_OK) != 0)
        let rule = slurpFile(dest + "/usr/lib/udev/rules.d/60-kbd-commandd.rules")
        #expect(rule.contains("setfacl --modify=user:kbd-commandd:r--"))
        #expect(!rule.contains("MODE") && !rule.contains("GROUP") && !rule.contains("OWNER"))
        // The installed binary accepts the installed config.
        let check = runTool(["check", "--config", dest + "/etc/kbd-commandd/config.toml"], executable: dest + "/usr/bin/kbd-commandd")
        #expect(check.status == 0)
        // The installed `run` executes the installed service in /usr/libexec/kbd-commandd.
        let help = runTool(["run", "--help"], executable: dest + "/usr/bin/kbd-commandd")
        #expect(help.status == 0 && help.stdout.contains("OPTIONS:"))
        // And `agent` the installed agent.
        let agentHelp = runTool(["agent", "--help"], executable: dest + "/usr/bin/kbd-commandd")
        #expect(agentHelp.status == 0 && agentHelp.stdout.contains("USAGE: kbd-commandd agent"))
        let uninstall = runTool([Paths.root + "/scripts/install", "--uninstall"], environment: env, executable: "/bin/bash")
        #expect(uninstall.status == 0)
        for file in Self.installed {
            #expect(access(dest + file, F_OK) != 0, "left \(file)")
        }
        #expect(access(dest + "/etc/kbd-commandd/config.toml", F_OK) == 0)  // config kept unless --purge
        _ = runTool(["-rf", dest], environment: [:], executable: "/bin/rm")
    }

    static let installed = [
        "/usr/bin/kbd-commandd", "/usr/libexec/kbd-commandd/kbd-commandd-daemon", "/usr/libexec/kbd-commandd/kbd-commandd-agent",
        "/usr/lib/systemd/system/kbd-commandd.service", "/usr/lib/systemd/user/kbd-commandd-agent.service",
        "/usr/lib/udev/rules.d/60-kbd-commandd.rules", "/usr/share/man/man1/kbd-commandd.1.gz",
        "/usr/share/man/man5/kbd-commandd.toml.5.gz", "/usr/share/man/man8/kbd-commandd-daemon.8.gz",
        "/usr/share/bash-completion/completions/kbd-commandd", "/usr/share/zsh/vendor-completions/_kbd-commandd",
        "/usr/share/fish/vendor_completions.d/kbd-commandd.fish", "/usr/share/doc/kbd-commandd/README.md",
        // Issue 27: the agent's page, the autostart entry, the docs and the examples the man pages use.
        "/usr/share/man/man1/kbd-commandd-agent.1.gz", "/etc/xdg/autostart/kbd-commandd-agent.desktop",
        "/usr/share/doc/kbd-commandd/docs/desktop-agent.md", "/usr/share/doc/kbd-commandd/examples/desktop.toml",
        "/usr/share/doc/kbd-commandd/examples/recordings/desktop-keys.evemu",
    ]
}
