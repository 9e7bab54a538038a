import Logging
import KbdConfig
import KbdSystem
import KbdProcess
#if canImport(Glibc)
import Glibc
#endif


/// KDE Plasma: KWin's writable property `enabled` of `org.kde.kwin.VirtualKeyboard`
/// (KWin saves it in kwinrc).
final class KWinVirtualKeyboard: KeyboardSwitch {
    static let busName = "org.kde.KWin"
    static let path = "/VirtualKeyboard"
    static let interface = "org.kde.kwin.VirtualKeyboard"
    let name = "KWin's virtual keyboard"

    func switchOff() throws -> Bool {
        try DesktopProcess.bool {
            let bus = try MessageBus()
            guard try bus.getBool(Self.busName, Self.path, Self.interface, "enabled") else { return false }
            try bus.setBool(Self.busName, Self.path, Self.interface, "enabled", false)
            return true
        }
    }

    func switchOn() throws {
        _ = try DesktopProcess.call { try MessageBus().setBool(Self.busName, Self.path, Self.interface, "enabled", true); return "" }
    }
}
