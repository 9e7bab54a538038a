import Logging
import KbdConfig
import KbdSystem
import KbdProcess
#if canImport(Glibc)
import Glibc
#endif


/// squeekboard and Phosh: `SetVisible(b)` on `sm.puri.OSK0`, state in its `Visible`
/// property (squeekboard 1.21 declares `GetVisible` but does not implement it).
final class Squeekboard: KeyboardSwitch {
    static let busName = "sm.puri.OSK0"
    static let path = "/sm/puri/OSK0"
    let name = "squeekboard"

    func switchOff() throws -> Bool {
        try DesktopProcess.bool {
            let bus = try MessageBus()
            guard try bus.getBool(Self.busName, Self.path, Self.busName, "Visible") else { return false }
            try bus.call(Self.busName, Self.path, Self.busName, "SetVisible", bool: false)
            return true
        }
    }

    func switchOn() throws {
        _ = try DesktopProcess.call { try MessageBus().call(Self.busName, Self.path, Self.busName, "SetVisible", bool: true); return "" }
    }
}
