/* vdev: creates virtual input devices in the kbdvm guest for the presence tests and
 * drives them from a script, one command per line (stdin or the file given):
 *
 *   kbd NAME BUS             uinput keyboard (KEY_ESC..KEY_MICMUTE, EV_REP), bus in hex (11 = i8042)
 *   kbdid ALIAS BUS VENDOR PRODUCT NAME...
 *                            the same with an id (hex) and a name with spaces ("keyd virtual
 *                            keyboard"); later commands call it ALIAS
 *   key ALIAS CODE VALUE     an EV_KEY event (CODE decimal: 29 is KEY_LEFTCTRL) and SYN_REPORT
 *   grab NAME...             waits (30 s at most) for the event node of the device called NAME,
 *                            opens it and takes it with EVIOCGRAB, as a remapper does; prints
 *                            VDEV-GRABBED and the node; holds it while vdev runs
 *   reader FILE NAME...      an evtest-style reader of the device called NAME (waits 30 s at most
 *                            for its node): a child that opens the node without grabbing it and
 *                            appends "READ CODE VALUE" to FILE for each EV_KEY event it reads; it
 *                            dies with vdev. A node another program grabbed gives it nothing.
 *   switch NAME TABLET LID   uinput switch device (SW_LID, SW_TABLET_MODE) set to these values
 *   bt NAME                  uhid keyboard on BUS_BLUETOOTH (HID boot keyboard descriptor, hid-generic)
 *   sw NAME CODE VALUE       an EV_SW event and SYN_REPORT (CODE: lid or tablet)
 *   toggle NAME CODE FROM N  N changes of a switch now at FROM, back to back (overflows a stopped
 *                            reader); an odd N ends flipped
 *   destroy NAME             removes the device
 *   waitlog TEXT             waits (30 s at most) until the file in $VDEV_LOG holds TEXT past the
 *                            point found last time; exits 3 if it does not
 *   sleep MS
 *   sh COMMAND               runs COMMAND with dash (else /bin/sh)
 *   echo TEXT                prints TEXT (a marker for the host's key script)
 *   bench N GAP ROW...       the latency-vs benchmark's presses: N rounds; in each, for every ROW
 *                            (NAME:ALIAS:CODE:PIDFILE[+PIDFILE]) in turn: reads the CPU time of the
 *                            daemons in the pid files, stamps CLOCK_MONOTONIC, writes a press of
 *                            CODE to ALIAS, 20 ms later its release, GAP ms after the press reads
 *                            the CPU time again and prints "PRESS NAME I NS CPU_NS..." (press time,
 *                            CPU each daemon used in that window, from /proc/PID/task/ * /schedstat);
 *                            before and after all rounds "TOTAL PIDFILE TICKS" (utime+stime of
 *                            /proc/PID/stat, clock ticks)
 *   idle SECONDS PIDFILE...  for each process: RSS and PSS (smaps_rollup) and its context switches
 *                            (all threads) over SECONDS: "IDLE PIDFILE RSS_KB PSS_KB WAKEUPS THREADS"
 *
 * Devices live as long as vdev runs (it owns their descriptors). Build on the host:
 *   cc -O2 -Wall -o vdev tests-kernel/vdev.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uhid.h>
#include <linux/uinput.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct dev { char name[80]; int fd; int uhid; };
static struct dev devs[16];
static int ndevs;
static long log_cursor;

static void fail(const char *what) { perror(what); exit(2); }

static struct dev *find(const char *name) {
    for (int i = 0; i < ndevs; i++) if (devs[i].fd >= 0 && !strcmp(devs[i].name, name)) return &devs[i];
    fprintf(stderr, "vdev: no device %s\n", name);
    exit(2);
}

static void emit(int fd, int type, int code, int value) {
    struct input_event ev = {0};
    ev.type = type; ev.code = code; ev.value = value;
    if (write(fd, &ev, sizeof ev) != sizeof ev) fail("write");
}

static int uinput_create_id(const char *name, int bus, int vendor, int product, int keyboard) {
    int fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) fail("/dev/uinput");
    if (keyboard) {
        ioctl(fd, UI_SET_EVBIT, EV_KEY);
        ioctl(fd, UI_SET_EVBIT, EV_REP);
        ioctl(fd, UI_SET_EVBIT, EV_MSC);
        ioctl(fd, UI_SET_MSCBIT, MSC_SCAN);
        for (int k = KEY_ESC; k <= KEY_MICMUTE; k++) ioctl(fd, UI_SET_KEYBIT, k);
    } else {
        ioctl(fd, UI_SET_EVBIT, EV_SW);
        ioctl(fd, UI_SET_SWBIT, SW_LID);
        ioctl(fd, UI_SET_SWBIT, SW_TABLET_MODE);
    }
    struct uinput_setup setup = {0};
    snprintf(setup.name, sizeof setup.name, "%s", name);
    setup.id.bustype = bus;
    setup.id.vendor = vendor;
    setup.id.product = product;
    if (ioctl(fd, UI_DEV_SETUP, &setup) < 0) fail("UI_DEV_SETUP");
    if (ioctl(fd, UI_DEV_CREATE) < 0) fail("UI_DEV_CREATE");
    return fd;
}

static int uinput_create(const char *name, int bus, int keyboard) {
    return uinput_create_id(name, bus, 0x0001, keyboard ? 0x0001 : 0x0005, keyboard);
}

/* Opens the event node whose device is called NAME (grabbing it with GRAB); -1 if none came in 30 s. */
static int open_named(const char *name, char *node, size_t size, int grab) {
    for (int tries = 0; tries < 300; tries++) {
        for (int i = 0; i < 64; i++) {
            char path[128], buf[256] = "";
            snprintf(path, sizeof path, "/sys/class/input/event%d/device/name", i);
            FILE *f = fopen(path, "r");
            if (!f) continue;
            if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
            fclose(f);
            buf[strcspn(buf, "\n")] = 0;
            if (strcmp(buf, name)) continue;
            snprintf(node, size, "/dev/input/event%d", i);
            int fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0) continue;
            if (grab && ioctl(fd, EVIOCGRAB, 1) < 0) fail("EVIOCGRAB");
            return fd;
        }
        usleep(100000);
    }
    return -1;
}

static int grab(const char *name, char *node, size_t size) { return open_named(name, node, size, 1); }

/* `reader FILE NAME...`: a child reading the device's node as evtest does, until vdev exits. */
static void reader(const char *rest) {
    char file[128] = "", node[64];
    int used = 0;
    if (sscanf(rest, "%127s %n", file, &used) != 1 || !rest[used]) { fprintf(stderr, "vdev: bad reader line\n"); exit(2); }
    int fd = open_named(rest + used, node, sizeof node, 0);
    if (fd < 0) { printf("VDEV-TIMEOUT waiting for a device called: %s\n", rest + used); exit(3); }
    pid_t pid = fork();
    if (pid < 0) fail("fork");
    if (pid > 0) { close(fd); printf("VDEV-READING %s\n", node); return; }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    FILE *out = fopen(file, "a");
    if (!out) fail(file);
    setvbuf(out, NULL, _IOLBF, 0);
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    struct input_event ev;
    while (read(fd, &ev, sizeof ev) == (ssize_t)sizeof ev) {
        if (ev.type == EV_KEY) fprintf(out, "READ %d %d\n", ev.code, ev.value);
    }
    _exit(0);
}

/* The HID boot keyboard report descriptor (HID 1.11, appendix B.1). */
static const unsigned char boot_keyboard[] = {
    0x05, 0x01, 0x09, 0x06, 0xa1, 0x01, 0x05, 0x07, 0x19, 0xe0, 0x29, 0xe7, 0x15, 0x00, 0x25, 0x01,
    0x75, 0x01, 0x95, 0x08, 0x81, 0x02, 0x95, 0x01, 0x75, 0x08, 0x81, 0x01, 0x95, 0x05, 0x75, 0x01,
    0x05, 0x08, 0x19, 0x01, 0x29, 0x05, 0x91, 0x02, 0x95, 0x01, 0x75, 0x03, 0x91, 0x01, 0x95, 0x06,
    0x75, 0x08, 0x15, 0x00, 0x25, 0x65, 0x05, 0x07, 0x19, 0x00, 0x29, 0x65, 0x81, 0x00, 0xc0,
};

static int uhid_create(const char *name) {
    int fd = open("/dev/uhid", O_RDWR | O_CLOEXEC);
    if (fd < 0) fail("/dev/uhid");
    struct uhid_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = UHID_CREATE2;
    snprintf((char *)ev.u.create2.name, sizeof ev.u.create2.name, "%s", name);
    snprintf((char *)ev.u.create2.phys, sizeof ev.u.create2.phys, "vdev/bt0");
    memcpy(ev.u.create2.rd_data, boot_keyboard, sizeof boot_keyboard);
    ev.u.create2.rd_size = sizeof boot_keyboard;
    ev.u.create2.bus = BUS_BLUETOOTH;
    ev.u.create2.vendor = 0x046d;
    ev.u.create2.product = 0xb342;
    if (write(fd, &ev, sizeof ev) < 0) fail("UHID_CREATE2");
    return fd;
}

static int code_of(const char *s) {
    if (!strcmp(s, "lid")) return SW_LID;
    if (!strcmp(s, "tablet")) return SW_TABLET_MODE;
    return atoi(s);
}

static void add(const char *name, int fd, int uhid) {
    if (ndevs == 16) { fprintf(stderr, "vdev: too many devices\n"); exit(2); }
    snprintf(devs[ndevs].name, sizeof devs[ndevs].name, "%s", name);
    devs[ndevs].fd = fd;
    devs[ndevs].uhid = uhid;
    ndevs++;
}

static void waitlog(const char *text) {
    const char *path = getenv("VDEV_LOG");
    if (!path) { fprintf(stderr, "vdev: waitlog needs VDEV_LOG\n"); exit(2); }
    for (int i = 0; i < 3000; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            static char buf[1 << 20];
            fseek(f, log_cursor, SEEK_SET);
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = 0;
            char *hit = strstr(buf, text);
            if (hit) { log_cursor += (hit - buf) + strlen(text); return; }
        }
        usleep(10000);
    }
    printf("VDEV-TIMEOUT waiting for: %s\n", text);
    fflush(stdout);
    exit(3);
}


/* The pid in a pid file (waits 30 s at most for it). */
static int pid_of(const char *file) {
    for (int i = 0; i < 300; i++) {
        FILE *f = fopen(file, "r");
        int pid = 0;
        if (f) {
            if (fscanf(f, "%d", &pid) != 1) pid = 0;
            fclose(f);
        }
        if (pid > 0) return pid;
        usleep(100000);
    }
    fprintf(stderr, "vdev: no pid in %s\n", file);
    exit(2);
}

/* Nanoseconds on a CPU, all threads of the process (the first field of schedstat). */
static long long cpu_ns(int pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    long long sum = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char file[300];
        snprintf(file, sizeof file, "/proc/%d/task/%s/schedstat", pid, e->d_name);
        FILE *f = fopen(file, "r");
        long long ns = 0;
        if (f) {
            if (fscanf(f, "%lld", &ns) == 1) sum += ns;
            fclose(f);
        }
    }
    closedir(d);
    return sum;
}

/* utime + stime of /proc/PID/stat (clock ticks), -1 if unreadable. */
static long long stat_ticks(int pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return -1;
    long long utime = 0, stime = 0;
    /* after ") ": state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15) */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld", &utime, &stime) != 2) return -1;
    return utime + stime;
}

/* Voluntary plus involuntary context switches of every thread. */
static long long switches(int pid, int *threads) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    long long sum = 0;
    *threads = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char file[300], line[256];
        snprintf(file, sizeof file, "/proc/%d/task/%s/status", pid, e->d_name);
        FILE *f = fopen(file, "r");
        if (!f) continue;
        (*threads)++;
        while (fgets(line, sizeof line, f)) {
            long long v;
            if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 || sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1) sum += v;
        }
        fclose(f);
    }
    closedir(d);
    return sum;
}

static long long rollup(int pid, const char *key) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long long v = -1;
    size_t k = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, k) && line[k] == ':') { v = atoll(line + k + 1); break; }
    fclose(f);
    return v;
}

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sleep_until(long long ns) {
    struct timespec t = { ns / 1000000000LL, ns % 1000000000LL };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0) {}
}

struct row { char name[32]; struct dev *dev; int code; int pids[2]; int npids; };

static void bench(const char *args) {
    int rounds = 0, gap = 0, used = 0;
    if (sscanf(args, "%d %d %n", &rounds, &gap, &used) != 2) { fprintf(stderr, "vdev: bench N GAP ROW...\n"); exit(2); }
    struct row rows[8];
    int nrows = 0;
    char spec[256];
    const char *p = args + used;
    int all[16], nall = 0;
    char allfiles[16][96];
    while (nrows < 8 && sscanf(p, "%255s%n", spec, &used) == 1) {
        p += used;
        struct row *r = &rows[nrows++];
        char alias[64], files[160];
        if (sscanf(spec, "%31[^:]:%63[^:]:%d:%159s", r->name, alias, &r->code, files) != 4) { fprintf(stderr, "vdev: bad row %s\n", spec); exit(2); }
        r->dev = find(alias);
        r->npids = 0;
        for (char *f = strtok(files, "+"); f && r->npids < 2; f = strtok(NULL, "+")) {
            r->pids[r->npids++] = pid_of(f);
            int seen = 0;
            for (int i = 0; i < nall; i++) seen |= all[i] == r->pids[r->npids - 1];
            if (!seen && nall < 16) { all[nall] = r->pids[r->npids - 1]; snprintf(allfiles[nall++], 96, "%s", f); }
        }
    }
    for (int i = 0; i < nall; i++) printf("TOTAL %s %lld start\n", allfiles[i], stat_ticks(all[i]));
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < nrows; k++) {
            struct row *r = &rows[k];
            long long before[2];
            for (int j = 0; j < r->npids; j++) before[j] = cpu_ns(r->pids[j]);
            long long t = now_ns();
            emit(r->dev->fd, EV_KEY, r->code, 1);
            emit(r->dev->fd, EV_SYN, SYN_REPORT, 0);
            sleep_until(t + 20000000LL);
            emit(r->dev->fd, EV_KEY, r->code, 0);
            emit(r->dev->fd, EV_SYN, SYN_REPORT, 0);
            sleep_until(t + gap * 1000000LL);
            printf("PRESS %s %d %lld", r->name, i, t);
            for (int j = 0; j < r->npids; j++) printf(" %lld", cpu_ns(r->pids[j]) - before[j]);
            printf("\n");
        }
    }
    for (int i = 0; i < nall; i++) printf("TOTAL %s %lld end\n", allfiles[i], stat_ticks(all[i]));
}

static void idle(const char *args) {
    int seconds = 0, used = 0;
    if (sscanf(args, "%d %n", &seconds, &used) != 1) { fprintf(stderr, "vdev: idle SECONDS PIDFILE...\n"); exit(2); }
    char files[8][96];
    int pids[8], n = 0, threads = 0;
    long long before[8];
    const char *p = args + used;
    while (n < 8 && sscanf(p, "%95s%n", files[n], &used) == 1) {
        p += used;
        pids[n] = pid_of(files[n]);
        n++;
    }
    for (int i = 0; i < n; i++) before[i] = switches(pids[i], &threads);
    sleep(seconds);
    for (int i = 0; i < n; i++) {
        long long after = switches(pids[i], &threads);
        printf("IDLE %s %lld %lld %lld %d\n", files[i], rollup(pids[i], "Rss"), rollup(pids[i], "Pss"), after - before[i], threads);
    }
}

int main(int argc, char **argv) {
    FILE *in = argc > 1 ? fopen(argv[1], "r") : stdin;
    if (!in) fail(argv[1]);
    char line[4096];
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, in)) {
        line[strcspn(line, "\n")] = 0;
        char cmd[32] = "", a[128] = "", b[64] = "", c[64] = "";
        if (line[0] == '#' || sscanf(line, "%31s", cmd) != 1) continue;
        const char *rest = line + strlen(cmd);
        while (*rest == ' ') rest++;
        if (!strcmp(cmd, "kbd") && sscanf(rest, "%127s %63s", a, b) == 2) {
            add(a, uinput_create(a, (int)strtol(b, NULL, 16), 1), 0);
        } else if (!strcmp(cmd, "kbdid")) {
            char vendor[16] = "", product[16] = "";
            int used = 0;
            if (sscanf(rest, "%127s %63s %15s %15s %n", a, b, vendor, product, &used) != 4 || !rest[used]) {
                fprintf(stderr, "vdev: bad line: %s\n", line);
                return 2;
            }
            add(a, uinput_create_id(rest + used, (int)strtol(b, NULL, 16), (int)strtol(vendor, NULL, 16),
                                    (int)strtol(product, NULL, 16), 1), 0);
        } else if (!strcmp(cmd, "key") && sscanf(rest, "%127s %63s %63s", a, b, c) == 3) {
            struct dev *d = find(a);
            emit(d->fd, EV_KEY, atoi(b), atoi(c));
            emit(d->fd, EV_SYN, SYN_REPORT, 0);
        } else if (!strcmp(cmd, "grab")) {
            char node[64];
            int fd = grab(rest, node, sizeof node);
            if (fd < 0) {
                printf("VDEV-TIMEOUT waiting for a device called: %s\n", rest);
                return 3;
            }
            add(rest, fd, 0);
            printf("VDEV-GRABBED %s\n", node);
        } else if (!strcmp(cmd, "reader")) {
            reader(rest);
        } else if (!strcmp(cmd, "switch") && sscanf(rest, "%127s %63s %63s", a, b, c) == 3) {
            int fd = uinput_create(a, 0x19, 0);
            add(a, fd, 0);
            usleep(200000); /* let the node appear before the state is set */
            emit(fd, EV_SW, SW_TABLET_MODE, atoi(b));
            emit(fd, EV_SW, SW_LID, atoi(c));
            emit(fd, EV_SYN, SYN_REPORT, 0);
        } else if (!strcmp(cmd, "bt") && sscanf(rest, "%127s", a) == 1) {
            add(a, uhid_create(a), 1);
        } else if (!strcmp(cmd, "sw") && sscanf(rest, "%127s %63s %63s", a, b, c) == 3) {
            struct dev *d = find(a);
            emit(d->fd, EV_SW, code_of(b), atoi(c));
            emit(d->fd, EV_SYN, SYN_REPORT, 0);
        } else if (!strcmp(cmd, "toggle") && sscanf(rest, "%127s %63s %63s %63s", a, b, c, cmd) == 4) {
            /* Values alternate starting with the opposite of FROM: an odd COUNT ends flipped. */
            struct dev *d = find(a);
            int code = code_of(b), from = atoi(c), n = atoi(cmd);
            for (int i = 0; i < n; i++) {
                emit(d->fd, EV_SW, code, i % 2 == 0 ? !from : from);
                emit(d->fd, EV_SYN, SYN_REPORT, 0);
            }
        } else if (!strcmp(cmd, "destroy") && sscanf(rest, "%127s", a) == 1) {
            struct dev *d = find(a);
            if (d->uhid) {
                struct uhid_event ev;
                memset(&ev, 0, sizeof ev);
                ev.type = UHID_DESTROY;
                if (write(d->fd, &ev, sizeof ev) < 0) fail("UHID_DESTROY");
            } else {
                ioctl(d->fd, UI_DEV_DESTROY);
            }
            close(d->fd);
            d->fd = -1;
        } else if (!strcmp(cmd, "waitlog")) {
            waitlog(rest);
        } else if (!strcmp(cmd, "sleep")) {
            usleep(atoi(rest) * 1000);
        } else if (!strcmp(cmd, "sh")) {
            /* dash, not busybox's sh: busybox prefers its own applets (its setpriv lacks --reuid). */
            const char *shell = access("/usr/bin/dash", X_OK) == 0 ? "/usr/bin/dash" : "/bin/sh";
            pid_t pid = fork();
            if (pid == 0) { execl(shell, shell, "-c", rest, (char *)NULL); _exit(127); }
            int status = 0;
            waitpid(pid, &status, 0);
            if (status != 0) fprintf(stderr, "vdev: '%s' failed\n", rest);
        } else if (!strcmp(cmd, "bench")) {
            bench(rest);
        } else if (!strcmp(cmd, "idle")) {
            idle(rest);
        } else if (!strcmp(cmd, "echo")) {
            printf("%s\n", rest);
        } else {
            fprintf(stderr, "vdev: bad line: %s\n", line);
            return 2;
        }
    }
    return 0;
}
