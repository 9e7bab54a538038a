// The shortcuts bar and HUD: `kbd-commandd bar` executes this binary, one per user session,
// usually started by the session agent ([bar] enabled). No argument parser, no Foundation.
import CBarShim
import KbdBar
import KbdControl
import KbdProcess
import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

func say(_ text: String) {
    _ = "kbd-commandd-bar: \(text)\n".withCString { write(2, $0, strlen($0)) }
}

/// The desktop cannot show the bar: no Wayland display, or no layer-shell (GNOME's Mutter).
let exitUnavailable: Int32 = 69

func main() -> Int32 {
    switch BarOptions.parse(Array(CommandLine.arguments.dropFirst())) {
    case .help:
        _ = BarOptions.help.withCString { write(1, $0, strlen($0)) }
        return ExitStatus.success
    case .version:
        _ = "\(ProgramInfo.version)\n".withCString { write(1, $0, strlen($0)) }
        return ExitStatus.success
    case .usage(let message):
        _ = "Error: \(message)\nUsage: \(BarOptions.synopsis)\n  See 'kbd-commandd bar --help'.\n".withCString { write(2, $0, strlen($0)) }
        return ExitStatus.usage
    case .consent(let parsed):
        return consentMain(parsed)
    case .run(let options):
        signal(SIGPIPE, SIG_IGN)
        let environment = ProcessEnvironment.current()
        if let reason = BarOptions.unsupportedDesktop(environment) {
            say("\(reason); not starting (a GNOME Shell extension is a later step)")
            return exitUnavailable
        }
        if let config = options.config ?? BarOptions.defaultConfig(environment: environment), access(config, F_OK) == 0 {
            do {
                let text = String(decoding: try readWholeFile(path: config, limit: 16 << 20), as: UTF8.self)
                if try BarOptions.enabled(configText: text, path: config) == false {
                    say("[bar] enabled = false in \(config); not starting")
                    return ExitStatus.success
                }
            } catch let error as BarConfigError {
                say("\(error.message); going on with the defaults")
            } catch {
                say("\(config): \(error); going on with the defaults")
            }
        }
        guard let socket = options.socket ?? ControlSocketPath.forClient(environment: environment, exists: { access($0, F_OK) == 0 }) else {
            say("no control socket: \(ControlSocketPath.system) does not exist and XDG_RUNTIME_DIR is unset (use --socket)")
            return ExitStatus.usage
        }
        // No compositor to connect to: said before the toolkit starts (and allocates for good).
        guard let display = BarOptions.waylandSocket(environment), access(display, F_OK) == 0 else {
            say("no Wayland display to connect to (WAYLAND_DISPLAY in XDG_RUNTIME_DIR); not starting")
            return exitUnavailable
        }
        switch kbdbar_init() {
        case Int32(KBDBAR_NO_DISPLAY):
            say("cannot open the Wayland display (WAYLAND_DISPLAY); not starting")
            return exitUnavailable
        case Int32(KBDBAR_NO_LAYER_SHELL):
            say("the compositor has no layer-shell (zwlr_layer_shell_v1; GNOME's Mutter has none); not starting")
            return exitUnavailable
        default: break
        }
        let toolkit = GtkToolkit()
        let controller = BarController(socketPath: socket, toolkit: toolkit, trace: environment["KBD_BAR_TRACE"] != nil, log: say)
        toolkit.controller = controller
        toolkit.installCallbacks()
        controller.start()
        kbdbar_run()
        say("stopped")
        return ExitStatus.success
    }
}

exit(main())
