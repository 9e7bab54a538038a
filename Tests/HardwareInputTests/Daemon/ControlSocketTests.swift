import CLinux
import KbdJSON
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdCommands
import KbdControl
import KbdProcess
import KbdDaemon
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized)
struct ControlSocketTests {
    func exchange(_ h: DaemonHarness, _ c: SocketClient, _ request: String) -> [String] {
        c.send(request + "\n")
        h.pump()
        return c.receive().lines
    }

    @Test func subscribersSeeDeviceChordAndCommandEventsInReplayShapes() throws {
        let h = try DaemonHarness()
        let c = try SocketClient(path: h.socketPath)
        #expect(exchange(h, c, #"{"request":"subscribe","events":["attach","presence","chord","command"]}"#)
                == [#"{"reply":"subscribe","ok":true,"events":["attach","chord","command","presence"],"hardware_keyboard":false,"protocol":2,"reason":"no keyboard","started":1000}"#])
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        h.type(kbd, [("leftctrl", 1), ("s", 1), ("s", 0), ("leftctrl", 0)])
        let lines = c.receive().lines
        #expect(lines.map { $0.split(separator: "\"").dropFirst(3).first ?? "" } == ["attach", "presence", "chord", "command"])
        #expect(lines[3].hasSuffix(#","id":"save","title":"save","scope":"global","chord":"Ctrl+S"}"#))
    }

    @Test func scopesAndTextInputAreSetOverTheSocket() throws {
        let h = try DaemonHarness()
        let c = try SocketClient(path: h.socketPath)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        #expect(exchange(h, c, #"{"request":"set_scopes","scopes":["editor"]}"#) == [#"{"reply":"set_scopes","ok":true,"scopes":["editor"]}"#])
        h.type(kbd, [("leftctrl", 1), ("s", 1), ("s", 0), ("leftctrl", 0)])
        #expect(h.commandIDs == ["editor-save"])
        h.type(kbd, [("q", 1), ("q", 0)])
        #expect(exchange(h, c, #"{"request":"set_text_input","active":true}"#) == [#"{"reply":"set_text_input","ok":true,"active":true}"#])
        h.type(kbd, [("q", 1), ("q", 0)])
        #expect(h.commandIDs == ["editor-save", "letter-q"])
    }

    @Test func listingsAndPing() throws {
        let h = try DaemonHarness(devices: [("/dev/input/event2", try Descriptions.k400), ("/dev/input/event3", try Descriptions.mouse)])
        let c = try SocketClient(path: h.socketPath)
        #expect(exchange(h, c, #"{"request":"ping"}"#) == [#"{"reply":"ping","ok":true}"#])
        let commands = exchange(h, c, #"{"request":"list_commands"}"#)
        #expect(commands.first?.hasPrefix(#"{"reply":"list_commands","ok":true,"commands":[{"scope":"editor","id":"editor-save""#) == true)
        let devices = exchange(h, c, #"{"request":"list_devices"}"#)
        #expect(devices == [#"{"reply":"list_devices","ok":true,"devices":[{"path":"/dev/input/event2","name":"Logitech K400 Plus","keyboard":true,"reason":"has KEY_ESC…KEY_S (keyboard with a pointer)","integration":"external","integration_reason":"bus USB","open":true},{"path":"/dev/input/event3","name":"Ultrathin Touch Mouse","keyboard":false,"reason":"a mouse that advertises keyboard keys (name says mouse)","open":false}]}"#])
    }

    @Test(arguments: [
        ("garbage", #"{"reply":"error","ok":false,"error":"invalid JSON: line 1, column 1: expected a JSON value"}"#),
        (#"{"request":"subscribe","events":["typing"]}"#, #"{"reply":"error","ok":false,"error":"subscribe: unknown event kind 'typing'; expected some of attach, chord, command, detach, dropped, geometry, hud, key, presence, session, toolbar"}"#),
        (#"[1,2]"#, #"{"reply":"error","ok":false,"error":"expected a JSON object with a \"request\" field"}"#),
        (#"{"request":"set_text_input","active":"yes"}"#, #"{"reply":"error","ok":false,"error":"set_text_input: expected \"active\": true or false"}"#),
    ])
    func badRequestsGetAnErrorReplyAndTheConnectionStays(_ request: String, _ reply: String) throws {
        let h = try DaemonHarness()
        let c = try SocketClient(path: h.socketPath)
        let got = exchange(h, c, request)
        #expect(got.count == 1)
        #expect(got.first?.hasPrefix(String(reply.prefix(40))) == true)
        if request != "garbage" { #expect(got == [reply]) }
        #expect(exchange(h, c, #"{"request":"ping"}"#) == [#"{"reply":"ping","ok":true}"#])
    }

    @Test func keyEventsNeedTheDaemonFlag() throws {
        let h = try DaemonHarness()
        let c = try SocketClient(path: h.socketPath)
        #expect(exchange(h, c, #"{"request":"subscribe","events":["key"]}"#)
                == [#"{"reply":"subscribe","ok":false,"error":"key events carry typed text; the daemon was not started with --allow-key-events"}"#])
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        h.type(kbd, [("a", 1), ("a", 0)])
        #expect(c.receive().lines.isEmpty)

        let allowed = try DaemonHarness(allowKeyEvents: true)
        let c2 = try SocketClient(path: allowed.socketPath)
        _ = exchange(allowed, c2, #"{"request":"subscribe","events":["key"]}"#)
        let kbd2 = allowed.source.plug("/dev/input/event1", try Descriptions.lenovo)
        allowed.pump()
        allowed.type(kbd2, [("a", 1), ("a", 0)])
        let lines = c2.receive().lines
        #expect(lines.count == 2)
        #expect(lines.first?.contains(#""code":"KEY_A","state":"press","keysym":"a","utf8":"a""#) == true)
    }

    @Test func anOverlongLineDisconnectsTheClientWithALoggedReason() throws {
        let h = try DaemonHarness()
        let c = try SocketClient(path: h.socketPath)
        // Feed the line in pieces (the socket buffer may take less at once) until the daemon hangs up.
        var closed = false
        for _ in 0..<40 where !closed {
            c.send(String(repeating: "x", count: 8192))
            h.pump(3)
            closed = c.receive().closed
        }
        // The hang-up may reach the client a turn later (a loaded machine): look again.
        for _ in 0..<50 where !closed {
            h.pump(1)
            closed = c.receive().closed
            if !closed { usleep(2000) }
        }
        #expect(closed)
        #expect(h.logs.all.contains { $0.contains("disconnecting client") && $0.contains("request line longer than 65536 bytes") })
        // The daemon still serves others.
        let d = try SocketClient(path: h.socketPath)
        #expect(exchange(h, d, #"{"request":"ping"}"#) == [#"{"reply":"ping","ok":true}"#])
    }

    @Test func aClientThatNeverReadsIsDroppedAndTheLoopNeverBlocks() throws {
        let h = try DaemonHarness()
        let lazy = try SocketClient(path: h.socketPath)
        var size: Int32 = 4096
        setsockopt(lazy.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = exchange(h, lazy, #"{"request":"subscribe","events":["chord","command"]}"#)
        let kbd = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        h.pump()
        // Thousands of chords: the lazy client's queue passes 1 MiB and it is cut off.
        for _ in 0..<6000 {
            h.clock.advance(ms: 1)
            kbd.keys([("leftctrl", 1), ("s", 1), ("s", 0), ("leftctrl", 0)], at: h.clock.now)
            h.pump(1)
        }
        #expect(h.commandIDs.count == 6000)
        #expect(h.logs.all.contains { $0.contains("not reading its events") })
    }

    @Test func hundredsOfClientsComeAndGo() throws {
        let h = try DaemonHarness()
        for round in 0..<5 {
            var clients: [SocketClient] = []
            for _ in 0..<100 { clients.append(try SocketClient(path: h.socketPath)) }
            h.pump()
            for c in clients { c.send(#"{"request":"ping"}"# + "\n") }
            // 16 connections are accepted per turn (the rest wait, after the keys).
            h.pump(10)
            let replies = clients.map { $0.receive().lines.count }
            #expect(replies.allSatisfy { $0 == 1 }, "round \(round)")
            clients.removeAll()
            h.pump(5)
        }
        let c = try SocketClient(path: h.socketPath)
        #expect(exchange(h, c, #"{"request":"ping"}"#) == [#"{"reply":"ping","ok":true}"#])
    }

    @Test func unauthorisedPeersAreRefused() throws {
        // Root, our uid or our group may connect; simulate a stranger by tightening the check.
        let h = try DaemonHarness()
        h.daemon.setPeerAuthorization { _, _, _ in false }
        let c = try SocketClient(path: h.socketPath)
        h.pump()
        #expect(c.receive().closed)
        #expect(h.logs.all.contains { $0.contains("refused a client") && $0.contains("not authorised") })
    }

    /// The groups come from the socket (SO_PEERGROUPS), as they were at connect: under
    /// ProtectProc=invisible the peer's /proc entry cannot be read, and a process that
    /// already exited has none. Here the peer is gone before the daemon accepts it.
    @Test(.enabled(if: getgroups(0, nil) > 0))
    func peerGroupsComeFromTheSocketNotFromProc() throws {
        let h = try DaemonHarness()
        var seen: (UInt32, UInt32, [UInt32])?
        h.daemon.setPeerAuthorization { uid, gid, groups in
            seen = (uid, gid, groups)
            return true
        }
        let pid = fork()
        if pid == 0 {
            let c = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in h.socketPath.utf8.enumerated() { raw[i] = b } }
            _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(c, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
            _exit(0)
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        h.pump()
        var groups = [gid_t](repeating: 0, count: Int(getgroups(0, nil)))
        _ = getgroups(Int32(groups.count), &groups)
        #expect(seen?.0 == geteuid())
        #expect(Set(seen?.2 ?? []) == Set(groups.map { UInt32($0) }))
    }

    @Test func theSocketIsGroupOnly() throws {
        let h = try DaemonHarness()
        var st = stat()
        #expect(stat(h.socketPath, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o660)
    }
}
