package import KbdCore
package import KbdSystem
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// What the loop hands its owner: one typed event to one handler (keyd's `evloop.c`).
package enum LoopEvent<Registration: Hashable & Sendable, TimerName: Hashable & Sendable>: Sendable {
    /// A watched descriptor is ready (`events`: `Epoll.readable`, `.writable`, `.hangup` bits).
    case ready(Registration, events: UInt32)
    /// A named timer came due.
    case timer(TimerName)
    /// A signal arrived through the loop's signalfd.
    case signal(Int32)
    /// Entries of the watched directory were written, created, renamed in or removed: their names.
    case directoryChanged([String])
}

/// One thread's event loop: epoll over descriptors registered as values of the owner's
/// enum (swift-nio's selector: a registration is an enum value, dispatch a `switch` over it;
/// no bits packed into tokens), named timers on one clock (`TimerSet`: the loop sleeps until
/// the earliest, and with none armed it sleeps until input: no wake-ups), the process's
/// signals (one signalfd) and one directory watch (inotify). It owns its epoll, signalfd and
/// inotify descriptors; the descriptors it watches belong to whoever registered them.
///
/// Each turn (`runOnce`) waits, then hands every ready registration (those `inputFirst`
/// names first), then every due timer, earliest first, to the handler.
package final class EventLoop<Registration: Hashable & Sendable, TimerName: Hashable & Sendable> {
    package typealias Event = LoopEvent<Registration, TimerName>

    /// The named timers; the owner arms and cancels them between turns or in the handler.
    package var timers = TimerSet<TimerName>()
    package let clock: () -> EventTime
    /// Registrations handed over before the others of the same turn (the service's keys).
    private let inputFirst: (Registration) -> Bool
    private let epoll: Epoll
    /// The epoll token of each registration: a serial number, never reused, so readiness of a
    /// descriptor unwatched earlier in the same turn is dropped rather than misdelivered.
    private var registrations: [UInt64: (fd: Int32, registration: Registration)] = [:]
    private var tokens: [Int32: UInt64] = [:]
    private var nextToken: UInt64 = 3
    private var ready: [Epoll.Ready] = []
    private var signals: Int32 = -1
    private var inotify: Int32 = -1
    private static var signalToken: UInt64 { 1 }
    private static var directoryToken: UInt64 { 2 }

    /// The longest sleep while a timer is armed (a clock step cannot strand a deadline).
    package static var maximumWaitMilliseconds: Int { 60_000 }

    package init(clock: @escaping () -> EventTime = monotonicNow,
                inputFirst: @escaping (Registration) -> Bool = { _ in false }) throws(SystemError) {
        self.clock = clock
        self.inputFirst = inputFirst
        epoll = try Epoll()
    }

    deinit {
        if signals >= 0 { close(signals) }
        if inotify >= 0 { close(inotify) }
    }

    // MARK: - Descriptors

    /// Watches `fd` (owned by the caller) as `registration`; one registration per descriptor.
    package func watch(_ fd: Int32, as registration: Registration, events: UInt32 = Epoll.readable) throws(SystemError) {
        let token = nextToken
        nextToken += 1
        try epoll.add(fd, token: token, events: events)
        if let old = tokens[fd] { registrations[old] = nil }
        tokens[fd] = token
        registrations[token] = (fd, registration)
    }

    /// Changes what `fd` waits for (0: nothing, a paused descriptor).
    package func modify(_ fd: Int32, events: UInt32) {
        guard let token = tokens[fd] else { return }
        epoll.modify(fd, token: token, events: events)
    }

    /// Stops watching `fd` (before the caller closes it).
    package func unwatch(_ fd: Int32) {
        guard let token = tokens.removeValue(forKey: fd) else { return }
        registrations[token] = nil
        epoll.remove(fd)
    }

    /// What `fd` is registered as, if it is watched.
    package func registration(of fd: Int32) -> Registration? { tokens[fd].flatMap { registrations[$0]?.registration } }

    package var watchedCount: Int { registrations.count }

    // MARK: - Signals and the directory

    /// Blocks `numbers` for this thread and reports them as `.signal` (one signalfd, the loop's).
    /// The corresponding C functions are `pthread_sigmask` and `signalfd`.
    package func handleSignals(_ numbers: [Int32]) throws(SystemError) {
        guard signals < 0 else { throw SystemError(operation: "signalfd (a second set)", errno: EBUSY) }
        let fd = makeSignalDescriptor(numbers)
        guard fd >= 0 else { throw SystemError(operation: "signalfd", errno: errno) }
        do { try epoll.add(fd, token: Self.signalToken) } catch {
            close(fd)
            throw error
        }
        signals = fd
    }

    /// Watches one directory for entries written, created, renamed in, or removed (an
    /// editor saves by writing or by renaming over the file). The corresponding C functions are
    /// `inotify_init1` and `inotify_add_watch`.
    package func watchDirectory(_ path: String) throws(SystemError) {
        guard inotify < 0 else { throw SystemError(operation: "inotify (a second directory)", errno: EBUSY) }
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw SystemError(operation: "inotify_init1", errno: errno) }
        // The agent's mask today (a file renamed away is not a change of it).
        let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE) | UInt32(IN_DELETE)
        guard inotify_add_watch(fd, path, mask) >= 0 else {
            let e = errno
            close(fd)
            throw SystemError(operation: "inotify_add_watch", errno: e)
        }
        do { try epoll.add(fd, token: Self.directoryToken) } catch {
            close(fd)
            throw error
        }
        inotify = fd
    }

    // MARK: - Turns

    /// How long the next wait may sleep: until the earliest timer (rounded up to a millisecond,
    /// at most `maximumWaitMilliseconds`), -1 (until input) with none armed, capped by `maxWait`.
    package func waitMilliseconds(maxWait: Int? = nil) -> Int32 {
        var timeout: Int32 = -1
        if let deadline = timers.nextDeadline {
            let ms = max(0, (deadline.microseconds - clock().microseconds + 999) / 1000)
            timeout = Int32(min(ms, Int64(Self.maximumWaitMilliseconds)))
        }
        if let cap = maxWait { timeout = timeout < 0 ? Int32(cap) : min(timeout, Int32(cap)) }
        return timeout
    }

    /// Waits for activity (at most until the earliest timer, or `maxWait` milliseconds) and
    /// hands each event to `handler`. `beforeTimers` runs between the ready descriptors and
    /// the due timers: an owner whose deadlines moved with this turn's input re-arms them
    /// there, so a deadline the input made due fires in the same turn.
    package func runOnce(maxWait: Int? = nil, beforeTimers: () -> Void = {}, _ handler: (Event) -> Void) {
        epoll.wait(timeoutMilliseconds: waitMilliseconds(maxWait: maxWait), into: &ready)
        let batch = ready
        for r in batch where isFirst(r) { deliver(r, handler) }
        for r in batch where !isFirst(r) { deliver(r, handler) }
        beforeTimers()
        for name in timers.takeDue(at: clock()) { handler(.timer(name)) }
    }

    /// Turns until `stop()` returns true (checked before each turn).
    package func run(until stop: () -> Bool, _ handler: (Event) -> Void) {
        while !stop() { runOnce(handler) }
    }

    private func isFirst(_ ready: Epoll.Ready) -> Bool {
        registrations[ready.token].map { inputFirst($0.registration) } ?? false
    }

    private func deliver(_ ready: Epoll.Ready, _ handler: (Event) -> Void) {
        switch ready.token {
        case Self.signalToken:
            for number in readSignals(signals) { handler(.signal(number)) }
        case Self.directoryToken:
            let names = readDirectoryChanges()
            if !names.isEmpty { handler(.directoryChanged(names)) }
        default:
            // Unwatched earlier in this turn: dropped.
            guard let entry = registrations[ready.token] else { return }
            handler(.ready(entry.registration, events: ready.events))
        }
    }

    /// The names in every pending inotify record, each once, in order.
    private func readDirectoryChanges() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var names: [String] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            var offset = 0
            // struct inotify_event: wd, mask, cookie, len (4 bytes each), then len bytes of name.
            while offset + 16 <= n {
                let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                let name = String(decoding: buffer[(offset + 16)..<min(n, offset + 16 + length)].prefix { $0 != 0 }, as: UTF8.self)
                if !name.isEmpty, !names.contains(name) { names.append(name) }
                offset += 16 + length
            }
        }
        return names
    }
}
