import ArgumentParser
import HardwareInput

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List every input device node with its keyboard verdict and the reason.",
        discussion: """
            A keyboard has the key block KEY_ESC…KEY_S (as udev's input_id decides); power buttons, \
            lid switches, headsets, mice and tablet pads are not keyboards. [devices] include/exclude \
            in the config (names or vendor:product) overrides the verdict. With FILE arguments, \
            classifies evemu recordings' device descriptions instead of live nodes.

            Examples:
              kbd-commandd devices
              kbd-commandd devices --config /etc/kbd-commandd/config.toml --format json
              kbd-commandd devices some-device.evemu
            """
    )

    @Argument(help: ArgumentHelp("evemu files to classify instead of live devices.", valueName: "file"))
    var files: [String] = []

    @OptionGroup var configOption: ConfigOption

    @Option(help: ArgumentHelp("Where device nodes are.", valueName: "dir"))
    var inputDir = "/dev/input"

    @Option(help: ArgumentHelp("Output format: text or json.", valueName: "format"))
    var format: OutputFormat = .text

    func run() throws {
        try withErrorReporting {
            let config = try configOption.load()
            var rows: [(String, String, String, KeyboardClassifier.Verdict?, String?)] = []
            if files.isEmpty {
                let source = EvdevDeviceSource(directory: inputDir)
                let nodes = source.scan()
                if nodes.isEmpty { FileOutput.standardError().write("no device nodes in \(inputDir)\n") }
                for path in nodes {
                    do {
                        let device = try source.open(path)
                        rows.append((path, device.description.name, device.description.id.description,
                                     KeyboardClassifier.classify(device.description, filter: config.devices), nil))
                    } catch {
                        rows.append((path, "", "", nil, (error as? SystemError)?.message ?? "\(error)"))
                    }
                }
            } else {
                for path in files {
                    let reader = try EvemuReader(path: path)
                    let d = reader.description ?? .genericKeyboard(name: path)
                    rows.append((path, d.name, d.id.description, KeyboardClassifier.classify(d, filter: config.devices), nil))
                }
            }
            let out = FileOutput.standardOutput()
            for (path, name, id, verdict, error) in rows {
                if format == .json {
                    var o = JSONObject([("path", .string(path)), ("name", .string(name)), ("id", .string(id))])
                    if let verdict {
                        _ = o.updateValue(.bool(verdict.isKeyboard), forKey: "keyboard")
                        _ = o.updateValue(.string(verdict.reason), forKey: "reason")
                    }
                    if let error { _ = o.updateValue(.string(error), forKey: "error") }
                    out.write(JSONValue.object(o).serialized() + "\n")
                } else if let verdict {
                    out.write("\(path.escapingControlCharacters)  \"\(name.escapingControlCharacters)\"  \(id)\n    \(verdict)\n")
                } else {
                    out.write("\(path)  cannot open: \(error ?? "?")\n")
                }
            }
            try out.flush()
        }
    }
}
