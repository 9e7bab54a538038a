#ifndef KBD_COMMANDD_CLINUX_SHIM_H
#define KBD_COMMANDD_CLINUX_SHIM_H
/* Linux interfaces Swift's Glibc module does not export (epoll, signalfd,
 * eventfd) and thin wrappers for GNU extensions (pipe2, accept4, SO_PEERCRED),
 * so no translation unit here needs _GNU_SOURCE. */
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>

/* glibc's POSIX_SPAWN_SETSID (a GNU extension). */
#define KBD_POSIX_SPAWN_SETSID 0x80

static inline int kbd_pipe2(int fds[2], int flags) { return (int)syscall(SYS_pipe2, fds, flags); }
static inline int kbd_accept4(int fd, int flags) { return (int)syscall(SYS_accept4, fd, (void *)0, (void *)0, flags); }

struct kbd_peer { int pid; unsigned uid; unsigned gid; };
/* SO_PEERCRED: the connecting process's credentials (struct ucred layout). */
static inline int kbd_peer_credentials(int fd, struct kbd_peer *out) {
    struct { int pid; unsigned uid; unsigned gid; } c;
    socklen_t len = sizeof c;
    int r = getsockopt(fd, SOL_SOCKET, 17 /* SO_PEERCRED */, &c, &len);
    if (r == 0) { out->pid = c.pid; out->uid = c.uid; out->gid = c.gid; }
    return r;
}

#include <sys/prctl.h>
/* Not dumpable: no core dumps (which would hold typed keys) and no ptrace by the same uid. */
static inline int kbd_disable_core_dumps(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
#endif
