#define _GNU_SOURCE
#include "kbd_spawn.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* ThreadSanitizer cannot follow a child that runs in the parent's memory on a stack it does
 * not know (its runtime aborts: "CHECK failed: tsan_rtl.cpp ... thr->slot"). Built with it
 * (`swift test --sanitize=thread`), the child is a fork() that reports a failed execve through
 * a close-on-exec pipe; every other build uses clone(CLONE_VM | CLONE_VFORK). */
#if defined(__SANITIZE_THREAD__)
#define KBD_SPAWN_FORK 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KBD_SPAWN_FORK 1
#endif
#endif
#ifdef KBD_SPAWN_FORK
/* The write end of the error pipe, in the forked child only. */
static int error_pipe = -1;
#endif

/* rt_sigaction as the kernel has it: glibc's sigaction refuses its own signals (32, 33), which
 * a parent may still have ignored. */
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};

/* glibc's sigaddset and sigismember refuse 32 and 33 too: the bits by hand. */
#define WORD_BITS (8 * sizeof(unsigned long))
static void add_signal(sigset_t *set, int s) { set->__val[(s - 1) / WORD_BITS] |= 1UL << ((s - 1) % WORD_BITS); }
static int has_signal(const sigset_t *set, int s) { return (set->__val[(s - 1) / WORD_BITS] >> ((s - 1) % WORD_BITS)) & 1; }

static int raw_sigaction(int sig, const struct kernel_sigaction *act, struct kernel_sigaction *old) {
    return (int)syscall(SYS_rt_sigaction, sig, act, old, sizeof(unsigned long));
}

/* Runs in the child, on the caller's stack and in its memory: only system calls, no malloc,
 * nothing that takes a lock the parent could hold. */
static int child(void *arg) {
    struct kbd_spawn_request *r = arg;
    struct kernel_sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.handler = SIG_DFL;
    for (int s = 1; s <= 64; s++)
        if (has_signal(&r->ignored, s)) raw_sigaction(s, &dfl, NULL);
    setsid();
    int null = open("/dev/null", O_RDWR);
    if (null < 0) goto fail;
    if (dup2(null, 0) < 0) goto fail;
    int out = r->output >= 0 ? r->output : null;
    if (dup2(out, 1) < 0 || dup2(out, 2) < 0) goto fail;
#ifdef KBD_SPAWN_FORK
    /* All but the error pipe (close-on-exec: execve closes it). Sanitizer builds run on
     * kernels with close_range (5.9). */
    if (error_pipe > 3) syscall(SYS_close_range, 3U, (unsigned)error_pipe - 1, 0);
    syscall(SYS_close_range, (unsigned)error_pipe + 1, ~0U, 0);
#else
    if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
        for (int fd = 3; fd < 1024; fd++) close(fd);
#endif
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (r->search == NULL || strchr(r->file, '/') != NULL) {
        execve(r->file, r->argv, r->envp);
        goto fail;
    }
    /* As execvp: each directory of the search path in turn; a found file that cannot be
     * executed is the error reported when nothing else worked. */
    size_t flen = strlen(r->file);
    int seen_eacces = 0;
    for (const char *p = r->search;; ) {
        const char *end = strchr(p, ':');
        size_t dlen = end ? (size_t)(end - p) : strlen(p);
        if (dlen + 1 + flen + 1 <= r->path_size) {
            if (dlen == 0) {
                memcpy(r->path, r->file, flen + 1);
            } else {
                memcpy(r->path, p, dlen);
                r->path[dlen] = '/';
                memcpy(r->path + dlen + 1, r->file, flen + 1);
            }
            execve(r->path, r->argv, r->envp);
            if (errno == EACCES) seen_eacces = 1;
            else if (errno != ENOENT && errno != ENOTDIR) goto fail;
        }
        if (!end) break;
        p = end + 1;
    }
    errno = seen_eacces ? EACCES : ENOENT;
fail:
    r->error = errno ? errno : ENOEXEC;
#ifdef KBD_SPAWN_FORK
    if (error_pipe >= 0) {
        int e = r->error;
        (void)!write(error_pipe, &e, sizeof e);
    }
#endif
    _exit(127);
}

int kbd_spawn(struct kbd_spawn_request *r, void *stack, size_t stack_size, pid_t *pid) {
    /* No handler of the parent may run in the child (it shares the memory until execve). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    r->error = 0;
#ifdef KBD_SPAWN_FORK
    (void)stack;
    (void)stack_size;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        int e = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return e;
    }
    pid_t p = fork();
    if (p == 0) {
        close(fds[0]);
        error_pipe = fds[1];
        child(r);
    }
    int e = p < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(fds[1]);
    if (p > 0) {
        int reported = 0;
        ssize_t n;
        while ((n = read(fds[0], &reported, sizeof reported)) < 0 && errno == EINTR) {}
        if (n == (ssize_t)sizeof reported) r->error = reported;
    }
    close(fds[0]);
#else
    char *top = (char *)stack + stack_size;
    top = (char *)((unsigned long)top & ~15UL);
    pid_t p = clone(child, top, CLONE_VM | CLONE_VFORK | SIGCHLD, r);
    int e = p < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
#endif
    if (p < 0) return e;
    if (r->error != 0) {
        int status;
        while (waitpid(p, &status, 0) < 0 && errno == EINTR) {}
        return r->error;
    }
    *pid = p;
    return 0;
}

void kbd_ignored_signals(sigset_t *set) {
    sigemptyset(set);
    for (int s = 1; s <= 64; s++) {
        struct kernel_sigaction sa;
        if (raw_sigaction(s, NULL, &sa) == 0 && !(sa.flags & SA_SIGINFO) && sa.handler == SIG_IGN) add_signal(set, s);
    }
}
