import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Owns one epoll instance. Registrations carry a caller-chosen token.
package final class Epoll {
    package let fd: Int32

    /// The corresponding C function is `epoll_create1`.
    package init() throws(SystemError) {
        fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw SystemError(operation: "epoll_create1", errno: errno) }
    }

    deinit { close(fd) }

    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_ADD)`.
    package func add(_ descriptor: Int32, token: UInt64, writable: Bool = false) throws(SystemError) {
        var ev = epoll_event()
        ev.events = EPOLLIN.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        ev.data.u64 = token
        guard epoll_ctl(fd, EPOLL_CTL_ADD, descriptor, &ev) == 0 else {
            throw SystemError(operation: "epoll_ctl(ADD)", errno: errno)
        }
    }

    /// Switches interest in writability (for clients with queued output).
    package func modify(_ descriptor: Int32, token: UInt64, writable: Bool) {
        var ev = epoll_event()
        ev.events = EPOLLIN.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        ev.data.u64 = token
        _ = epoll_ctl(fd, EPOLL_CTL_MOD, descriptor, &ev)
    }

    package func remove(_ descriptor: Int32) {
        _ = epoll_ctl(fd, EPOLL_CTL_DEL, descriptor, nil)
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever); returns the ready tokens.
    /// The corresponding C function is `epoll_wait`; EINTR returns no tokens.
    package func wait(timeoutMilliseconds: Int32, into tokens: inout [UInt64]) {
        tokens.removeAll(keepingCapacity: true)
        var events = [epoll_event](repeating: epoll_event(), count: 32)
        let n = events.withUnsafeMutableBufferPointer { epoll_wait(fd, $0.baseAddress, 32, timeoutMilliseconds) }
        guard n > 0 else { return }
        for i in 0..<Int(n) { tokens.append(events[i].data.u64) }
    }
}
