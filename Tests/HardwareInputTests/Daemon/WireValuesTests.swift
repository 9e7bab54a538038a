import KbdSystem
import KbdCore
import KbdJSON
import KbdGeometry
import KbdCommands
import KbdRecording
import KbdPipeline
import KbdControl
import Testing

/// Issue 35: the wire's own event kinds, and `geometry` and device rows as typed values that
/// encode and decode themselves in KbdControl, byte for byte what the service writes.
@Suite struct WireValuesTests {
    static let examples = Fixtures.root + "/../../../examples"

    /// Every layout guide of the example scenarios, written as the service writes a
    /// `geometry` event (EventFormatter), reads back as the same report and writes the same bytes.
    @Test(arguments: ["design-example.json", "split-view.json", "stage-manager.json"])
    func geometryEventsOfTheExampleScenariosDecodeToTheirReports(_ name: String) throws {
        let text = String(decoding: try readWholeFile(path: Self.examples + "/geometry/" + name, limit: 1 << 20), as: UTF8.self)
        let reports = try GeometryScenario.parse(text).reports()
        #expect(reports.count > 1)
        for (i, report) in reports.enumerated() {
            let line = EventFormatter.json(.geometry(time: EventTime(microseconds: Int64(i) * 250_001), report: report))
            let event = try ControlEvent.parse(line)
            #expect(event.payload == .geometry(report))
            #expect(event.kind == .geometry)
            // The same members, and the guide's bytes as the service wrote them (the time is
            // written by each end's own number format).
            #expect(try JSONValue.parse(event.line) == JSONValue.parse(line))
            let guide = try #require(line.firstRange(of: #","layout":"#)).lowerBound
            #expect(event.line.hasSuffix(line[guide...]))
        }
    }

    /// The subscribe reply carries the guide as an object of the same three members.
    @Test func theSubscribeReplysGeometryDecodesToTheReport() throws {
        let text = String(decoding: try readWholeFile(path: Self.examples + "/geometry/split-view.json", limit: 1 << 20), as: UTF8.self)
        let report = try #require(try GeometryScenario.parse(text).reports().last)
        #expect(!report.windows.isEmpty)
        let reply = ControlReply.subscribe(.init(events: [.presence, .geometry], hardwareKeyboard: true, reason: "external keyboard",
                                                 started: 12.5, geometry: report))
        #expect(reply.line.contains(#""geometry":{"layout":""# + report.layout.rawValue + #"","keyboard_frame":"#))
        let back = try ControlReply.parse(reply.line)
        #expect(back == reply)
        #expect(back.line == reply.line)
        guard case .subscribe(let s) = back else { Issue.record("not a subscribe reply"); return }
        #expect(s.geometry?.windows.map(\.id) == report.windows.map(\.id))
    }

    /// What the reader refuses: a layout it does not know, `away` that is not the rest of
    /// `near`, a frame that is not a rectangle; the error names the member.
    @Test func aGeometryThatIsNotAReportIsRefusedWithItsPath() {
        let window = #"{"id":"main","guide":{"x":0,"y":0,"width":10,"height":10},"bottom_offset":0,"near":["bottom"],"#
        let cases = [
            (#"{"event":"geometry","time":1,"layout":"sideways","keyboard_frame":null,"windows":[]}"#, "layout: unknown layout 'sideways'"),
            (#"{"event":"geometry","time":1,"layout":"docked","keyboard_frame":{"x":0,"y":1},"windows":[]}"#, "missing required key \"width\""),
            (#"{"event":"geometry","time":1,"layout":"docked","keyboard_frame":null,"windows":["# + window
                + #""away":["top"],"dismissed":false,"dismiss_region":null,"active_rules":[],"activated":[],"deactivated":[]}]}"#,
             "expected the edges not in \"near\""),
            (#"{"event":"geometry","time":1,"layout":"docked","keyboard_frame":null,"windows":["# + window
                + #""away":["leading","top","trailing"],"dismissed":false,"dismiss_region":null,"active_rules":[],"activated":[],"deactivated":[]}]}"#,
             "expected each edge once, in the order top, bottom, leading, trailing"),
        ]
        for (line, message) in cases {
            #expect(throws: ControlRequestError.self) { try ControlEvent.parse(line) }
            do { _ = try ControlEvent.parse(line) } catch { #expect(error.message.contains(message), "\(error.message)") }
        }
    }

    /// The rows of real devices (a built-in keyboard, a USB one, a lid switch), as the service
    /// lists them and as a one-off scan does, decode to themselves and write the same bytes.
    @Test func deviceRowsOfRealDevicesDecodeToThemselves() throws {
        let names = ["switches/xorg-integration-tests--at-translated-set-2-keyboard.x220t.desc.evemu",
                     "evemu-devices--lenovo-tp-compact-usb-kbd.keyboard.evemu", "switches/systemd--test-35-login.fake-lid-switch.extracted.evemu"]
        var rows: [DeviceRow] = []
        for (i, name) in names.enumerated() {
            let d = try #require(try EvemuReader(path: Fixtures.recording(name)).description)
            let verdict = KeyboardClassifier.classify(d)
            rows.append(DeviceRow(path: "/dev/input/event\(i + 2)", name: d.name, verdict: verdict, id: DeviceID(i), reportsOpen: true))
            rows.append(DeviceRow(path: "/dev/input/event\(i + 2)", name: d.name, inputID: d.id, verdict: verdict))
        }
        rows.append(DeviceRow(path: "/dev/input/event9", name: "", error: "Permission denied", reportsOpen: true))
        let listed = rows.map(ControlReply.ListedDevice.init)
        #expect(listed[0].verdict?.integration == .internal && listed[2].verdict?.integration == .external)
        #expect(listed[4].verdict?.isSwitch == true && listed[4].verdict?.integration == nil)
        #expect(listed[0].open == true && listed[1].open == nil && listed[6].open == false)
        #expect(listed[1].id?.hasPrefix("bus 0011 ") == true)
        let reply = ControlReply.listDevices(listed)
        let back = try ControlReply.parse(reply.line)
        #expect(back == reply)
        #expect(back.line == reply.line)
        // The command line's rows (`devices --format json`) are the same values' bytes.
        #expect(rows.map { $0.jsonValue.serialized() } == listed.map { $0.jsonValue.serialized() })
        #expect(rows[4].jsonValue.serialized().contains(#""keyboard":false,"reason":"switch device (SW_LID)","switch":true"#))
    }

    /// A subscription names the wire's kinds; every pipeline event maps to the kind its line
    /// names, and the daemon's own kinds (`session`, `toolbar`) are the wire's only.
    @Test func thePipelinesEventsMapToTheWiresKinds() throws {
        let text = String(decoding: try readWholeFile(path: Self.examples + "/geometry/design-example.json", limit: 1 << 20), as: UTF8.self)
        let report = try #require(try GeometryScenario.parse(text).reports().first)
        let events: [PipelineEvent] = [
            .attach(time: .zero, device: "k", keyboard: true, integration: .external),
            .detach(time: .zero, device: "k", keyboard: true),
            .chord(time: .zero, device: "k", chord: "Ctrl+S"),
            .presence(time: .zero, hardwareKeyboard: true, reason: .externalKeyboard),
            .geometry(time: .zero, report: report),
            .dropped(time: .zero, device: "k", count: 2, reason: "SYN_DROPPED"),
            .hud(time: .zero, trigger: .hold, view: nil),
        ]
        for event in events {
            #expect(event.eventKind.rawValue == event.kind)
            #expect(try ControlEvent.parse(EventFormatter.json(event)).kind == event.eventKind)
        }
        #expect(Set(ControlEventKind.allCases.map(\.rawValue)) == ControlRequest.eventKinds)
        #expect(try ControlRequest.parse(#"{"request":"subscribe","events":["session","toolbar"]}"#) == .subscribe([.session, .toolbar]))
    }
}
