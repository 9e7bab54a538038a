import ArgumentParser
import KbdEvdev
import KbdSystem
import KbdCore
import KbdRecording
import KbdControl
import KbdConfig
import KbdJSON

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List every input device node with its keyboard verdict and the reason.",
        discussion: """
            A keyboard has the key block KEY_ESC…KEY_S (as udev's input_id decides); power buttons, \
            headsets, mice and tablet pads are not keyboards. Each keyboard is internal (built in: \
            bus i8042 or host, or udev's ID_INTEGRATION=internal), virtual (a program's: a uinput \
            device, BUS_VIRTUAL, or a known remapper's keyboard by id or name, such as keyd's \
            0fac:0ade; it never counts for presence) or external (USB, Bluetooth, anything else), \
            with the reason. Devices with a lid or tablet-mode switch are switches: the service reads \
            them for presence, never as keyboards. [devices] include/exclude and \
            internal/external/virtual in the config (names or vendor:product) override the verdicts. \
            The vendor:product after "bus" is what a command's devices = [...] and a [[device]]'s \
            match name; a keyboard the service grabs says so and why. \
            With FILE arguments, classifies evemu recordings' device descriptions instead of live nodes.

            Examples:
              kbd-commandd devices
              kbd-commandd devices --format json
              kbd-commandd devices /usr/share/doc/kbd-commandd/examples/recordings/logitech-k400-ctrl-c.evemu
            """
    )

    @Argument(help: ArgumentHelp("evemu files to classify instead of live devices.", valueName: "file"))
    var files: [String] = []

    @OptionGroup var configOption: ConfigOption

    @Option(help: ArgumentHelp("Where device nodes are.", valueName: "dir"))
    var inputDir = "/dev/input"

    @Option(help: ArgumentHelp("Output format: text or json.", valueName: "format"))
    var format: OutputFormat = .text

    /// A device's row: its verdict, and whether the service would grab it and why.
    static func row(path: String, _ d: DeviceDescription, _ filter: DeviceFilter) -> DeviceRow {
        let verdict = KeyboardClassifier.classify(d, filter: filter)
        var row = DeviceRow(path: path, name: d.name, inputID: d.id, verdict: verdict)
        if verdict.isKeyboard { row.grabbed = filter.grabReason(name: d.name, id: d.id) }
        return row
    }

    func run() throws {
        try withErrorReporting {
            let config = try configOption.load()
            var rows: [DeviceRow] = []
            if files.isEmpty {
                let source = EvdevDeviceSource(directory: inputDir)
                let nodes = source.scan()
                if nodes.isEmpty { FileOutput.standardError().write("no device nodes in \(inputDir)\n") }
                for path in nodes {
                    do {
                        let d = try source.open(path).description
                        rows.append(Self.row(path: path, d, config.devices))
                    } catch {
                        rows.append(DeviceRow(path: path, name: "", error: (error as? SystemError)?.message ?? "\(error)"))
                    }
                }
            } else {
                for path in files {
                    let reader = try EvemuReader(path: path)
                    let d = reader.description ?? .genericKeyboard(name: path)
                    rows.append(Self.row(path: path, d, config.devices))
                }
            }
            let out = FileOutput.standardOutput()
            for row in rows {
                if format == .json {
                    out.write(row.jsonValue.serialized() + "\n")
                } else if let verdict = row.verdict {
                    out.write("\(row.path.escapingControlCharacters)  \"\(row.name.escapingControlCharacters)\"  \(row.inputID?.description ?? "")\n    \(verdict)\n")
                    if let grabbed = row.grabbed { out.write("    grabbed by the service: \(grabbed)\n") }
                } else {
                    out.write("\(row.path.escapingControlCharacters)  cannot open: \((row.error ?? "?").escapingControlCharacters)\n")
                }
            }
            try out.flush()
            let refusedRows = rows.filter { $0.verdict == nil && ($0.error?.contains("Permission denied") ?? false) }
            if !refusedRows.isEmpty {
                // Which of them the service needs: keyboards and switches (udev's marks, else sysfs).
                let source = EvdevDeviceSource(directory: inputDir)
                let needed = refusedRows.filter { source.isKeyboardOrSwitch($0.path) != false }.count
                FileOutput.standardError().write("\(refusedRows.count) of \(rows.count) nodes could not be opened (permission denied), \(needed) of them keyboards or switches: run as root (sudo kbd-commandd devices) to see them; the service reads keyboards and switches through the package's udev rule (60-kbd-commandd.rules, a read ACL for its user), not group input\n")
            }
        }
    }
}
