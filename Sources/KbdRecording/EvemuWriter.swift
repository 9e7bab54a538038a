public import KbdCore
public import KbdSystem
/// Writes the evemu text format exactly as `evemu-record` 2.7 does, so that
/// `evemu-play` and `evemu-device` accept our files: `# EVEMU 1.3`, a
/// commented summary, `N:`, `I:`, `P:`, `B:` (every type libevdev knows, in
/// eight-byte lines), `A:`, `L:`, `S:`, then `E:` lines with the same trailing
/// comment evemu prints.
public struct EvemuWriter {
    private let output: any TextOutput
    private var lastSynMilliseconds: Int64 = 0

    public init(output: any TextOutput) {
        self.output = output
    }

    /// Writes the header for `device`. `comment` lines (without `#`) go after the version line.
    public mutating func writeHeader(_ device: DeviceDescription, comments: [String] = []) {
        var out = "# EVEMU 1.3\n"
        for line in comments { out += "# \(line)\n" }
        out += "# Input device name: \"\(device.name)\"\n"
        out += "# Input device ID: bus \(hexAlt(device.id.bustype)) vendor \(hexAlt(device.id.vendor)) product \(hexAlt(device.id.product)) version \(hexAlt(device.id.version))\n"
        out += "# Supported events:\n"
        for type in 0..<UInt16(EventType.count) where device.has(type: type) {
            out += "#   Event type \(type) (\(EventCodeNames.typeName(type) ?? "(null)"))\n"
            for code in device.capabilities[Int(type)].members {
                out += "#     Event code \(code) (\(EventCodeNames.name(type: type, code: UInt16(code)) ?? "(null)"))\n"
            }
        }
        out += "# Properties:\n"
        for prop in device.properties.members { out += "#   Property  type \(prop)\n" }
        out += "N: \(device.name)\n"
        out += "I: \(hex4(device.id.bustype)) \(hex4(device.id.vendor)) \(hex4(device.id.product)) \(hex4(device.id.version))\n"
        // INPUT_PROP_CNT is 32 bits: one P: line.
        out += "P: " + (0..<8).map { hex2(device.properties.byte($0)) }.joined(separator: " ") + "\n"
        out += "B: 00 0b 00 00 00 00 00 00 00\n"
        for type in 1..<UInt16(EventType.count) {
            guard let max = EventCodeNames.maxCode(type: type) else { continue }
            let mask = device.capabilities[Int(type)]
            let byteCount = (max + 1 + 7) / 8
            var i = 0
            while i < byteCount {
                out += "B: \(hex2(UInt8(type)))"
                for j in 0..<8 { out += " " + hex2(mask.byte(i + j)) }
                out += "\n"
                i += 8
            }
        }
        for axis in device.absAxes.sorted(by: { $0.code < $1.code }) {
            out += "A: \(hex2(UInt8(axis.code))) \(axis.minimum) \(axis.maximum) \(axis.fuzz) \(axis.flat) \(axis.resolution)\n"
        }
        for (code, state) in device.ledStates.sorted(by: { $0.key < $1.key }) where state != 0 {
            out += "L: \(hex2(UInt8(truncatingIfNeeded: code))) \(state)\n"
        }
        for (code, state) in device.switchStates.sorted(by: { $0.key < $1.key }) where state != 0 {
            out += "S: \(hex2(UInt8(truncatingIfNeeded: code))) \(state)\n"
        }
        output.write(out)
    }

    /// Writes one `E:` line with evemu's descriptive comment.
    public mutating func write(_ event: InputEvent) {
        var out = "E: \(event.time) \(hex4(event.type)) \(hex4(event.code)) \(paddedValue(event.value))\t"
        let codeName = EventCodeNames.name(type: event.type, code: event.code) ?? "(null)"
        if event.type == EventType.syn {
            if event.code == SynCode.mtReport {
                out += "# ++++++++++++ \(codeName) (\(event.value)) ++++++++++\n"
            } else {
                let ms = event.time.seconds * 1000 + event.time.subsecondMicroseconds / 1000
                let dt = ms - lastSynMilliseconds
                lastSynMilliseconds = ms
                out += "# ------------ \(codeName) (\(event.value)) ---------- \(dt >= 0 ? "+" : "")\(dt)ms\n"
            }
        } else {
            let typeName = EventCodeNames.typeName(event.type) ?? "(null)"
            let padded = codeName.count < 20 ? codeName + String(repeating: " ", count: 20 - codeName.count) : codeName
            out += "# \(typeName) / \(padded) \(event.value)\n"
        }
        output.write(out)
    }

    public func flush() throws(SystemError) { try output.flush() }

    /// `%04d`: zero-padded to four characters including the sign.
    private func paddedValue(_ v: Int32) -> String {
        let digits = String(v.magnitude)
        let width = v < 0 ? 3 : 4
        let pad = String(repeating: "0", count: max(0, width - digits.count))
        return (v < 0 ? "-" : "") + pad + digits
    }

    /// `%#04x`: `0x` and at least two hex digits; zero prints as `0000`.
    private func hexAlt(_ v: UInt16) -> String {
        if v == 0 { return "0000" }
        let s = String(v, radix: 16)
        return "0x" + (s.count < 2 ? "0" + s : s)
    }
}
