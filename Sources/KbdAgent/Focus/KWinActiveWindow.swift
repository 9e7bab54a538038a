import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// The process of the focused window on KDE Plasma, for the text-input watch (which believes
/// only that process's focus claims on the accessibility bus). KWin has no D-Bus property for
/// it, so a small KWin script, loaded through `org.kde.kwin.Scripting`, calls the watch's own
/// connection on the session bus with the active window's pid at start and at every
/// activation (0: none). Only calls from the owner of `org.kde.KWin` count: any session client
/// could call the same method.
///
/// The script stays loaded until the next watch unloads it by name (the watch ends with a
/// signal, not with a goodbye); a leftover one only calls a connection that is gone.
package struct KWinActiveWindow {
    static let pluginName = "kbd-commandd-focus"
    static let path = "/org/kbd_commandd/Focus"
    static let interface = "org.kbd_commandd.Focus"
    static let member = "Window"
    static let scripting = (name: "org.kde.KWin", path: "/Scripting", interface: "org.kde.kwin.Scripting")

    /// KWin's unique name on the session bus.
    let owner: String
    /// The script's file (removed once KWin called: it has read it by then).
    private(set) var file: String?

    /// The script: KWin 6 names windows `windowActivated`/`activeWindow`, KWin 5
    /// `clientActivated`/`activeClient`.
    package static func script(destination: String) -> String {
        """
        function send(w) { callDBus("\(destination)", "\(path)", "\(interface)", "\(member)", w ? w.pid : 0); }
        if (workspace.windowActivated) { workspace.windowActivated.connect(send); send(workspace.activeWindow); }
        else { workspace.clientActivated.connect(send); send(workspace.activeClient); }

        """
    }

    /// Loads the script into KWin (after unloading one a previous watch left), writing it to
    /// `runtimeDirectory` (the user's own, 0700) first.
    init(session: MessageBus, runtimeDirectory: String) throws(MessageBus.Failure) {
        owner = try session.callString("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", string: Self.scripting.name)
        let me = try session.uniqueName()
        let file = runtimeDirectory + "/kbd-commandd-focus.js"
        unlink(file)
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw MessageBus.Failure(operation: "KWin script", message: SystemError(operation: "open \(file)", errno: errno).message) }
        let bytes = Array(Self.script(destination: me).utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else {
            unlink(file)
            throw MessageBus.Failure(operation: "KWin script", message: "cannot write \(file)")
        }
        let s = Self.scripting
        _ = try? session.call(s.name, s.path, s.interface, "unloadScript", string: Self.pluginName)
        do throws(MessageBus.Failure) {
            let id = try session.callInt32(s.name, s.path, s.interface, "loadScript", file, Self.pluginName)
            guard id >= 0 else { throw MessageBus.Failure(operation: "KWin script", message: "KWin did not load it") }
            try session.call(s.name, s.path, s.interface, "start")
        } catch {
            unlink(file)
            throw error
        }
        self.file = file
    }

    /// What a method call to the watch says: the focused window's application, or nil when it
    /// is not KWin's script calling.
    mutating func window(_ call: MessageBus.Call) -> FocusedApplication? {
        guard let window = Self.window(owner: owner, sender: call.sender, path: call.path, interface: call.interface, member: call.member,
                                       value: call.value) else { return nil }
        if let file { unlink(file); self.file = nil }
        return window
    }

    /// What a call from `sender` says, when it is KWin's (`owner`) script calling.
    package static func window(owner: String, sender: String, path: String, interface: String, member: String, value: Int32?) -> FocusedApplication? {
        guard sender == owner, path == Self.path, interface == Self.interface, member == Self.member, let pid = value else { return nil }
        return pid > 0 ? .pid(pid) : FocusedApplication.none
    }
}
