import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 25 item 8: the package never adopts an account it did not make for itself, and the
/// udev rule's read ACL covers keyboards and switches only.
@Suite struct PackagingTrustTests {
    /// Runs the postinst with `getent` and `id` answering for an existing kbd-commandd account.
    func postinst(passwd: String, group: String) -> RunResult {
        var template = Array("/tmp/kbd-postinst-XXXXXX".utf8CString)
        _ = mkdtemp(&template)
        let dir = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { _ = runTool(["-rf", dir], environment: [:], executable: "/bin/rm") }
        func script(_ name: String, _ text: String) {
            let f = fopen(dir + "/" + name, "w")
            fputs("#!/bin/sh\n" + text + "\n", f)
            fclose(f)
            chmod(dir + "/" + name, 0o755)
        }
        script("getent", "case \"$1\" in passwd) echo '\(passwd)';; group) echo '\(group)';; esac")
        script("id", "echo kbd-commandd")
        // Anything that would change the machine is a fake that records it was called.
        for tool in ["addgroup", "adduser", "deluser", "udevadm", "deb-systemd-helper", "deb-systemd-invoke", "ischroot"] {
            script(tool, "echo \(tool) \"$@\" >> \(dir)/called; exit 0")
        }
        return runTool([Paths.root + "/debian/kbd-commandd.postinst", "configure"], environment: ["PATH": dir + ":/usr/bin:/bin"],
                       executable: "/bin/sh")
    }

    @Test func anExistingUserAccountIsNotAdopted() {
        let result = postinst(passwd: "kbd-commandd:x:1001:1001:Mallory:/home/m:/bin/bash", group: "kbd-commandd:x:1002:")
        #expect(result.status == 1)
        #expect(result.stderr.contains("refusing to adopt the existing account kbd-commandd (uid 1001, primary group 1001)"), "\(result.stderr)")
    }

    @Test func aSystemAccountWithAnotherPrimaryGroupIsNotAdopted() {
        let result = postinst(passwd: "kbd-commandd:x:120:100::/nonexistent:/usr/sbin/nologin", group: "kbd-commandd:x:125:")
        #expect(result.status == 1)
        #expect(result.stderr.contains("whose primary group is kbd-commandd"))
    }

    @Test func itsOwnSystemAccountIsKept() {
        let result = postinst(passwd: "kbd-commandd:x:120:125::/nonexistent:/usr/sbin/nologin", group: "kbd-commandd:x:125:")
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// The ACL reaches a node only through ID_INPUT_KEY or ID_INPUT_SWITCH (input_id's marks),
    /// not every event node (touchscreens, tablets, mice were readable before).
    @Test func theRuleCoversKeyboardsAndSwitchesOnly() {
        let rule = slurpFile(Paths.root + "/udev/60-kbd-commandd.rules")
        let lines = rule.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
        let run = lines.firstIndex { $0.hasPrefix("RUN+=") }
        let label = lines.firstIndex { $0 == #"LABEL="kbd_commandd_acl""# }
        #expect(run != nil && label != nil && label! < run!)
        // Every way to the label is one of the two marks; everything else ends before it.
        let jumps = lines.filter { $0.contains(#"GOTO="kbd_commandd_acl""#) }
        #expect(jumps == [#"ENV{ID_INPUT_KEY}=="1", GOTO="kbd_commandd_acl""#, #"ENV{ID_INPUT_SWITCH}=="1", GOTO="kbd_commandd_acl""#])
        #expect(label.map { lines[$0 - 1] } == #"GOTO="kbd_commandd_end""#)
    }
}
