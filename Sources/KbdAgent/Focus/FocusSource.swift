import KbdSystem
import KbdJSON
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// The window that has the keyboard focus, as the desktop names it.
package struct FocusedWindow: Equatable, Sendable {
    /// The Wayland app id, or the class of the X11 `WM_CLASS`.
    package var app: String
    /// The window title (private: never logged, never sent to the service).
    package var title: String
    /// The process the window belongs to, when the desktop says (sway's and i3's `pid`, X11's
    /// `_NET_WM_PID`): only its focus claims on the accessibility bus count.
    package var pid: Int32?
    package init(app: String, title: String, pid: Int32? = nil) {
        self.app = app
        self.title = title
        self.pid = pid
    }
}

/// What a focus source read: the focused window changed to `window` (nil: none).
package struct FocusChange: Equatable, Sendable {
    package var window: FocusedWindow?
    package init(window: FocusedWindow?) { self.window = window }
}

package struct FocusSourceError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// A desktop interface that reports focus changes on one descriptor the agent's epoll
/// watches: it is read only when the desktop wrote something (no polling, no timer).
package protocol FocusSource: AnyObject {
    /// What it is, for the log ("sway IPC", "i3 IPC", "Hyprland", "EWMH").
    var name: String { get }
    /// The descriptor to wait on (readable when an event arrived).
    var fd: Int32 { get }
    /// Reads what arrived; the last focus change among it, nil when none. Throws when
    /// the desktop went away or spoke something else.
    func read() throws(FocusSourceError) -> FocusChange?
    /// The keyboards' layouts as the desktop reports them through the same interface (sway),
    /// as of the last `read`; nil when it does not say.
    var keyboardLayouts: DesktopLayouts? { get }
}

extension FocusSource {
    package var keyboardLayouts: DesktopLayouts? { nil }
}

/// Which focus source a session has: the first whose environment is there.
package enum FocusSources {
    /// `$SWAYSOCK` (sway), `$I3SOCK` (i3), `$HYPRLAND_INSTANCE_SIGNATURE` (Hyprland's event
    /// socket), `$DISPLAY` without `$WAYLAND_DISPLAY` (any EWMH window manager through
    /// libxcb), in that order; one that
    /// cannot connect is logged and the next is tried. `tried` collects those failures.
    /// A socket is used only when its server runs as `owner` (the agent's uid, SO_PEERCRED):
    /// a window manager of another user could tell the agent which scopes are active.
    package static func open(environment: [String: String], tried: inout [String], owner: UInt32 = geteuid()) -> (any FocusSource)? {
        if let path = environment["SWAYSOCK"], !path.isEmpty {
            do { return try WindowManagerIPC(path: path, name: "sway IPC", inputs: true, owner: owner) } catch { tried.append("sway IPC at \(path): \(error.message)") }
        }
        if let path = environment["I3SOCK"], !path.isEmpty, path != environment["SWAYSOCK"] {
            // i3's windows are X11's: their processes come from the X server.
            let display = environment["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
            do { return try WindowManagerIPC(path: path, name: "i3 IPC", owner: owner, display: display) } catch { tried.append("i3 IPC at \(path): \(error.message)") }
        }
        if let signature = environment["HYPRLAND_INSTANCE_SIGNATURE"], !signature.isEmpty {
            for path in HyprlandEvents.socketPaths(signature: signature, runtimeDirectory: environment["XDG_RUNTIME_DIR"]) {
                do { return try HyprlandEvents(path: path, owner: owner) } catch { tried.append("Hyprland at \(path): \(error.message)") }
            }
        }
        // In a Wayland session $DISPLAY is Xwayland's, which knows only the X11 windows.
        if let display = environment["DISPLAY"], !display.isEmpty, (environment["WAYLAND_DISPLAY"] ?? "").isEmpty {
            do { return try EWMHFocus(display: display) } catch { tried.append("EWMH on \(display): \(error.message)") }
        }
        return nil
    }
}

/// Connects a stream socket to `path`, non-blocking and close-on-exec.
func connectStream(_ path: String, owner: UInt32) throws(FocusSourceError) -> Int32 {
    let fd: Int32
    do { fd = try UnixSocketAddress(path: path).connect() } catch { throw FocusSourceError(message: error.message) }
    var peer = kbd_peer()
    guard kbd_peer_credentials(fd, &peer) == 0, peer.uid == owner else {
        let who = kbd_peer_credentials(fd, &peer) == 0 ? "uid \(peer.uid)" : "an unknown user"
        close(fd)
        throw FocusSourceError(message: "served by \(who), not by uid \(owner) (this agent's user); not using it")
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
    return fd
}
