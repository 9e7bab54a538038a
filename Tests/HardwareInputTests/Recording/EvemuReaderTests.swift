import KbdTOML
import KbdSystem
import KbdCore
import KbdGeometry
import KbdRecording
import KbdEvdev
import Testing

struct EvemuReaderTests {
    static func readAll(_ text: String, path: String = "t.evemu") throws(RecordingError) -> (DeviceDescription?, [InputEvent]) {
        let reader = try EvemuReader(source: MemoryByteSource(text), path: path)
        var events: [InputEvent] = []
        while let e = try reader.next() { events.append(e) }
        return (reader.description, events)
    }

    static func readFile(_ path: String) throws(RecordingError) -> (DeviceDescription?, [InputEvent]) {
        let reader = try EvemuReader(path: path)
        var events: [InputEvent] = []
        while let e = try reader.next() { events.append(e) }
        return (reader.description, events)
    }

    @Test(arguments: Fixtures.recordingNames)
    func everyRealRecordingParses(_ name: String) throws {
        let (_, events) = try Self.readFile(Fixtures.recording(name))
        // Times never go backwards.
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.time <= $1.time })
    }

    @Test func lenovoHeaderIsRead() throws {
        let (d, events) = try Self.readFile(Fixtures.recording("evemu-devices--lenovo-tp-compact-usb-kbd.keyboard.evemu"))
        let desc = try #require(d)
        #expect(desc.name == "Lenovo ThinkPad Compact USB Keyboard with TrackPoint")
        #expect(desc.id == InputID(bustype: 3, vendor: 0x17ef, product: 0x6047, version: 0x100))
        #expect(desc.has(type: EventType.key, code: 30))  // KEY_A
        #expect(desc.has(type: EventType.led, code: 0))
        #expect(desc.has(type: EventType.rep))
        #expect(events.first == InputEvent(time: EventTime(microseconds: 1), type: 4, code: 4, value: 458792))
        #expect(events.filter(\.isKey).map(\.code) == [28, 29, 46])
    }

    @Test func k400AxesAndRepeatsAreRead() throws {
        let (d, events) = try Self.readFile(Fixtures.recording("evemu-devices--logitech-k400-plus.evemu"))
        let desc = try #require(d)
        #expect(desc.absAxes == [AbsAxis(code: 0x20, minimum: 1, maximum: 652)])
        #expect(events.filter { $0.isKey && $0.value == 2 }.count == 3)
    }

    @Test func crlfAndCommentsAndBlankLinesAreTolerated() throws {
        let (d, events) = try Self.readAll("# EVEMU 1.3\r\nN: Test Board\r\nI: 0003 046d c31c 0110\r\n\r\n# a comment\r\nE: 0.000100 0001 001e 0001\t# EV_KEY / KEY_A 1\r\nE: 0.000100 0000 0000 0000\r\n")
        #expect(d?.name == "Test Board")
        #expect(events.count == 2)
        #expect(events[0] == InputEvent(time: EventTime(microseconds: 100), type: 1, code: 30, value: 1))
    }

    @Test func eventsOnlyFilesHaveNoDescription() throws {
        let (d, events) = try Self.readAll("E: 5.000001 0001 001e 1\nE: 5.000001 0000 0000 0\n")
        #expect(d == nil)
        #expect(events.count == 2)
    }

    @Test(arguments: [
        ("N: X\nI: 0003 zz 0001 0001\n", "t.evemu:2: expected four hexadecimal numbers (bus vendor product version) after 'I:'"),
        ("N: X\nI: 0003 0001 0001\n", "t.evemu:2: expected four hexadecimal numbers (bus vendor product version) after 'I:'"),
        ("N: X\nI: 0003 0001 0001 0001\nB: 01 ff ff\n", "t.evemu:3: expected eight hexadecimal bytes after the 'B:' event type, found 2"),
        ("N: X\nI: 0003 0001 0001 0001\nB: 40 00 00 00 00 00 00 00 00\n", "t.evemu:3: event type 0x40 out of range; expected at most 0x1f"),
        ("N: X\nI: 0003 0001 0001 0001\nP: 00 00 00 00 00 00 00 0g\n", "t.evemu:3: expected eight hexadecimal bytes after 'P:', found extra text"),
        ("N: X\nI: 0003 0001 0001 0001\nA: 00 0 100\n", "t.evemu:3: expected minimum, maximum, fuzz, flat and resolution after the 'A:' axis code, found 2 numbers"),
        ("X: what\n", "t.evemu:1: unknown line kind 'X:'; expected N:, I:, P:, B:, A:, L:, S:, E: or a # comment"),
        ("hello\n", "t.evemu:1: expected a line starting with N:, I:, P:, B:, A:, L:, S:, E: or #, found 'hello'"),
        ("E: 1.000000 0001 001e\n", "t.evemu:1: expected 'E: <seconds>.<microseconds> <type> <code> <value>' (type and code in hex): bad value"),
        ("E: 1.0 0001 001e 1\n", "t.evemu:1: expected 'E: <seconds>.<microseconds> <type> <code> <value>' (type and code in hex): microseconds must be six digits"),
        ("E: 1 0001 001e 1\n", "t.evemu:1: expected 'E: <seconds>.<microseconds> <type> <code> <value>' (type and code in hex): missing '.' between seconds and microseconds"),
        ("E: 1.000000 0001 001e 1 junk\n", "t.evemu:1: expected 'E: <seconds>.<microseconds> <type> <code> <value>' (type and code in hex): unexpected text after the value"),
        ("E: 1.000000 0001 001e 99999999999\n", "t.evemu:1: expected 'E: <seconds>.<microseconds> <type> <code> <value>' (type and code in hex): bad value"),
        // Found by the evemu fuzzer: 19 digits overflowed Int64 and trapped.
        ("E: 1.000000 0001 001e 9999999999999999999\n", "t.evemu:1: expected 'E: <seconds>.<microseconds> <type> <code> <value>' (type and code in hex): bad value"),
        ("N: X\nI: 0003 0001 0001 0001\nA: 00 9999999999999999999 1 0 0 0\n", "t.evemu:3: expected decimal minimum, maximum, fuzz, flat and resolution after the 'A:' axis code"),
        ("E: 2.000000 0001 001e 1\nE: 1.000000 0001 001e 0\n", "t.evemu:2: time 1.000000 is earlier than the previous event's 2.000000; expected events in time order"),
        ("E: 2.000000 0001 001e 1\nN: late\n", "t.evemu:2: 'N:' after the first event; a device description must come before the events"),
        ("I: 0003 0001 0001 0001\n", "t.evemu:1: 'I:' before 'N:'; expected the device name first"),
        ("N: X\nE: 1.000000 0001 001e 1\n", "t.evemu:2: expected an 'I:' line after 'N:'"),
        ("N: X\nI: 0003 0001 0001 0001\nN: Y\n", "t.evemu:3: a second 'N:' line; expected one device per file"),
        ("N: \n", "t.evemu:1: expected a device name after 'N:'"),
    ])
    func badInputNamesFileLineAndExpectation(_ text: String, _ message: String) {
        do {
            _ = try Self.readAll(text)
            Issue.record("expected an error")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func binaryGarbageIsAnErrorNotACrash() {
        let garbage = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }
        #expect(throws: RecordingError.self) {
            let reader = try EvemuReader(source: MemoryByteSource(garbage), path: "g")
            while try reader.next() != nil {}
        }
    }

    @Test func overlongLinesAreRejectedWithoutUnboundedMemory() {
        let long = "E: 1.000000 0001 001e 1 #" + String(repeating: "x", count: 5000) + "\n"
        do {
            let reader = try EvemuReader(source: MemoryByteSource(long), path: "l.evemu", maxLineLength: 1024)
            _ = try reader.next()
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "l.evemu:1: line longer than 1024 bytes; expected an evemu line")
        }
    }

    @Test func missingFileSaysSo() {
        do {
            _ = try Self.readFile("/nonexistent.evemu")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "/nonexistent.evemu: cannot open: No such file or directory")
        }
    }
}

struct EvemuWriterTests {
    @Test(arguments: Fixtures.recordingNames)
    func roundTripKeepsDescriptionAndEvents(_ name: String) throws {
        let (d, events) = try EvemuReaderTests.readFile(Fixtures.recording(name))
        let desc = d ?? .genericKeyboard(name: name)
        let out = StringOutput()
        var writer = EvemuWriter(output: out)
        writer.writeHeader(desc)
        for e in events { writer.write(e) }
        let (d2, events2) = try EvemuReaderTests.readAll(out.text)
        #expect(d2 == desc)
        #expect(events2 == events)
    }

    @Test func lineFormatMatchesEvemuRecord() {
        let out = StringOutput()
        var writer = EvemuWriter(output: out)
        writer.write(InputEvent(time: EventTime(seconds: 1, microseconds: 399994), type: 1, code: 0x1d, value: 1))
        writer.write(InputEvent(time: EventTime(seconds: 1, microseconds: 399994), type: 0, code: 0, value: 0))
        writer.write(InputEvent(time: EventTime(seconds: 2, microseconds: 5), type: 4, code: 4, value: -12))
        #expect(out.lines == [
            "E: 1.399994 0001 001d 0001\t# EV_KEY / KEY_LEFTCTRL         1",
            "E: 1.399994 0000 0000 0000\t# ------------ SYN_REPORT (0) ---------- +1399ms",
            "E: 2.000005 0004 0004 -012\t# EV_MSC / MSC_SCAN             -12",
        ])
    }

    @Test func headerHasEveryMaskLineEvemuWrites() throws {
        let (d, _) = try EvemuReaderTests.readFile(Fixtures.recording("evemu-devices--razer-blackwidow-2013.keyboard.desc.evemu"))
        let out = StringOutput()
        var writer = EvemuWriter(output: out)
        writer.writeHeader(try #require(d))
        let b = out.lines.filter { $0.hasPrefix("B: ") }
        // EV_SYN once, EV_KEY 0x2ff+1 bits = 96 bytes = 12 lines, and one line per other type as evemu does.
        #expect(b.first == "B: 00 0b 00 00 00 00 00 00 00")
        #expect(b.filter { $0.hasPrefix("B: 01 ") }.count == 12)
        #expect(out.lines.contains("N: Razer Razer BlackWidow 2013"))
        #expect(out.lines.first == "# EVEMU 1.3")
    }
}
