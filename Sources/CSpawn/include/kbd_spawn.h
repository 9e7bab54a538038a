#ifndef KBD_COMMANDD_SPAWN_H
#define KBD_COMMANDD_SPAWN_H
/* Starting a command's process without copying the service: clone(CLONE_VM | CLONE_VFORK)
 * on a stack the caller keeps for its spawns (what glibc's posix_spawn does, minus its mmap
 * and munmap of a fresh stack, its rlimit reads per file action and its reset of all 64
 * signal dispositions). The parent is suspended until the child called execve or exited. */
#include <signal.h>
#include <sys/types.h>

/* What the child does before execve, and where it reports a failure. */
struct kbd_spawn_request {
    /* The program: a path, or a name looked up in `search` (the service's PATH). */
    const char *file;
    char *const *argv;
    char *const *envp;
    const char *search;
    /* Descriptor for the child's stdout and stderr, or -1 for /dev/null (stdin is /dev/null). */
    int output;
    /* Signals the parent ignores: set back to the default in the child (handled ones are reset
     * by execve itself). */
    sigset_t ignored;
    /* Filled by the child when it could not execute `file` (errno), else 0. */
    volatile int error;
    /* The candidate paths of the PATH search are built here (the child must not allocate). */
    char *path;
    size_t path_size;
};

/* Starts the process: 0 and *pid, or an errno (the child, if one started, is already reaped).
 * The child has its own session, an empty signal mask, no descriptor above 2. `stack` is
 * at least 32 KiB, owned by the caller and reusable once this returned. */
int kbd_spawn(struct kbd_spawn_request *request, void *stack, size_t stack_size, pid_t *pid);

/* The signals whose disposition is SIG_IGN in this process. */
void kbd_ignored_signals(sigset_t *set);

#endif
