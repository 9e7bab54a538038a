/* stamp: the command every daemon runs in the latency-vs benchmark (tests-kernel/suite.py).
 *
 *   stamp FILE TAG     appends "TAG <CLOCK_MONOTONIC in ns>\n" to FILE and exits 0
 *
 * No C library: the clock is read by the first code that runs after execve (no dynamic
 * loader, no libc start-up), so the time it writes is when the program started. The line
 * is one write(2) with O_APPEND, so stamps of several processes never interleave.
 * Build on the host:
 *   cc -O2 -static -nostdlib -fno-stack-protector -o stamp tests-kernel/stamp.c
 */
#define SYS_write 1
#define SYS_open 2
#define SYS_exit 60
#define SYS_clock_gettime 228

struct timespec_k { long sec; long nsec; };

static long sys3(long n, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

__attribute__((used, noreturn)) void stamp_main(long *sp) {
    struct timespec_k t;
    sys3(SYS_clock_gettime, 1 /* CLOCK_MONOTONIC */, (long)&t, 0);
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    if (argc < 3) sys3(SYS_exit, 64, 0, 0);
    char line[160];
    int n = 0;
    for (const char *p = argv[2]; *p && n < 100; p++) line[n++] = *p;
    line[n++] = ' ';
    unsigned long ns = (unsigned long)t.sec * 1000000000UL + (unsigned long)t.nsec;
    char digits[24];
    int d = 0;
    do { digits[d++] = (char)('0' + ns % 10); ns /= 10; } while (ns);
    while (d) line[n++] = digits[--d];
    line[n++] = '\n';
    long fd = sys3(SYS_open, (long)argv[1], 02000 | 01 | 0100 /* O_APPEND|O_WRONLY|O_CREAT */, 0666);
    if (fd < 0) sys3(SYS_exit, 1, 0, 0);
    long w = sys3(SYS_write, fd, (long)line, n);
    sys3(SYS_exit, w == n ? 0 : 1, 0, 0);
    __builtin_unreachable();
}

__attribute__((naked, noreturn)) void _start(void) {
    __asm__("mov %rsp, %rdi\n\tand $-16, %rsp\n\tcall stamp_main\n\thlt");
}
