import ArgumentParser
import KbdProcess
import KbdService
import KbdSystem
import KbdGeometry

struct GeometryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geometry",
        abstract: "Compute the keyboard layout guide for a scenario (mini-toolbar switch).",
        discussion: """
            Reads a scenario (screen, windows, keyboard, hardware keyboard and toolbar, steps) and \
            prints one JSON object per step: the layout, the keyboard frame and, per window, the \
            guide, bottom offset, near/away edges and tracking rules. See docs/presence-and-geometry.md.

            Example:
              kbd-commandd geometry /usr/share/doc/kbd-commandd/examples/geometry/split-view.json --svg /tmp/layout.svg
            """
    )

    @Argument(help: ArgumentHelp("The scenario JSON file.", valueName: "scenario"))
    var scenario: String

    @Option(help: ArgumentHelp("Also draw every step as SVG panels to this file.", valueName: "file"))
    var svg: String?

    func run() throws {
        try withErrorReporting {
            let bytes: [UInt8]
            do { bytes = try readWholeFile(path: scenario, limit: 16 << 20) } catch {
                throw CLIFailure(message: "\(scenario): cannot read: \((error as? SystemError)?.message ?? "\(error)")", code: ExitStatus.noInput)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let lines: [String]
            var drawing: String?
            do {
                lines = try GeometryScenarioRunner.run(text: text)
                if svg != nil { drawing = try GeometryScenarioRunner.svg(text: text) }
            } catch {
                throw CLIFailure(message: "\(scenario): \(error)", code: ExitStatus.dataError)
            }
            let stdout = FileOutput.standardOutput()
            for line in lines { stdout.write(line + "\n") }
            try stdout.flush()
            if let svg, let drawing {
                do {
                    let file = try FileOutput.create(path: svg, mode: 0o644)
                    file.write(drawing)
                    try file.flush()
                } catch {
                    throw CLIFailure(message: "\(svg): cannot write: \((error as? SystemError)?.message ?? "\(error)")", code: ExitStatus.failure)
                }
            }
        }
    }
}
