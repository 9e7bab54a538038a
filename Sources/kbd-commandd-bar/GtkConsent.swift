import CBarShim
import KbdBar
import KbdControl
#if canImport(Glibc)
import Glibc
#endif

/// `--consent`: the consent dialog drawn with GTK through the shim (consent.c); what it shows
/// and answers is KbdBar's ConsentCapture. One per process: it prints one line on stdout.
final class GtkConsent {
    private let options: ConsentOptions
    private var capture: ConsentCapture
    /// What is printed when the loop ends: refuse unless Allow set it.
    private var reply = ConsentDialog.Reply.refuse

    init(options: ConsentOptions) {
        self.options = options
        capture = ConsentCapture(proposed: options.chord)
    }

    /// Shows the dialog until it is answered; prints the answer; the exit status.
    func run() -> Int32 {
        guard kbdbar_consent_init() == Int32(KBDBAR_OK) else {
            say("consent: cannot open a display (WAYLAND_DISPLAY, DISPLAY); refused")
            answer(.refuse)
            return ConsentDialog.unavailable
        }
        installCallbacks()
        kbdbar_consent_show(options.heading, options.description, options.conflictLine)
        redraw()
        kbdbar_consent_arm(Int32(clamping: options.timeoutSeconds * 1000))
        kbdbar_run()
        answer(reply)
        if case .accept = reply { return ConsentDialog.accepted }
        return ConsentDialog.refused
    }

    private func answer(_ reply: ConsentDialog.Reply) {
        guard let line = reply.line else { return }
        _ = (line + "\n").withCString { write(1, $0, strlen($0)) }
    }

    private func redraw() {
        kbdbar_consent_chord(capture.chordText, capture.hint, capture.canAllow ? 1 : 0)
    }

    private func finish(_ reply: ConsentDialog.Reply) {
        self.reply = reply
        kbdbar_consent_arm(-1)
        kbdbar_quit()
    }

    fileprivate func pressed(button index: Int32) {
        switch index {
        case Int32(KBDBAR_CONSENT_ALLOW):
            if let accepted = capture.allowReply { finish(accepted) }
        case Int32(KBDBAR_CONSENT_ANOTHER):
            capture.startCapture()
            redraw()
        default:
            finish(.refuse)
        }
    }

    /// A key: true when the capture took it.
    fileprivate func key(pressed: Bool, keyval: UInt32, state: UInt32) -> Bool {
        let effect = pressed ? capture.keyPressed(keyval: keyval, state: state) : capture.keyReleased(keyval: keyval)
        switch effect {
        case .passed: return false
        case .held: return true
        case .captured, .cancelled:
            redraw()
            return true
        case .refused:
            finish(.refuse)
            return true
        }
    }

    fileprivate func timedOut() {
        say("consent: no answer within \(options.timeoutSeconds) s; refused")
        finish(.refuse)
    }

    /// Hands the shim the callbacks; `self` must outlive the main loop.
    private func installCallbacks() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        kbdbar_consent_set_callbacks(context, { context, index in
            Unmanaged<GtkConsent>.fromOpaque(context!).takeUnretainedValue().pressed(button: index)
        }, { context, pressed, keyval, state in
            Unmanaged<GtkConsent>.fromOpaque(context!).takeUnretainedValue().key(pressed: pressed != 0, keyval: keyval, state: state) ? 1 : 0
        }, { context in
            Unmanaged<GtkConsent>.fromOpaque(context!).takeUnretainedValue().timedOut()
        })
    }
}

/// `--consent …` parsed: runs the dialog, or prints the help or the usage error (exit 2).
func consentMain(_ parsed: ConsentOptions.Parsed) -> Int32 {
    switch parsed {
    case .help:
        _ = BarOptions.help.withCString { write(1, $0, strlen($0)) }
        return ConsentDialog.accepted
    case .usage(let message):
        _ = "Error: \(message)\nUsage: \(BarOptions.consentSynopsis)\n  See 'kbd-commandd-bar --help'.\n".withCString { write(2, $0, strlen($0)) }
        return ConsentDialog.usage
    case .run(let options):
        signal(SIGPIPE, SIG_IGN)
        return GtkConsent(options: options).run()
    }
}
