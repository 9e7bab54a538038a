import Testing
import HardwareInput
import KbdTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 33 (7a): a node the service may not open is a problem only when it is a keyboard or a
/// switch. The live source asks udev's database (input_id's marks, as systemd 252 writes
/// /run/udev/data/c13:N), else the node's capabilities in sysfs (world-readable), which are
/// made here from real recorded devices.
@Suite struct UnopenedNodeTests {
    /// A fake /run/udev/data and /sys in a new temporary directory.
    struct Tree {
        let root: String
        init() {
            var template = Array("/tmp/kbd-unopened-XXXXXX".utf8CString)
            root = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
            for dir in ["/udev", "/sys", "/sys/dev", "/sys/dev/char"] { mkdir(root + dir, 0o755) }
        }
        var udev: String { root + "/udev" }
        var sysfs: String { root + "/sys" }
        func write(_ path: String, _ text: String) throws {
            let out = try FileOutput.create(path: root + path)
            out.write(text)
            try out.flush()
        }
        /// /sys/dev/char/13:MINOR/device/capabilities/{key,sw} in the kernel's format.
        func capabilities(minor: Int, _ d: DeviceDescription) throws {
            let base = "/sys/dev/char/13:\(minor)"
            for dir in [base, base + "/device", base + "/device/capabilities"] { mkdir(root + dir, 0o755) }
            try write(base + "/device/capabilities/key", Self.sysfsText(d.capabilities[Int(EventType.key)]) + "\n")
            try write(base + "/device/capabilities/sw", Self.sysfsText(d.capabilities[Int(EventType.sw)]) + "\n")
        }
        /// The kernel's `input_print_bitmap`: hex longs, most significant first, leading zero words dropped.
        static func sysfsText(_ mask: Bitmask) -> String {
            let bits = mask.members
            guard let top = bits.max() else { return "0" }
            var words = [UInt64](repeating: 0, count: top / 64 + 1)
            for bit in bits { words[bit / 64] |= 1 << UInt64(bit % 64) }
            return words.reversed().map { String($0, radix: 16) }.joined(separator: " ")
        }
        func remove() { Self.removeTree(root) }
        static func removeTree(_ path: String) {
            if let d = opendir(path) {
                while let e = readdir(d) {
                    let name = withUnsafePointer(to: e.pointee.d_name) { $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) } }
                    if name == "." || name == ".." { continue }
                    if e.pointee.d_type == UInt8(DT_DIR) { removeTree(path + "/" + name) } else { unlink(path + "/" + name) }
                }
                closedir(d)
            }
            rmdir(path)
        }
    }

    static func device(_ minor: Int) -> UInt64 { UInt64(13 << 8 | minor) }

    @Test func udevMarksSayWhichNodesMatter() throws {
        let tree = Tree()
        defer { tree.remove() }
        // Records as systemd 252's input_id leaves them on a Debian 12 laptop.
        try tree.write("/udev/c13:64", "I:1234567\nE:ID_INPUT=1\nE:ID_INPUT_KEY=1\nE:ID_INPUT_KEYBOARD=1\nE:ID_BUS=usb\nG:seat\nQ:seat\nV:1\n")
        try tree.write("/udev/c13:65", "I:1234568\nE:ID_INPUT=1\nE:ID_INPUT_MOUSE=1\nE:ID_BUS=usb\nG:seat\nQ:seat\nV:1\n")
        try tree.write("/udev/c13:66", "I:1234569\nE:ID_INPUT=1\nE:ID_PATH=platform-pcspkr\nG:seat\nV:1\n")  // the PC speaker
        try tree.write("/udev/c13:67", "I:1234570\nE:ID_INPUT=1\nE:ID_INPUT_SWITCH=1\nG:seat\nV:1\n")  // the lid
        try tree.write("/udev/c13:68", "I:1234571\nE:ID_INPUT=1\nE:ID_INPUT_TABLET=1\nE:ID_INPUT_TABLET_PAD=1\nV:1\n")
        try tree.write("/udev/c13:69", "I:1234572\nE:ID_INPUT=1\nE:ID_INPUT_KEY=1\nE:ID_PATH=acpi-LNXPWRBN:00\nV:1\n")  // the power button
        let verdicts = (64...69).map { EvdevDeviceSource.isKeyboardOrSwitch(device: Self.device($0), udevData: tree.udev, sysfs: nil) }
        #expect(verdicts == [true, false, false, true, false, false])
        // No record (udev not finished, or no udev): unknown, and counted.
        #expect(EvdevDeviceSource.isKeyboardOrSwitch(device: Self.device(70), udevData: tree.udev, sysfs: nil) == nil)
        #expect(UdevDatabase.inputMarks(in: "I:1\nV:1\n") == nil)
    }

    @Test func withoutUdevTheCapabilitiesDecide() throws {
        let tree = Tree()
        defer { tree.remove() }
        try tree.capabilities(minor: 64, try Descriptions.lenovo)
        try tree.capabilities(minor: 65, try Descriptions.mouse)
        try tree.capabilities(minor: 66, try Descriptions.pad)
        try tree.capabilities(minor: 67, try Descriptions.headset)
        try tree.capabilities(minor: 68, try Descriptions.load(SwitchFixtures.lid))
        try tree.capabilities(minor: 69, try Descriptions.load(SwitchFixtures.hpWMI))
        let verdicts = (64...69).map { EvdevDeviceSource.isKeyboardOrSwitch(device: Self.device($0), udevData: tree.udev, sysfs: tree.sysfs) }
        // input_id's rule, as udev would mark them: this mouse advertises the whole keyboard
        // block (so udev marks it ID_INPUT_KEYBOARD and the rule gives it the ACL; once opened,
        // the classifier refuses it by its name), the tablet pad and the headset do not.
        #expect(verdicts == [true, true, false, false, true, true])
        #expect(SysfsDevice.capabilities(text: "3 0 0 ffefffdfffefffff fffffffffffffffe\n")?.contains(1) == true)
        #expect(SysfsDevice.capabilities(text: "0\n")?.isEmpty == true)
        // Neither udev nor sysfs: unknown.
        #expect(EvdevDeviceSource.isKeyboardOrSwitch(device: Self.device(99), udevData: tree.udev, sysfs: tree.sysfs) == nil)
    }
}
