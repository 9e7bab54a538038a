import ArgumentParser
import KbdProcess
import CLinux
import KbdService
import KbdSystem
import KbdEvdev
import KbdRecording
import KbdCore
#if canImport(Glibc)
import Glibc
#endif

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a device to an evemu file (it will contain everything typed).",
        discussion: """
            Writes the device description and every event until Ctrl+C or SIGTERM, in the format \
            evemu-play and kbd-commandd replay read. The file is created new with mode 0600: an \
            existing file or link is not overwritten (its mode would stay, or the link's target \
            would be written) unless --force replaces it with a new file. WARNING: a recording of a \
            keyboard contains everything typed on it, passwords included.

            Example:
              kbd-commandd record /dev/input/event3 -o session.evemu
            """
    )

    @Argument(help: ArgumentHelp("The device node.", valueName: "device"))
    var device: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file (default: standard output). It must not exist yet.", valueName: "file"))
    var output: String?

    @Flag(help: "Replace the output file if it exists (a regular file or a link; the link's target is left alone).")
    var force = false

    func run() throws {
        try withErrorReporting {
            let dev: EvdevDevice
            do { dev = try EvdevDevice(path: device) } catch {
                throw CLIFailure(message: "\(device): cannot open: \((error as? SystemError)?.message ?? "\(error)")", code: ExitStatus.noInput)
            }
            let out: FileOutput
            if let output {
                out = try Self.open(output, force: force)
            } else {
                out = FileOutput.standardOutput()
            }
            FileOutput.standardError().write("WARNING: this recording contains everything typed on \"\(dev.description.name.escapingControlCharacters)\", passwords included. Ctrl+C stops.\n")
            let signals = makeSignalDescriptor([SIGINT, SIGTERM])
            var writer = EvemuWriter(output: out)
            writer.writeHeader(dev.description)
            try out.flush()
            var fds = [pollfd(fd: dev.fileDescriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: signals, events: Int16(POLLIN), revents: 0)]
            var events: [InputEvent] = []
            var origin: EventTime?
            loop: while true {
                guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { break }
                if fds[1].revents != 0 { break }
                events.removeAll(keepingCapacity: true)
                let status = dev.read(into: &events)
                for var e in events {
                    // Times start just after zero, as evemu-record writes them.
                    if origin == nil { origin = EventTime(microseconds: e.time.microseconds - 1) }
                    e.time = EventTime(microseconds: e.time.microseconds - origin!.microseconds)
                    writer.write(e)
                }
                try out.flush()
                switch status {
                case .drained, .resynchronized: continue
                case .gone, .failed: break loop
                }
            }
            try out.flush()
        }
    }

    /// The output file, created new (mode 0600), or replacing a file or link with `--force`.
    static func open(_ path: String, force: Bool) throws -> FileOutput {
        do {
            return force ? try FileOutput.createReplacing(path: path) : try FileOutput.createNew(path: path)
        } catch {
            let why = switch error.errno {
            case EEXIST: "it exists; not overwriting it with a recording (remove it, or use --force to replace it)"
            case EINVAL: "not a regular file; --force replaces only files and links"
            default: error.message
            }
            throw CLIFailure(message: "\(path.escapingControlCharacters): cannot create: \(why)", code: ExitStatus.failure)
        }
    }
}
