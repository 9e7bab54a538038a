#ifndef KBD_COMMANDD_CLINUX_SHIM_H
#define KBD_COMMANDD_CLINUX_SHIM_H
/* Linux interfaces Swift's Glibc module does not export (epoll, signalfd,
 * eventfd, timerfd) and thin wrappers for GNU extensions (pipe2, accept4, SO_PEERCRED),
 * so no translation unit here needs _GNU_SOURCE. */
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>
#include <malloc.h>

/* Gives malloc's free pages back to the system (glibc trims only the heap's top by itself):
   after start-up, a reload, or a client's table left. */
static inline void kbd_malloc_trim(void) { (void)malloc_trim(0); }

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

#include <spawn.h>
/* glibc >= 2.34 (declared only under _GNU_SOURCE): close every descriptor from `from` up
   in the child, through close_range(2). */
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *, int);

/* A forked child keeps only what it needs: `keep` moves to descriptor 3 (unless it is
   below 3), and every descriptor above the kept ones is closed (close_range(2), Linux 5.9;
   one close(2) each on older kernels). Returns where `keep` is now. */
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
static inline int kbd_close_inherited(int keep) {
    int kept = keep;
    if (keep > 3) { if (dup2(keep, 3) < 0) return -1; kept = 3; }
    else if (keep < 3 && keep >= 0) { kept = keep; }
    int from = kept >= 3 ? kept + 1 : 3;
    if (syscall(SYS_close_range, (unsigned)from, ~0U, 0) != 0) {
        long max = sysconf(_SC_OPEN_MAX);
        for (int fd = from; fd < (max > 0 ? max : 1024); fd++) close(fd);
    }
    return kept;
}

/* Whether descriptor `fd` is open, asked of the kernel directly (no libc wrapper: safe in a
   child forked from a process whose other threads held locks, as under ThreadSanitizer). */
static inline int kbd_fd_is_open(int fd) { return syscall(SYS_fcntl, fd, F_GETFD) != -1; }

/* pidfd_open(2) (Linux 5.3): a descriptor that becomes readable when the process exits,
   so children are reaped by pid without a race and without SIGCHLD. */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
static inline int kbd_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

/* SO_PEERGROUPS (Linux 4.13): the peer's supplementary groups as they were at connect().
   Returns the count, or -1 (errno ERANGE with *needed set when `capacity` is too small). */
static inline int kbd_peer_groups(int fd, unsigned *groups, int capacity, int *needed) {
    socklen_t len = (socklen_t)(capacity * (int)sizeof(unsigned));
    int r = getsockopt(fd, SOL_SOCKET, 59 /* SO_PEERGROUPS */, groups, &len);
    if (needed) *needed = (int)(len / sizeof(unsigned));
    return r == 0 ? (int)(len / sizeof(unsigned)) : -1;
}

#include <sys/timerfd.h>
#include <sys/inotify.h>
/* A CLOCK_MONOTONIC timerfd, non-blocking and close-on-exec. */
static inline int kbd_timerfd_create(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }
/* Arms `fd` to fire once at the absolute CLOCK_MONOTONIC time `usec` (microseconds);
   `usec` <= 0 disarms it. */
static inline int kbd_timerfd_arm(int fd, long long usec) {
    struct itimerspec t = {{0, 0}, {0, 0}};
    if (usec > 0) { t.it_value.tv_sec = usec / 1000000; t.it_value.tv_nsec = (long)(usec % 1000000) * 1000; }
    return timerfd_settime(fd, usec > 0 ? TFD_TIMER_ABSTIME : 0, &t, (void *)0);
}

#include <sys/prctl.h>
/* Not dumpable: no core dumps (which would hold typed keys) and no ptrace by the same uid. */
static inline int kbd_disable_core_dumps(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
/* The signal a child gets when its parent dies (a helper process that must not outlive the agent). */
static inline int kbd_prctl_pdeathsig(int signal) { return prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0); }
#endif
