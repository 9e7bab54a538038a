import CXcb
#if canImport(Glibc)
import Glibc
#endif

/// The focused window on X11 from any EWMH window manager, through libxcb (loaded when
/// this source opens): `_NET_ACTIVE_WINDOW` on the root window, the class of its
/// `WM_CLASS`, its `_NET_WM_NAME` and its `_NET_WM_PID` (the process of its client). The agent wakes on the connection's descriptor only
/// when a property it selected changed (the root's, and the active window's for its title).
package final class EWMHFocus: FocusSource {
    package let name = "EWMH"
    package let fd: Int32
    private var x = kbd_xcb()
    private var last: FocusedWindow?
    private var first = true

    package init(display: String) throws(FocusSourceError) {
        var reason: Int32 = 0
        let fd = kbd_xcb_open(&x, display, &reason)
        guard fd >= 0 else {
            switch reason {
            case 1: throw FocusSourceError(message: "cannot load libxcb.so.1")
            case 3: throw FocusSourceError(message: "the display has no screen")
            default: throw FocusSourceError(message: "cannot connect to the X server")
            }
        }
        self.fd = fd
    }

    deinit { kbd_xcb_close(&x) }

    package func read() throws(FocusSourceError) -> FocusChange? {
        // The first call reads the state there is. Reading a property may queue events in
        // libxcb without the descriptor becoming readable again: drain until none is left.
        var changed = first
        first = false
        var window = last
        while true {
            var active: Int32 = 0
            var title: Int32 = 0
            guard kbd_xcb_drain(&x, &active, &title) == 0 else { throw FocusSourceError(message: "the X server closed the connection") }
            if active != 0 || title != 0 { changed = true }
            guard changed else { break }
            changed = false
            window = current()
        }
        guard window != last else { return nil }
        last = window
        return FocusChange(window: window)
    }

    /// The state now: the active window's class and title, selecting its property changes.
    package func current() -> FocusedWindow? {
        let w = kbd_xcb_active_window(&x)
        kbd_xcb_watch(&x, w)
        guard w != 0 else { return nil }
        guard let app = text(w, 1) else { return nil }
        let pid = kbd_xcb_pid(&x, w)
        return FocusedWindow(app: app, title: text(w, 0) ?? "", pid: pid > 0 && pid <= UInt32(Int32.max) ? Int32(pid) : nil)
    }

    private func text(_ window: xcb_window_t, _ which: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBufferPointer { kbd_xcb_text(&x, window, which, $0.baseAddress, Int32($0.count)) }
        guard n >= 0 else { return nil }
        return String(decoding: buffer.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The process of an X11 window (`_NET_WM_PID`, as its client set it), for a focus source
/// that names X11 windows but not their processes (i3's IPC). A connection for lookups only:
/// it selects no events, so it never wakes the agent.
package final class X11WindowProcess {
    private var x = kbd_xcb()

    package init?(display: String) {
        guard kbd_xcb_open_lookups(&x, display) == 0 else { return nil }
    }

    deinit { kbd_xcb_close(&x) }

    /// The window's process, nil when its client did not say (or the window is gone).
    package func pid(window: UInt32) -> Int32? {
        let pid = kbd_xcb_pid(&x, window)
        return pid > 0 && pid <= UInt32(Int32.max) ? Int32(pid) : nil
    }
}
