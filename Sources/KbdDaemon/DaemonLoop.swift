import KbdCore
import KbdProcess

/// What a descriptor the daemon's loop watches is: one value per descriptor, dispatched
/// with a `switch` (no bits packed into epoll tokens).
enum DaemonRegistration: Hashable, Sendable {
    /// A kept keyboard or switch.
    case device(DeviceID)
    /// The device source's hotplug watch.
    case hotplug
    /// The control socket's listener, and each client by its descriptor.
    case listener
    case client(Int32)
    /// A command's output pipe, and its pidfd (the runner's).
    case commandOutput(Int32)
    case commandExit(Int32)
    /// A caller's descriptor (the service's signalfd), by the order it was added.
    case external(Int)
    /// logind's monitors (who is at each seat).
    case seats

    /// Keys and signals are handled before the rest of a turn's batch: whatever else is ready
    /// has a budget, so a chord waits for at most one bounded batch.
    var isInput: Bool {
        switch self {
        case .device, .external: true
        default: false
        }
    }
}

/// The daemon's named timers on its clock (libinput's `timer.h`): each is armed from the
/// deadline of what owns it before the loop waits, and again once a turn's input is handled.
enum DaemonTimer: Hashable, Sendable {
    /// A pending sequence, a HUD's delay, presence debounce.
    case pipeline
    /// A command's time limits (the runner's).
    case commands
    /// Accepting again after the process ran out of descriptors.
    case acceptRetry
    /// Naming hotplugged nodes still unreadable after udev's grace time.
    case unreadableNodes
    /// Clients with request lines still buffered: served in the next turn, after the keys.
    case backlog
}

typealias DaemonLoop = EventLoop<DaemonRegistration, DaemonTimer>
