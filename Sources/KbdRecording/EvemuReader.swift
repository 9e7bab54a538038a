public import KbdCore
public import KbdSystem
/// Reads the evemu text format as `evemu-record` 2.7 writes it, streaming:
/// the header (`N:`, `I:`, `P:`, `B:`, `A:`, `L:`, `S:`) is parsed at `init`,
/// events (`E:`) one at a time by `next()`. Comments (`#`, whole-line or after
/// an event), blank lines and CRLF line ends are accepted. A file without a
/// header (only `E:` lines) has a nil `description`.
///
/// Every malformed line is a `RecordingError` naming the path, the line and
/// what was expected. Event times must not go backwards.
public final class EvemuReader<Source: ByteSource & ~Copyable> {
    public let path: String
    /// The device description from the header, nil for an events-only file.
    public private(set) var description: DeviceDescription?
    /// The format version from a `# EVEMU major.minor` first line, if present.
    public private(set) var formatVersion: (major: Int, minor: Int)?

    private var lines: LineReader<Source>
    private var pending: InputEvent?
    /// The previous event's time (`Int64.min` before the first).
    private var lastTime = EventTime(microseconds: .min)
    private var finished = false

    /// Parses the header of `source`. `path` is used in error messages; `chunkSize` is how much
    /// is read at a time (the buffer's size).
    public init(source: consuming Source, path: String, maxLineLength: Int = 1 << 20, chunkSize: Int = 64 * 1024) throws(RecordingError) {
        self.path = path
        self.lines = LineReader(source: source, chunkSize: chunkSize, maxLineLength: maxLineLength)
        try readHeader()
    }

    /// The number of the last line read.
    public var lineNumber: Int { lines.lineNumber }

    /// The next event, or nil at the end of the file.
    public func next() throws(RecordingError) -> InputEvent? {
        if let event = pending {
            pending = nil
            return event
        }
        while !finished {
            guard let range = try nextLine() else {
                finished = true
                return nil
            }
            // Fast path for well-formed event lines; anything else goes through the
            // careful parser, which also produces the error messages.
            if let event = lines.withBytes(range, { (bytes: UnsafeBufferPointer<UInt8>) -> InputEvent? in Self.fastEvent(bytes) }) {
                return try checked(event)
            }
            let parsed: LineKind = try lines.withBytes(range) { bytes throws(RecordingError) -> LineKind in
                try classify(bytes, inHeader: false)
            }
            switch parsed {
            case .skip: continue
            case .event(let event): return try checked(event)
            case .header(let tag):
                throw error("'\(tag):' after the first event; a device description must come before the events")
            }
        }
        return nil
    }

    // MARK: - Lines

    private enum LineKind {
        case skip
        case event(InputEvent)
        case header(Character)
    }

    private func nextLine() throws(RecordingError) -> Range<Int>? {
        do {
            return try lines.nextLine()
        } catch {
            switch error {
            case .io(let e): throw RecordingError(path: path, line: 0, message: "read failed: \(e.message)")
            case .lineTooLong(let n):
                throw RecordingError(path: path, line: lines.lineNumber + 1, message: "line longer than \(n) bytes; expected an evemu line")
            }
        }
    }

    private func error(_ message: String) -> RecordingError {
        RecordingError(path: path, line: lines.lineNumber, message: message)
    }

    private func checked(_ event: InputEvent) throws(RecordingError) -> InputEvent {
        if event.time < lastTime {
            throw error("time \(event.time) is earlier than the previous event's \(lastTime); expected events in time order")
        }
        lastTime = event.time
        return event
    }

    private func classify(_ bytes: UnsafeBufferPointer<UInt8>, inHeader: Bool) throws(RecordingError) -> LineKind {
        var s = ByteScanner(bytes)
        s.skipBlanks()
        if s.atEnd || bytes[s.index] == UInt8(ascii: "#") { return .skip }
        guard s.index + 1 < bytes.count, bytes[s.index + 1] == UInt8(ascii: ":") else {
            throw error("expected a line starting with N:, I:, P:, B:, A:, L:, S:, E: or #, found '\(preview(bytes))'")
        }
        let tag = bytes[s.index]
        switch tag {
        case UInt8(ascii: "E"):
            s.index += 2
            return .event(try parseEvent(&s))
        case UInt8(ascii: "N"), UInt8(ascii: "I"), UInt8(ascii: "P"), UInt8(ascii: "B"),
            UInt8(ascii: "A"), UInt8(ascii: "L"), UInt8(ascii: "S"):
            return .header(Character(Unicode.Scalar(tag)))
        default:
            throw error("unknown line kind '\(Character(Unicode.Scalar(tag))):'; expected N:, I:, P:, B:, A:, L:, S:, E: or a # comment")
        }
    }

    private func preview(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<min(bytes.count, 40)]), as: UTF8.self)
        return bytes.count > 40 ? text + "…" : text
    }

    // MARK: - Events

    /// Parses `E: <sec>.<usec6> <hex type> <hex code> <dec value>` with an optional
    /// trailing comment in one pass; nil for anything else (the careful parser decides).
    @inline(__always)
    static func fastEvent(_ bytes: UnsafeBufferPointer<UInt8>) -> InputEvent? {
        // One pass over `E: sec.usec type code value` with pointer arithmetic and no
        // optionals in the loops: this runs once per event of every replay.
        guard var p = bytes.baseAddress, bytes.count >= 18, p[0] == 0x45 /* E */, p[1] == 0x3A /* : */, p[2] == 0x20
        else { return nil }
        let end = p + bytes.count
        p += 3
        var sec: Int64 = 0
        let secStart = p
        while p < end {
            let d = p.pointee &- 0x30
            if d > 9 { break }
            sec = sec &* 10 &+ Int64(d)
            p += 1
        }
        let secDigits = p - secStart
        guard secDigits > 0, secDigits <= 12, end - p >= 7, p.pointee == 0x2E /* . */ else { return nil }
        p += 1
        var usec: Int64 = 0
        for k in 0..<6 {
            let d = p[k] &- 0x30
            if d > 9 { return nil }
            usec = usec &* 10 &+ Int64(d)
        }
        p += 6
        // ` hex` of one to four digits.
        @inline(__always) func hex(_ p: inout UnsafePointer<UInt8>) -> UInt32 {
            guard p < end, p.pointee == 0x20 else { return .max }
            p += 1
            var v: UInt32 = 0
            let start = p
            while p < end, p - start < 4 {
                let c = p.pointee
                let d = c &- 0x30
                if d <= 9 {
                    v = v &<< 4 | UInt32(d)
                } else {
                    let l = (c | 0x20) &- 0x61
                    if l >= 6 { break }
                    v = v &<< 4 | UInt32(l &+ 10)
                }
                p += 1
            }
            return p == start ? .max : v
        }
        // evemu writes type and code as four hex digits (%04x): those are read without the
        // loop (the same digits the loop would take: it stops after four).
        @inline(__always) func nibble(_ c: UInt8) -> UInt32 {
            let d = UInt32(c &- 0x30)
            let l = UInt32((c | 0x20) &- 0x61)
            return d < 10 ? d : (l < 6 ? l &+ 10 : 0xFF)
        }
        @inline(__always) func hex4(_ p: inout UnsafePointer<UInt8>) -> UInt32 {
            if end - p >= 5, p.pointee == 0x20 {
                let n0 = nibble(p[1]), n1 = nibble(p[2]), n2 = nibble(p[3]), n3 = nibble(p[4])
                if n0 | n1 | n2 | n3 < 16 {
                    p += 5
                    return n0 << 12 | n1 << 8 | n2 << 4 | n3
                }
            }
            return hex(&p)
        }
        let type = hex4(&p)
        let code = hex4(&p)
        guard type != .max, code != .max, p < end, p.pointee == 0x20 else { return nil }
        p += 1
        let negative = p < end && p.pointee == 0x2D /* - */
        if negative { p += 1 }
        var value: Int64 = 0
        let valueStart = p
        while p < end, p - valueStart < 10 {
            let d = p.pointee &- 0x30
            if d > 9 { break }
            value = value &* 10 &+ Int64(d)
            p += 1
        }
        guard p > valueStart else { return nil }
        if p < end {
            // Only blanks, then an optional comment, may follow.
            while p < end, p.pointee == 0x09 || p.pointee == 0x20 { p += 1 }
            guard p == end || p.pointee == 0x23 else { return nil }
        }
        if negative { value = -value }
        guard value >= Int64(Int32.min), value <= Int64(Int32.max) else { return nil }
        return InputEvent(time: EventTime(microseconds: sec &* 1_000_000 &+ usec), type: UInt16(type), code: UInt16(code), value: Int32(value))
    }

    private func parseEvent(_ s: inout ByteScanner) throws(RecordingError) -> InputEvent {
        let form = "expected 'E: <seconds>.<microseconds> <type> <code> <value>' (type and code in hex)"
        guard s.skipBlanks() else { throw error(form) }
        let (sec, secDigits) = s.unsignedDigits(limit: 12)
        guard secDigits > 0, let sec else { throw error("\(form): bad seconds") }
        guard s.consume(UInt8(ascii: ".")) else { throw error("\(form): missing '.' between seconds and microseconds") }
        let (usec, usecDigits) = s.unsignedDigits(limit: 6)
        guard usecDigits == 6, let usec else { throw error("\(form): microseconds must be six digits") }
        guard s.skipBlanks(), let type = s.hex(), type <= 0xFFFF else { throw error("\(form): bad type") }
        guard s.skipBlanks(), let code = s.hex(), code <= 0xFFFF else { throw error("\(form): bad code") }
        guard s.skipBlanks(), let value = s.decimal(), value >= Int64(Int32.min), value <= Int64(Int32.max) else {
            throw error("\(form): bad value")
        }
        guard s.atEndOrComment() else { throw error("\(form): unexpected text after the value") }
        return InputEvent(
            time: EventTime(seconds: sec, microseconds: usec), type: UInt16(type), code: UInt16(code), value: Int32(value))
    }

    // MARK: - Header

    private func readHeader() throws(RecordingError) {
        var builder: DeviceDescription?
        var byteOffsets = [Int](repeating: 0, count: EventType.count)
        var propOffset = 0
        var sawID = false
        while let range = try nextLine() {
            let isFirst = lines.lineNumber == 1
            let step: HeaderStep = try lines.withBytes(range) { bytes throws(RecordingError) -> HeaderStep in
                if isFirst, let version = Self.version(bytes) {
                    formatVersion = version
                    return .continue
                }
                let kind = try classify(bytes, inHeader: true)
                switch kind {
                case .skip: return .continue
                case .event(let event): return .firstEvent(event)
                case .header(let tag):
                    var s = ByteScanner(bytes)
                    s.skipBlanks()
                    s.index += 2
                    switch tag {
                    case "N":
                        guard builder == nil else { throw error("a second 'N:' line; expected one device per file") }
                        s.skipBlanks()
                        let name = s.rest()
                        guard !name.isEmpty else { throw error("expected a device name after 'N:'") }
                        builder = DeviceDescription(name: name)
                    case "I":
                        guard builder != nil else { throw error("'I:' before 'N:'; expected the device name first") }
                        guard !sawID else { throw error("a second 'I:' line; expected one") }
                        var ids: [UInt16] = []
                        for _ in 0..<4 {
                            guard s.skipBlanks(), let v = s.hex(), v <= 0xFFFF else {
                                throw error("expected four hexadecimal numbers (bus vendor product version) after 'I:'")
                            }
                            ids.append(UInt16(v))
                        }
                        guard s.atEndOrComment() else { throw error("unexpected text after the four 'I:' numbers") }
                        builder!.id = InputID(bustype: ids[0], vendor: ids[1], product: ids[2], version: ids[3])
                        sawID = true
                    default:
                        guard builder != nil, sawID else {
                            throw error("'\(tag):' before 'N:' and 'I:'; expected the device name and id first")
                        }
                        try parseCapabilityLine(tag, &s, &builder!, &byteOffsets, &propOffset)
                    }
                    return .continue
                }
            }
            switch step {
            case .continue: continue
            case .firstEvent(let event):
                if builder != nil && !sawID { throw error("expected an 'I:' line after 'N:'") }
                description = builder
                pending = try checked(event)
                return
            }
        }
        if builder != nil && !sawID { throw error("expected an 'I:' line after 'N:'") }
        description = builder
        finished = true
    }

    private enum HeaderStep {
        case `continue`
        case firstEvent(InputEvent)
    }

    private static func version(_ bytes: UnsafeBufferPointer<UInt8>) -> (Int, Int)? {
        let prefix = Array("# EVEMU ".utf8)
        guard bytes.count > prefix.count, bytes.starts(with: prefix) else { return nil }
        var s = ByteScanner(bytes)
        s.index = prefix.count
        let (major, a) = s.unsignedDigits(limit: 4)
        guard a > 0, let major, s.consume(UInt8(ascii: ".")) else { return nil }
        let (minor, b) = s.unsignedDigits(limit: 4)
        guard b > 0, let minor else { return nil }
        return (Int(major), Int(minor))
    }

    private func parseCapabilityLine(
        _ tag: Character, _ s: inout ByteScanner, _ d: inout DeviceDescription,
        _ byteOffsets: inout [Int], _ propOffset: inout Int
    ) throws(RecordingError) {
        switch tag {
        case "P":
            let bytes = try eightBytes(&s, what: "'P:'")
            d.properties.set(bytes: bytes, at: propOffset)
            propOffset += 8
        case "B":
            guard s.skipBlanks(), let type = s.hex() else {
                throw error("expected an event type and eight hexadecimal bytes after 'B:'")
            }
            guard type < UInt64(EventType.count) else {
                throw error("event type 0x\(String(type, radix: 16)) out of range; expected at most 0x1f")
            }
            let bytes = try eightBytes(&s, what: "the 'B:' event type")
            // evemu always writes EV_SYN as "B: 00 0b …"; its content carries nothing, so it is normalised.
            if type != 0 { d.capabilities[Int(type)].set(bytes: bytes, at: byteOffsets[Int(type)]) }
            byteOffsets[Int(type)] += 8
        case "A":
            var fields: [Int64] = []
            guard s.skipBlanks(), let code = s.hex(), code < 0x40 else {
                throw error("expected an axis code (hex, below 0x40) after 'A:'")
            }
            while s.skipBlanks(), !s.atEndOrComment() {
                guard let v = s.decimal(), v >= Int64(Int32.min), v <= Int64(Int32.max) else {
                    throw error("expected decimal minimum, maximum, fuzz, flat and resolution after the 'A:' axis code")
                }
                fields.append(v)
            }
            guard fields.count == 4 || fields.count == 5 else {
                throw error("expected minimum, maximum, fuzz, flat and resolution after the 'A:' axis code, found \(fields.count) numbers")
            }
            let f = fields.map { Int32($0) }
            d.absAxes.append(AbsAxis(code: UInt16(code), minimum: f[0], maximum: f[1], fuzz: f[2], flat: f[3], resolution: f.count > 4 ? f[4] : 0))
            d.capabilities[Int(EventType.abs)].insert(Int(code))
        case "L", "S":
            guard s.skipBlanks(), let code = s.hex(), code <= 0xFFFF, s.skipBlanks(), let state = s.decimal(),
                state >= Int64(Int32.min), state <= Int64(Int32.max), s.atEndOrComment()
            else {
                throw error("expected a code (hex) and a state (decimal) after '\(tag):'")
            }
            if tag == "L" { d.ledStates[UInt16(code)] = Int32(state) } else { d.switchStates[UInt16(code)] = Int32(state) }
        default:
            throw error("unknown line kind '\(tag):'")
        }
    }

    private func eightBytes(_ s: inout ByteScanner, what: String) throws(RecordingError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8)
        for _ in 0..<8 {
            guard s.skipBlanks(), let v = s.hex(), v <= 0xFF else {
                throw error("expected eight hexadecimal bytes after \(what), found \(bytes.count)")
            }
            bytes.append(UInt8(v))
        }
        guard s.atEndOrComment() else { throw error("expected eight hexadecimal bytes after \(what), found extra text") }
        return bytes
    }
}

extension EvemuReader where Source == FileByteSource {
    /// Opens and reads the header of the evemu file at `path`.
    public convenience init(path: String) throws(RecordingError) {
        let file: FileByteSource
        do { file = try FileByteSource(path: path) } catch {
            throw RecordingError(path: path, line: 0, message: "cannot open: \(error.message)")
        }
        try self.init(source: file, path: path)
    }
}
