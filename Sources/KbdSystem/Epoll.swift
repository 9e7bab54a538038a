import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Owns one epoll instance. Registrations carry a caller-chosen token.
package final class Epoll {
    /// A ready registration: its token and what it is ready for (`EPOLLIN`, `EPOLLOUT`,
    /// `EPOLLHUP`, `EPOLLERR` bits).
    package struct Ready: Sendable {
        package var token: UInt64
        package var events: UInt32
    }

    package static let readable = EPOLLIN.rawValue
    package static let writable = EPOLLOUT.rawValue
    package static let hangup = EPOLLHUP.rawValue | EPOLLERR.rawValue

    package let fd: Int32
    private var buffer = [epoll_event](repeating: epoll_event(), count: 64)

    /// The corresponding C function is `epoll_create1`.
    package init() throws(SystemError) {
        fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw SystemError(operation: "epoll_create1", errno: errno) }
    }

    deinit { close(fd) }

    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_ADD)`.
    package func add(_ descriptor: Int32, token: UInt64, events: UInt32 = EPOLLIN.rawValue) throws(SystemError) {
        var ev = epoll_event()
        ev.events = events
        ev.data.u64 = token
        guard epoll_ctl(fd, EPOLL_CTL_ADD, descriptor, &ev) == 0 else {
            throw SystemError(operation: "epoll_ctl(ADD)", errno: errno)
        }
    }

    /// Changes what a registration waits for (0: nothing, a paused descriptor).
    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_MOD)`.
    package func modify(_ descriptor: Int32, token: UInt64, events: UInt32) {
        var ev = epoll_event()
        ev.events = events
        ev.data.u64 = token
        _ = epoll_ctl(fd, EPOLL_CTL_MOD, descriptor, &ev)
    }

    package func remove(_ descriptor: Int32) {
        _ = epoll_ctl(fd, EPOLL_CTL_DEL, descriptor, nil)
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever); returns the ready registrations.
    /// The corresponding C function is `epoll_wait`; EINTR returns none.
    package func wait(timeoutMilliseconds: Int32, into ready: inout [Ready]) {
        ready.removeAll(keepingCapacity: true)
        let n = buffer.withUnsafeMutableBufferPointer { epoll_wait(fd, $0.baseAddress, Int32($0.count), timeoutMilliseconds) }
        guard n > 0 else { return }
        for i in 0..<Int(n) { ready.append(Ready(token: buffer[i].data.u64, events: buffer[i].events)) }
    }
}
