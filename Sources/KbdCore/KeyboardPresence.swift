/// Whether a keyboard is built into the machine (`internal`), plugged in (`external`), or a
/// program's (`virtual`: a uinput keyboard, such as the one a remapper like keyd types through
/// on behalf of the keyboard it grabbed). libinput and systemd's integration rules draw the
/// first line: the on-screen keyboard gives way to an external keyboard always, to an internal
/// one only while it can be typed on. A virtual keyboard never makes it give way: the real
/// keyboard behind it (grabbed, but still attached) is the one that counts.
public enum KeyboardIntegration: String, Sendable, CaseIterable {
    case `internal`, external, virtual

    /// The verdict from the bus alone: i8042/serio and host (platform) keyboards are
    /// built in; BUS_VIRTUAL is a program's; USB, Bluetooth and everything else is external.
    public static func fromBus(_ bustype: UInt16) -> KeyboardIntegration {
        switch bustype {
        case BusType.i8042, BusType.host: return .internal
        case BusType.virtual: return .virtual
        default: return .external
        }
    }
}

/// What counts as a hardware keyboard for presence (`[settings] presence`).
public enum PresencePolicy: String, Sendable, CaseIterable {
    /// An external keyboard, or an internal one while no tablet-mode switch reads 1 and no lid is closed.
    case auto
    /// Only external keyboards: an internal keyboard never hides the on-screen keyboard.
    case externalOnly = "external-only"
    /// Any keyboard, whatever the switches say (the behaviour before switches were read).
    case anyKeyboard = "any-keyboard"
}

/// Why presence is what it is: the `reason` field of `presence` events.
public enum PresenceReason: String, Sendable, CaseIterable {
    case externalKeyboard = "external keyboard"
    case internalKeyboard = "internal keyboard"
    case tabletMode = "tablet mode"
    case lidClosed = "lid closed"
    case noKeyboard = "no keyboard"
    /// `presence = "external-only"` with only internal keyboards attached.
    case noExternalKeyboard = "no external keyboard"
}

/// Switch codes of `linux/input-event-codes.h` that presence reads.
public enum SwitchCode {
    public static let lid: UInt16 = 0x00
    public static let tabletMode: UInt16 = 0x01
    public static let presenceSwitches: [UInt16] = [lid, tabletMode]
}

/// The attached keyboards and switches and the `hardware_keyboard` transitions they
/// imply, debounced: when presence should go false, the change is held for
/// `debounceMilliseconds` and dropped if it should be true again by then (a USB
/// re-enumeration or a hinge that bounces does not flap). Becoming present is
/// immediate. Pure; time comes from events.
public struct KeyboardPresence: Sendable {
    public static let defaultDebounceMilliseconds = 500

    public let debounceMilliseconds: Int
    public let policy: PresencePolicy
    public private(set) var keyboards: [DeviceID: KeyboardIntegration] = [:]
    /// The SW_LID / SW_TABLET_MODE values of each switch device.
    public private(set) var switches: [DeviceID: [UInt16: Bool]] = [:]
    /// What subscribers were last told.
    public private(set) var reported = false
    /// The reason that went with `reported` (kept while a change to false is pending).
    private var reportedReason: PresenceReason = .noKeyboard
    private var pendingFalseAt: EventTime?

    public init(debounceMilliseconds: Int = defaultDebounceMilliseconds, policy: PresencePolicy = .auto) {
        self.debounceMilliseconds = debounceMilliseconds
        self.policy = policy
    }

    /// The time a pending change to false becomes final.
    public var nextDeadline: EventTime? { pendingFalseAt }

    /// Whether any switch device reads tablet mode on.
    public var tabletMode: Bool { switches.values.contains { $0[SwitchCode.tabletMode] == true } }
    /// Whether any switch device reads the lid closed.
    public var lidClosed: Bool { switches.values.contains { $0[SwitchCode.lid] == true } }

    /// What presence would be now, with no debounce. Virtual keyboards do not count.
    public var target: (present: Bool, reason: PresenceReason) {
        if keyboards.values.contains(.external) { return (true, .externalKeyboard) }
        guard keyboards.values.contains(.internal) else { return (false, .noKeyboard) }
        switch policy {
        case .externalOnly: return (false, .noExternalKeyboard)
        case .anyKeyboard: return (true, .internalKeyboard)
        case .auto:
            if tabletMode { return (false, .tabletMode) }
            if lidClosed { return (false, .lidClosed) }
            return (true, .internalKeyboard)
        }
    }

    /// The reason for what subscribers were last told (while a change to false is
    /// pending, the reason they were given for true).
    public var reason: PresenceReason {
        let t = target
        return t.present == reported ? t.reason : reportedReason
    }

    /// A keyboard attached; returns the new presence and its reason if it changed.
    public mutating func attach(_ device: DeviceID, integration: KeyboardIntegration, at time: EventTime) -> (Bool, PresenceReason)? {
        keyboards[device] = integration
        return settle(at: time)
    }

    /// A keyboard or switch device detached.
    public mutating func detach(_ device: DeviceID, at time: EventTime) -> (Bool, PresenceReason)? {
        guard keyboards.removeValue(forKey: device) != nil || switches.removeValue(forKey: device) != nil else { return nil }
        return settle(at: time)
    }

    /// A switch device's state: all of it (at attach, after a resynchronisation), nil codes unchanged.
    public mutating func setSwitches(_ device: DeviceID, _ states: [UInt16: Int32], at time: EventTime) -> (Bool, PresenceReason)? {
        var mine = switches[device] ?? [:]
        for code in SwitchCode.presenceSwitches { if let v = states[code] { mine[code] = v != 0 } else if mine[code] == nil { mine[code] = false } }
        switches[device] = mine
        return settle(at: time)
    }

    /// One EV_SW event of a switch device.
    public mutating func setSwitch(_ device: DeviceID, code: UInt16, value: Int32, at time: EventTime) -> (Bool, PresenceReason)? {
        guard SwitchCode.presenceSwitches.contains(code), switches[device] != nil else { return nil }
        switches[device]![code] = value != 0
        return settle(at: time)
    }

    /// Applies a pending change whose deadline is at or before `time`;
    /// returns the deadline and the reason when presence became false.
    public mutating func expire(at time: EventTime) -> (EventTime, PresenceReason)? {
        guard let deadline = pendingFalseAt, time >= deadline else { return nil }
        pendingFalseAt = nil
        let t = target
        guard !t.present else { return nil }
        reported = false
        reportedReason = t.reason
        return (deadline, t.reason)
    }

    /// Makes a pending change to false final now (the service's start: the devices that were
    /// there at start are not a re-enumeration, and clients should not see a flap).
    public mutating func settleNow(at time: EventTime) -> PresenceReason? {
        guard pendingFalseAt != nil else { return nil }
        pendingFalseAt = nil
        let t = target
        guard !t.present else { return nil }
        reported = false
        reportedReason = t.reason
        return t.reason
    }

    private mutating func settle(at time: EventTime) -> (Bool, PresenceReason)? {
        let t = target
        if t.present {
            pendingFalseAt = nil
            reportedReason = t.reason
            if !reported {
                reported = true
                return (true, t.reason)
            }
            return nil
        }
        guard reported else {
            reportedReason = t.reason
            return nil
        }
        if debounceMilliseconds == 0 {
            reported = false
            reportedReason = t.reason
            return (false, t.reason)
        }
        if pendingFalseAt == nil { pendingFalseAt = time.adding(milliseconds: debounceMilliseconds) }
        return nil
    }
}
