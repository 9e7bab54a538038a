/// The modifiers kbd-commandd names, in the order chord strings list them.
public struct ModifierSet: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let ctrl = ModifierSet(rawValue: 1 << 0)
    public static let alt = ModifierSet(rawValue: 1 << 1)
    public static let shift = ModifierSet(rawValue: 1 << 2)
    public static let `super` = ModifierSet(rawValue: 1 << 3)
    public static let altGr = ModifierSet(rawValue: 1 << 4)
    public static let capsLock = ModifierSet(rawValue: 1 << 5)
    public static let numLock = ModifierSet(rawValue: 1 << 6)

    /// Modifiers that take part in chords: everything but the locks.
    public static let chordModifiers: ModifierSet = [.ctrl, .alt, .shift, .super, .altGr]
    public static let locks: ModifierSet = [.capsLock, .numLock]

    /// Every modifier with its public name, in output order.
    public static let named: [(ModifierSet, String)] = [
        (.ctrl, "Ctrl"), (.alt, "Alt"), (.shift, "Shift"), (.super, "Super"), (.altGr, "AltGr"),
        (.capsLock, "CapsLock"), (.numLock, "NumLock"),
    ]

    /// The names of the members, in output order.
    public var names: [String] { Self.named.compactMap { contains($0.0) ? $0.1 : nil } }

    public var description: String { names.joined(separator: "+") }

    /// Every name `init(name:)` accepts for a chord modifier, canonical names first.
    public static let allNames = ["Ctrl", "Alt", "Shift", "Super", "AltGr", "Control", "Option", "Meta", "Win", "Logo", "Cmd", "Command", "Alt_Gr", "Level3"]

    /// Parses a modifier name as written in a chord; case-insensitive, with common aliases.
    public init?(name: String) {
        switch name.lowercased() {
        case "ctrl", "control": self = .ctrl
        case "alt", "option": self = .alt
        case "shift": self = .shift
        // Meta is the Super key, as in the kernel's KEY_LEFTMETA and in keyd.
        case "super", "meta", "win", "logo", "cmd", "command": self = .super
        case "altgr", "alt_gr", "level3": self = .altGr
        case "capslock", "caps": self = .capsLock
        case "numlock": self = .numLock
        default: return nil
        }
    }
}
