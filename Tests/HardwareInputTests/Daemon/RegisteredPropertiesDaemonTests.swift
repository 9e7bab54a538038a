import KbdJSON
import KbdControl
import KbdCommands
import KbdDaemon
import KbdTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 37 on the control socket: `localize`, `mirror` and `devices` of a registered
/// (user's) command travel through `register` and take effect as in the system table, on
/// real xkb layouts (de, ara) and two keyboards with their own ids (the Lenovo 17ef:6047,
/// the Logitech K400 046d:404d); `register` refuses bad values with a config's messages.
@Suite(.serialized)
struct RegisteredPropertiesDaemonTests {
    func exchange(_ h: DaemonHarness, _ c: SocketClient, _ request: String) -> [String] {
        c.send(request + "\n")
        h.pump()
        return c.receive().lines
    }

    /// A service on `layout` with the two keyboards plugged and a client that registered
    /// `commands` (its table goes with it: keep the client until the end).
    func service(layout: String, commands: String, config extra: String = "") throws -> (DaemonHarness, lenovo: FakeDevice, k400: FakeDevice, SocketClient) {
        let h = try DaemonHarness(config: "[keymap]\nlayout = \"\(layout)\"\n\n[[command]]\nid = \"save\"\nkeys = \"Ctrl+S\"\n\n" + extra)
        let lenovo = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        let k400 = h.source.plug("/dev/input/event2", try Descriptions.k400)
        h.pump()
        let app = try SocketClient(path: h.socketPath)
        let reply = exchange(h, app, #"{"request":"register","commands":"# + commands + "}")
        #expect(reply.first?.hasPrefix(#"{"reply":"register","ok":true"#) == true, "\(reply)")
        return (h, lenovo, k400, app)
    }

    @Test func aRegisteredCommandLimitedToAKeyboardFiresOnlyForIt() throws {
        let (h, lenovo, k400, app) = try service(layout: "us", commands: #"[{"id":"lenovo-f1","keys":"F1","devices":["17ef:6047"]},{"id":"any-f2","keys":"F2"}]"#)
        h.type(k400, [("f1", 1), ("f1", 0)])
        h.type(lenovo, [("f1", 1), ("f1", 0)])
        h.type(k400, [("f2", 1), ("f2", 0)])
                #expect(h.commandIDs == ["lenovo-f1", "any-f2"])
        withExtendedLifetime(app) {}
    }

    @Test func aGrabbedKeyboardFiresTheRegisteredCommandsBoundToItOnly() throws {
        let grab = "[[device]]\nmatch = \"17ef:6047\"\ngrab = true\n"
        let (h, lenovo, k400, app) = try service(layout: "us", commands: #"[{"id":"lenovo-f1","keys":"F1","devices":["17ef:6047"]},{"id":"any-f2","keys":"F2"}]"#, config: grab)
        #expect(lenovo.grabbed)
        h.type(lenovo, [("f1", 1), ("f1", 0), ("f2", 1), ("f2", 0)])
        h.type(k400, [("f1", 1), ("f1", 0), ("f2", 1), ("f2", 0)])
        #expect(h.commandIDs == ["lenovo-f1", "any-f2"])
        withExtendedLifetime(app) {}
    }

    @Test func aRegisteredCommandWithLocalizeFalseDoesNotFireFromTheLocalizedKey() throws {
        // On de, '[' and ']' need AltGr: the keys at their US positions type ü and +.
        let (h, lenovo, _, app) = try service(layout: "de", commands: #"[{"id":"back","keys":"Ctrl+bracketleft"},{"id":"literal","keys":"Ctrl+bracketright","localize":false}]"#)
        h.type(lenovo, [("leftctrl", 1), ("leftbrace", 1), ("leftbrace", 0), ("rightbrace", 1), ("rightbrace", 0), ("leftctrl", 0)])
        #expect(h.commandIDs == ["back"])
        withExtendedLifetime(app) {}
    }

    @Test func aRegisteredMirroredCommandSwapsItsPairOnArabic() throws {
        let (h, lenovo, _, app) = try service(layout: "us", commands: #"[{"id":"back","keys":"Ctrl+bracketleft","mirror":true}]"#)
        // The desktop's active layout is Arabic.
        #expect(exchange(h, app, #"{"request":"set_keymap","layout":"us,ara","group":1}"#)
                == [#"{"reply":"set_keymap","ok":true,"group":1,"layout":"us,ara"}"#])
        h.type(lenovo, [("leftctrl", 1), ("leftbrace", 1), ("leftbrace", 0), ("leftctrl", 0)])
        #expect(h.commandIDs == [], "the key at the US '[' means ']' (forward) while Arabic is active")
        h.type(lenovo, [("leftctrl", 1), ("rightbrace", 1), ("rightbrace", 0), ("leftctrl", 0)])
        #expect(h.commandIDs == ["back"], "\(h.events)")
        withExtendedLifetime(app) {}
    }

    @Test func registerRefusesBadPropertiesWithTheConfigsMessages() throws {
        let h = try DaemonHarness()
        let app = try SocketClient(path: h.socketPath)
        let bad = exchange(h, app, #"{"request":"register","commands":[{"id":"a","keys":"F1","devices":["046d:zz2b"]},{"id":"b","keys":"F2","devices":[]}]}"#)
        #expect(bad.count == 1)
        #expect(bad.first?.contains(#""ok":false"#) == true, "\(bad)")
        #expect(bad.first?.contains("commands[0] (a): devices: '046d:zz2b' is not a vendor:product id") == true, "\(bad)")
        #expect(bad.first?.contains("commands[1] (b): devices: expected a non-empty array of strings") == true, "\(bad)")
        #expect(exchange(h, app, #"{"request":"register","commands":[{"id":"a","keys":"F1","localize":"yes"}]}"#)
                == [#"{"reply":"error","ok":false,"error":"register: commands[0].localize: expected true or false"}"#])
        #expect(exchange(h, app, #"{"request":"register","commands":[{"id":"a","keys":"F1","devices":"17ef:6047"}]}"#)
                == [#"{"reply":"error","ok":false,"error":"register: commands[0].devices: expected an array of at most 64 strings: vendor:product ids in hex or device name globs"}"#])
        // The properties as a request line write themselves and read back the same; the defaults are left out.
        let spec = ControlRequest.CommandSpec(id: "back", keys: "Ctrl+bracketleft", localize: false, mirror: true, devices: ["17ef:6047", "Acme*"])
        let line = ControlRequest.register(commands: [spec], sequenceTimeoutMilliseconds: nil).line
        #expect(line.contains(#""localize":false,"mirror":true,"devices":["17ef:6047","Acme*"]"#), "\(line)")
        #expect(try ControlRequest.parse(line) == .register(commands: [spec], sequenceTimeoutMilliseconds: nil))
        let plain = ControlRequest.register(commands: [ControlRequest.CommandSpec(id: "a", keys: "F1")], sequenceTimeoutMilliseconds: nil).line
        #expect(!plain.contains("localize") && !plain.contains("mirror") && !plain.contains("devices"))
    }

    @Test func theAgentRegistersItsCommandsProperties() throws {
        let dir = "/tmp/kbd-props-agent-\(getpid())"
        mkdir(dir, 0o700)
        let socket = dir + "/socket", config = dir + "/config.toml"
        defer {
            unlink(config)
            rmdir(dir)
        }
        try AgentTests.write("""
            [osk]
            backend = "none"

            [[command]]
            id = "lenovo-f1"
            keys = "F1"
            devices = ["17ef:6047"]
            run = ["/bin/true"]

            [[command]]
            id = "literal"
            keys = "Ctrl+bracketright"
            localize = false
            run = ["/bin/true"]
            """, to: config)
        let h = try DaemonHarness(config: "[keymap]\nlayout = \"de\"\n", socketPath: socket)
        let agent = AgentTests.AgentProcess(config: config, socket: socket, environment: ["PATH": "/usr/bin:/bin", "HOME": dir])
        defer { _ = agent.stop() }
        #expect(h.pump(until: { h.daemon.commandTableOwners.count == 1 }))
        let lenovo = h.source.plug("/dev/input/event1", try Descriptions.lenovo)
        let k400 = h.source.plug("/dev/input/event2", try Descriptions.k400)
        h.pump()
        h.type(k400, [("f1", 1), ("f1", 0)])
        h.type(lenovo, [("leftctrl", 1), ("rightbrace", 1), ("rightbrace", 0), ("leftctrl", 0)])
        h.type(lenovo, [("f1", 1), ("f1", 0)])
        #expect(h.commandIDs == ["lenovo-f1"], "\(agent.output)")
    }
}
