#ifndef KBD_COMMANDD_CSYSTEMD_SHIM_H
#define KBD_COMMANDD_CSYSTEMD_SHIM_H
/* sd-bus from libsystemd: the session-bus client of the agent's on-screen-keyboard
 * backends. libsystemd (and what it links: gcrypt, lz4, zstd, …) is loaded with dlopen
 * in the child process the agent makes its bus calls in (DesktopProcess), so the agent
 * itself never maps it. The variadic calls are wrapped here with the D-Bus signatures
 * fixed, so Swift never calls a C variadic function. Only the headers come from
 * libsystemd-dev. */
#include <systemd/sd-bus.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <poll.h>
#include <time.h>

/* One dlopen idiom (systemd's DLSYM_PROTOTYPE): a loaded symbol's field has the type of the
 * real header's declaration, and the load converts dlsym's pointer to exactly that type, so
 * the compiler checks every symbol against libsystemd's headers (no hand-written cast). */
#define KBD_SYMBOL_TYPE(symbol) __typeof__(&symbol)
#define KBD_DLSYM(lib, field, symbol) ((field) = (KBD_SYMBOL_TYPE(symbol))dlsym((lib), #symbol))

struct kbd_sd_bus {
    KBD_SYMBOL_TYPE(sd_bus_open_user) open_user;
    KBD_SYMBOL_TYPE(sd_bus_set_method_call_timeout) set_method_call_timeout;
    KBD_SYMBOL_TYPE(sd_bus_flush_close_unref) flush_close_unref;
    KBD_SYMBOL_TYPE(sd_bus_error_free) error_free;
    KBD_SYMBOL_TYPE(sd_bus_call_method) call_method;
    KBD_SYMBOL_TYPE(sd_bus_get_property_trivial) get_property_trivial;
    KBD_SYMBOL_TYPE(sd_bus_set_property) set_property;
    KBD_SYMBOL_TYPE(sd_bus_message_read) message_read;
    KBD_SYMBOL_TYPE(sd_bus_message_unref) message_unref;
    /* A connection to a bus by address (the accessibility bus) and its signals. */
    KBD_SYMBOL_TYPE(sd_bus_new) bus_new;
    KBD_SYMBOL_TYPE(sd_bus_set_address) set_address;
    KBD_SYMBOL_TYPE(sd_bus_set_bus_client) set_bus_client;
    KBD_SYMBOL_TYPE(sd_bus_start) start;
    KBD_SYMBOL_TYPE(sd_bus_add_match) add_match;
    KBD_SYMBOL_TYPE(sd_bus_process) process;
    KBD_SYMBOL_TYPE(sd_bus_wait) wait;
    KBD_SYMBOL_TYPE(sd_bus_message_is_signal) message_is_signal;
    KBD_SYMBOL_TYPE(sd_bus_message_get_sender) message_get_sender;
    KBD_SYMBOL_TYPE(sd_bus_message_get_path) message_get_path;
    KBD_SYMBOL_TYPE(sd_bus_message_get_interface) message_get_interface;
    KBD_SYMBOL_TYPE(sd_bus_message_get_member) message_get_member;
    KBD_SYMBOL_TYPE(sd_bus_message_get_signature) message_get_signature;
    KBD_SYMBOL_TYPE(sd_bus_message_read_array) message_read_array;
    KBD_SYMBOL_TYPE(sd_bus_message_enter_container) message_enter_container;
    /* Questions asked without waiting (the text-input watch), and its own poll. */
    KBD_SYMBOL_TYPE(sd_bus_call_method_async) call_method_async;
    KBD_SYMBOL_TYPE(sd_bus_message_is_method_error) message_is_method_error;
    KBD_SYMBOL_TYPE(sd_bus_get_fd) get_fd;
    KBD_SYMBOL_TYPE(sd_bus_get_events) get_events;
    KBD_SYMBOL_TYPE(sd_bus_get_timeout) get_timeout;
    /* Method calls to the watch (KWin's script) and their replies. */
    KBD_SYMBOL_TYPE(sd_bus_get_unique_name) get_unique_name;
    KBD_SYMBOL_TYPE(sd_bus_message_is_method_call) message_is_method_call;
    KBD_SYMBOL_TYPE(sd_bus_reply_method_return) reply_method_return;
};

/* Loads libsystemd once; 0 on success, -ENOENT when it is not installed. */
static inline int kbd_sd_bus_load(struct kbd_sd_bus *f) {
    if (f->open_user) return 0;
    void *lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return -ENOENT;
    KBD_DLSYM(lib, f->open_user, sd_bus_open_user);
    KBD_DLSYM(lib, f->set_method_call_timeout, sd_bus_set_method_call_timeout);
    KBD_DLSYM(lib, f->flush_close_unref, sd_bus_flush_close_unref);
    KBD_DLSYM(lib, f->error_free, sd_bus_error_free);
    KBD_DLSYM(lib, f->call_method, sd_bus_call_method);
    KBD_DLSYM(lib, f->get_property_trivial, sd_bus_get_property_trivial);
    KBD_DLSYM(lib, f->set_property, sd_bus_set_property);
    KBD_DLSYM(lib, f->message_read, sd_bus_message_read);
    KBD_DLSYM(lib, f->message_unref, sd_bus_message_unref);
    KBD_DLSYM(lib, f->bus_new, sd_bus_new);
    KBD_DLSYM(lib, f->set_address, sd_bus_set_address);
    KBD_DLSYM(lib, f->set_bus_client, sd_bus_set_bus_client);
    KBD_DLSYM(lib, f->start, sd_bus_start);
    KBD_DLSYM(lib, f->add_match, sd_bus_add_match);
    KBD_DLSYM(lib, f->process, sd_bus_process);
    KBD_DLSYM(lib, f->wait, sd_bus_wait);
    KBD_DLSYM(lib, f->message_is_signal, sd_bus_message_is_signal);
    KBD_DLSYM(lib, f->message_get_sender, sd_bus_message_get_sender);
    KBD_DLSYM(lib, f->message_get_path, sd_bus_message_get_path);
    KBD_DLSYM(lib, f->message_get_interface, sd_bus_message_get_interface);
    KBD_DLSYM(lib, f->message_get_member, sd_bus_message_get_member);
    KBD_DLSYM(lib, f->message_get_signature, sd_bus_message_get_signature);
    KBD_DLSYM(lib, f->message_read_array, sd_bus_message_read_array);
    KBD_DLSYM(lib, f->message_enter_container, sd_bus_message_enter_container);
    KBD_DLSYM(lib, f->call_method_async, sd_bus_call_method_async);
    KBD_DLSYM(lib, f->message_is_method_error, sd_bus_message_is_method_error);
    KBD_DLSYM(lib, f->get_fd, sd_bus_get_fd);
    KBD_DLSYM(lib, f->get_events, sd_bus_get_events);
    KBD_DLSYM(lib, f->get_timeout, sd_bus_get_timeout);
    KBD_DLSYM(lib, f->get_unique_name, sd_bus_get_unique_name);
    KBD_DLSYM(lib, f->message_is_method_call, sd_bus_message_is_method_call);
    KBD_DLSYM(lib, f->reply_method_return, sd_bus_reply_method_return);
    if (!f->call_method_async || !f->message_is_method_error || !f->get_fd || !f->get_events || !f->get_timeout ||
        !f->get_unique_name || !f->message_is_method_call || !f->reply_method_return) {
        f->open_user = 0;
        return -ENOSYS;
    }
    if (!f->message_enter_container || !f->bus_new || !f->set_address || !f->set_bus_client || !f->start || !f->add_match || !f->process || !f->wait ||
        !f->message_is_signal || !f->message_get_sender || !f->message_get_path || !f->message_read_array ||
        !f->message_get_interface || !f->message_get_member || !f->message_get_signature) {
        f->open_user = 0;
        return -ENOSYS;
    }
    if (!f->open_user || !f->set_method_call_timeout || !f->flush_close_unref || !f->error_free || !f->call_method ||
        !f->get_property_trivial || !f->set_property || !f->message_read || !f->message_unref) {
        f->open_user = 0;
        return -ENOSYS;
    }
    return 0;
}

/* A method with one boolean argument and no reply value. */
static inline int kbd_bus_call_bool(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                    const char *member, int value, sd_bus_error *error) {
    return f->call_method(bus, dest, path, iface, member, error, NULL, "b", value);
}

/* Reads a boolean property. */
static inline int kbd_bus_get_bool(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                   const char *member, int *value, sd_bus_error *error) {
    return f->get_property_trivial(bus, dest, path, iface, member, error, 'b', value);
}

/* Writes a boolean property. */
static inline int kbd_bus_set_bool(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                   const char *member, int value, sd_bus_error *error) {
    return f->set_property(bus, dest, path, iface, member, error, "b", value);
}

/* Whether a well-known name has an owner on the bus. */
static inline int kbd_bus_name_has_owner(const struct kbd_sd_bus *f, sd_bus *bus, const char *name, int *has, sd_bus_error *error) {
    sd_bus_message *reply = NULL;
    int r = f->call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                           error, &reply, "s", name);
    if (r < 0) return r;
    r = f->message_read(reply, "b", has);
    f->message_unref(reply);
    return r;
}

/* A method without arguments whose reply is one string, copied into out (truncated to size). */
static inline int kbd_bus_call_string(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                      const char *member, char *out, size_t size, sd_bus_error *error) {
    sd_bus_message *reply = NULL;
    const char *value = NULL;
    int r = f->call_method(bus, dest, path, iface, member, error, &reply, "");
    if (r < 0) return r;
    r = f->message_read(reply, "s", &value);
    if (r >= 0 && size > 0) {
        size_t n = strlen(value);
        if (n >= size) n = size - 1;
        memcpy(out, value, n);
        out[n] = 0;
    }
    f->message_unref(reply);
    return r;
}

/* A method with one string argument and no reply value. */
static inline int kbd_bus_call_string_arg(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                          const char *member, const char *value, sd_bus_error *error) {
    return f->call_method(bus, dest, path, iface, member, error, NULL, "s", value);
}

/* A method without arguments whose reply is one uint32. */
static inline int kbd_bus_call_uint32(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                      const char *member, uint32_t *out, sd_bus_error *error) {
    sd_bus_message *reply = NULL;
    int r = f->call_method(bus, dest, path, iface, member, error, &reply, "");
    if (r < 0) return r;
    r = f->message_read(reply, "u", out);
    f->message_unref(reply);
    return r;
}

/* A method without arguments and without a reply value. */
static inline int kbd_bus_call_noarg(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                     const char *member, sd_bus_error *error) {
    return f->call_method(bus, dest, path, iface, member, error, NULL, "");
}

/* A method with one string argument whose reply is one uint32 (GetConnectionUnixProcessID). */
static inline int kbd_bus_call_string_arg_uint32(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                                 const char *member, const char *value, uint32_t *out, sd_bus_error *error) {
    sd_bus_message *reply = NULL;
    int r = f->call_method(bus, dest, path, iface, member, error, &reply, "s", value);
    if (r < 0) return r;
    r = f->message_read(reply, "u", out);
    f->message_unref(reply);
    return r;
}

/* A method without arguments whose reply is an array of uint32 (AT-SPI's state set):
 * up to max words into out, their count in *count. */
static inline int kbd_bus_call_uint32_array(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                            const char *member, uint32_t *out, size_t max, size_t *count, sd_bus_error *error) {
    sd_bus_message *reply = NULL;
    const void *words = NULL;
    size_t bytes = 0;
    int r = f->call_method(bus, dest, path, iface, member, error, &reply, "");
    if (r < 0) return r;
    r = f->message_read_array(reply, 'u', &words, &bytes);
    if (r >= 0) {
        size_t n = bytes / sizeof(uint32_t);
        if (n > max) n = max;
        if (n) memcpy(out, words, n * sizeof(uint32_t));
        *count = n;
    }
    f->message_unref(reply);
    return r;
}

/* Connects to the message bus at address (as a client that says Hello). */
static inline int kbd_bus_open_address(const struct kbd_sd_bus *f, const char *address, sd_bus **out) {
    sd_bus *bus = NULL;
    int r = f->bus_new(&bus);
    if (r < 0) return r;
    if ((r = f->set_address(bus, address)) < 0 || (r = f->set_bus_client(bus, 1)) < 0 || (r = f->start(bus)) < 0) {
        f->flush_close_unref(bus);
        return r;
    }
    *out = bus;
    return 0;
}

/* Asks the bus for the signals that match rule; they come out of kbd_bus_next_message. */
static inline int kbd_bus_add_match(const struct kbd_sd_bus *f, sd_bus *bus, const char *rule) {
    return f->add_match(bus, NULL, rule, NULL, NULL);
}

/* The next incoming message not consumed by sd-bus itself, waiting as long as it takes
 * (no timeout: nothing wakes up while nothing arrives). 1 with *out (the caller unrefs
 * it), or a negative errno when the connection ended. */
static inline int kbd_bus_next_message(const struct kbd_sd_bus *f, sd_bus *bus, sd_bus_message **out) {
    for (;;) {
        sd_bus_message *m = NULL;
        int r = f->process(bus, &m);
        if (r < 0) return r;
        if (m) { *out = m; return 1; }
        if (r > 0) continue;
        r = f->wait(bus, UINT64_MAX);
        if (r < 0 && r != -EINTR) return r;
    }
}

/* Questions asked without waiting (sd_bus_call_method_async, with the bus's method call
 * timeout): each answer, or an error (a D-Bus error, or sd-bus's own when the timeout passed),
 * lands in a queue the caller drains after every sd_bus_process (one message is dispatched per
 * call, so the queue never holds more than a few). */
struct kbd_bus_answer {
    uint64_t tag;
    int32_t missing;        /* 1: an error or no answer in time */
    uint32_t value;         /* kind 'u' */
    uint32_t words[8];      /* kind 'a' (au): up to 8 words */
    uint32_t count;
};
#define KBD_BUS_ANSWERS 32
struct kbd_bus_answers {
    uint32_t count;
    struct kbd_bus_answer items[KBD_BUS_ANSWERS];
};
struct kbd_bus_question {
    /* What the callback reads the reply with (copied: the caller's table may move). */
    int (*is_method_error)(sd_bus_message *, const char *);
    int (*read)(sd_bus_message *, const char *, ...);
    int (*read_array)(sd_bus_message *, char, const void **, size_t *);
    struct kbd_bus_answers *answers;
    uint64_t tag;
    char kind;
};

static int kbd_bus_answered(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    struct kbd_bus_question *q = (struct kbd_bus_question *)userdata;
    struct kbd_bus_answers *a = q->answers;
    if (a->count < KBD_BUS_ANSWERS) {
        struct kbd_bus_answer *out = &a->items[a->count++];
        memset(out, 0, sizeof *out);
        out->tag = q->tag;
        if (q->is_method_error(m, NULL) > 0) {
            out->missing = 1;
        } else if (q->kind == 'u') {
            if (q->read(m, "u", &out->value) < 0) out->missing = 1;
        } else {
            const void *words = NULL;
            size_t bytes = 0;
            if (q->read_array(m, 'u', &words, &bytes) < 0) {
                out->missing = 1;
            } else {
                size_t n = bytes / sizeof(uint32_t);
                if (n > 8) n = 8;
                if (n) memcpy(out->words, words, n * sizeof(uint32_t));
                out->count = (uint32_t)n;
            }
        }
    }
    free(q);
    return 1;
}

/* Asks dest's method (no argument, or one string when arg is not NULL) without waiting; its
 * reply is read as kind 'u' (uint32) or 'a' (au). */
static inline int kbd_bus_ask(const struct kbd_sd_bus *f, sd_bus *bus, struct kbd_bus_answers *answers, uint64_t tag, char kind,
                              const char *dest, const char *path, const char *iface, const char *member, const char *arg) {
    struct kbd_bus_question *q = (struct kbd_bus_question *)malloc(sizeof *q);
    if (!q) return -ENOMEM;
    q->is_method_error = f->message_is_method_error; q->read = f->message_read; q->read_array = f->message_read_array;
    q->answers = answers; q->tag = tag; q->kind = kind;
    int r = arg ? f->call_method_async(bus, NULL, dest, path, iface, member, kbd_bus_answered, q, "s", arg)
                : f->call_method_async(bus, NULL, dest, path, iface, member, kbd_bus_answered, q, "");
    if (r < 0) free(q);
    return r;
}

/* One step of the connection: 1 when something was processed (a message not consumed by
 * sd-bus in *out, which the caller unrefs, or an answer in the queue), 0 when nothing is left,
 * a negative errno when the connection ended. */
static inline int kbd_bus_step(const struct kbd_sd_bus *f, sd_bus *bus, sd_bus_message **out) {
    return f->process(bus, out);
}

/* Waits until the connection has something to process, its next timeout (an unanswered
 * question) passes, or one of others[0..<count] (at most 2; -1 is skipped) is readable; no
 * timeout when nothing is asked. Bit i of *ready says whether others[i] is readable.
 * 0, or a negative errno. */
static inline int kbd_bus_wait_with(const struct kbd_sd_bus *f, sd_bus *bus, const int *others, int count, int *ready) {
    struct pollfd p[3];
    int fd = f->get_fd(bus);
    int events = f->get_events(bus);
    if (fd < 0) return fd;
    if (events < 0) return events;
    uint64_t until = UINT64_MAX;
    int timeout = -1;
    if (f->get_timeout(bus, &until) >= 0 && until != UINT64_MAX) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t now = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
        timeout = until <= now ? 0 : (int)((until - now + 999) / 1000);
    }
    if (count > 2) count = 2;
    p[0].fd = fd; p[0].events = (short)events; p[0].revents = 0;
    for (int i = 0; i < count; i++) { p[1 + i].fd = others[i]; p[1 + i].events = POLLIN; p[1 + i].revents = 0; }
    *ready = 0;
    int r = poll(p, (nfds_t)(1 + count), timeout);
    if (r < 0) return errno == EINTR ? 0 : -errno;
    for (int i = 0; i < count; i++) if (others[i] >= 0 && p[1 + i].revents != 0) *ready |= 1 << i;
    return 0;
}

/* This connection's unique name (":1.42"), copied into out. */
static inline int kbd_bus_unique_name(const struct kbd_sd_bus *f, sd_bus *bus, char *out, size_t size) {
    const char *name = NULL;
    int r = f->get_unique_name(bus, &name);
    if (r < 0) return r;
    size_t n = strlen(name);
    if (n >= size) return -ENAMETOOLONG;
    memcpy(out, name, n + 1);
    return 0;
}

/* A method call to this connection: its header, and its argument when it is one int32
 * (KWin's script: the active window's pid). 1 when m is a method call (it is answered with an
 * empty return), 0 when not. */
struct kbd_bus_call_fields {
    const char *sender, *path, *interface, *member;
    int32_t value;
    int32_t has_value;
};
static inline int kbd_bus_read_call(const struct kbd_sd_bus *f, sd_bus_message *m, struct kbd_bus_call_fields *out) {
    if (f->message_is_method_call(m, NULL, NULL) <= 0) return 0;
    out->sender = f->message_get_sender(m);
    out->path = f->message_get_path(m);
    out->interface = f->message_get_interface(m);
    out->member = f->message_get_member(m);
    const char *sig = f->message_get_signature(m, 1);
    out->has_value = sig && strcmp(sig, "i") == 0 && f->message_read(m, "i", &out->value) > 0;
    f->reply_method_return(m, "");
    return 1;
}

/* A method with one string argument whose reply is one string (GetNameOwner), copied into out. */
static inline int kbd_bus_call_string_arg_string(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                                 const char *member, const char *value, char *out, size_t size, sd_bus_error *error) {
    sd_bus_message *reply = NULL;
    const char *answer = NULL;
    int r = f->call_method(bus, dest, path, iface, member, error, &reply, "s", value);
    if (r < 0) return r;
    r = f->message_read(reply, "s", &answer);
    if (r >= 0 && size > 0) {
        size_t n = strlen(answer);
        if (n >= size) n = size - 1;
        memcpy(out, answer, n);
        out[n] = 0;
    }
    f->message_unref(reply);
    return r;
}

/* A method with two string arguments whose reply is one int32 (KWin's loadScript). */
static inline int kbd_bus_call_strings_int32(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                             const char *member, const char *a, const char *b, int32_t *out, sd_bus_error *error) {
    sd_bus_message *reply = NULL;
    int r = f->call_method(bus, dest, path, iface, member, error, &reply, "ss", a, b);
    if (r < 0) return r;
    r = f->message_read(reply, "i", out);
    f->message_unref(reply);
    return r;
}

/* Reads a reply of AT-SPI object references, a(so), into out as "name path\n" lines
 * (as many as fit in size, NUL-terminated); unrefs the reply. */
static inline int kbd_bus_read_objects(const struct kbd_sd_bus *f, sd_bus_message *reply, char *out, size_t size) {
    size_t used = 0;
    if (size) out[0] = 0;
    int r = f->message_enter_container(reply, 'a', "(so)");
    while (r > 0) {
        const char *name = NULL, *path = NULL;
        r = f->message_read(reply, "(so)", &name, &path);
        if (r <= 0) break;
        size_t need = strlen(name) + strlen(path) + 2;
        if (used + need + 1 > size) break;
        memcpy(out + used, name, strlen(name)); used += strlen(name);
        out[used++] = ' ';
        memcpy(out + used, path, strlen(path)); used += strlen(path);
        out[used++] = '\n';
        out[used] = 0;
    }
    f->message_unref(reply);
    return r < 0 ? r : 0;
}

/* A method without arguments that answers a(so) (AT-SPI's GetChildren). */
static inline int kbd_bus_call_objects(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                       const char *member, char *out, size_t size, sd_bus_error *error) {
    sd_bus_message *reply = NULL;
    int r = f->call_method(bus, dest, path, iface, member, error, &reply, "");
    if (r < 0) return r;
    return kbd_bus_read_objects(f, reply, out, size);
}

/* A method without arguments that answers a(sss) (KDE's getLayoutsList: short name,
 * display name, long name), into out as "a\tb\tc\n" lines (as many as fit). */
static inline int kbd_bus_call_string_triples(const struct kbd_sd_bus *f, sd_bus *bus, const char *dest, const char *path, const char *iface,
                                              const char *member, char *out, size_t size, sd_bus_error *error) {
    sd_bus_message *reply = NULL;
    size_t used = 0;
    if (size) out[0] = 0;
    int r = f->call_method(bus, dest, path, iface, member, error, &reply, "");
    if (r < 0) return r;
    r = f->message_enter_container(reply, 'a', "(sss)");
    while (r > 0) {
        const char *v[3] = {NULL, NULL, NULL};
        r = f->message_read(reply, "(sss)", &v[0], &v[1], &v[2]);
        if (r <= 0) break;
        size_t need = strlen(v[0]) + strlen(v[1]) + strlen(v[2]) + 3;
        if (used + need + 1 > size) break;
        for (int i = 0; i < 3; i++) {
            memcpy(out + used, v[i], strlen(v[i]));
            used += strlen(v[i]);
            out[used++] = i < 2 ? '\t' : '\n';
        }
        out[used] = 0;
    }
    f->message_unref(reply);
    return r < 0 ? r : 0;
}

/* What a signal says, as far as the agent's watchers read it (pointers into the message:
 * valid until it is unreferenced). */
struct kbd_bus_signal_fields {
    const char *interface, *member, *sender, *path;
    const char *detail;      /* the first argument when it is a string */
    int32_t detail1;         /* AT-SPI events (signature s i i v a{sv}): detail1 */
    const char *new_owner;   /* NameOwnerChanged (s s s): the new owner */
};

/* Reads a signal's header and first arguments; 1 when m is a signal, 0 when not. */
static inline int kbd_bus_read_signal(const struct kbd_sd_bus *f, sd_bus_message *m, struct kbd_bus_signal_fields *out) {
    if (f->message_is_signal(m, NULL, NULL) <= 0) return 0;
    out->interface = f->message_get_interface(m);
    out->member = f->message_get_member(m);
    out->sender = f->message_get_sender(m);
    out->path = f->message_get_path(m);
    const char *sig = f->message_get_signature(m, 1);
    if (sig && strncmp(sig, "sii", 3) == 0) {
        int32_t detail2 = 0;
        if (f->message_read(m, "sii", &out->detail, &out->detail1, &detail2) < 0) out->detail = NULL;
    } else if (sig && strcmp(sig, "sss") == 0) {
        const char *old_owner = NULL;
        if (f->message_read(m, "sss", &out->detail, &old_owner, &out->new_owner) < 0) out->detail = NULL;
    }
    return 1;
}
/* The session agent's desktop-portal backend (org.freedesktop.impl.portal.GlobalShortcuts),
 * in a child of the agent like the watches: the calls it answers and the signals it sends.
 * Its own symbols, loaded beside kbd_sd_bus's; the messages are read and written here with
 * their D-Bus signatures fixed, so Swift never calls a variadic function. */
struct kbd_sd_bus_portal {
    KBD_SYMBOL_TYPE(sd_bus_request_name) request_name;
    KBD_SYMBOL_TYPE(sd_bus_message_skip) message_skip;
    KBD_SYMBOL_TYPE(sd_bus_message_exit_container) message_exit_container;
    KBD_SYMBOL_TYPE(sd_bus_message_enter_container) message_enter_container;
    KBD_SYMBOL_TYPE(sd_bus_message_read) message_read;
    KBD_SYMBOL_TYPE(sd_bus_message_new_method_return) new_method_return;
    KBD_SYMBOL_TYPE(sd_bus_message_new_signal) new_signal;
    KBD_SYMBOL_TYPE(sd_bus_message_set_destination) set_destination;
    KBD_SYMBOL_TYPE(sd_bus_message_append) append;
    KBD_SYMBOL_TYPE(sd_bus_message_open_container) open_container;
    KBD_SYMBOL_TYPE(sd_bus_message_close_container) close_container;
    KBD_SYMBOL_TYPE(sd_bus_send) send;
    KBD_SYMBOL_TYPE(sd_bus_message_unref) message_unref;
    KBD_SYMBOL_TYPE(sd_bus_message_ref) message_ref;
    KBD_SYMBOL_TYPE(sd_bus_reply_method_errorf) reply_error;
    KBD_SYMBOL_TYPE(sd_bus_message_get_sender) get_sender;
    KBD_SYMBOL_TYPE(sd_bus_message_get_path) get_path;
    KBD_SYMBOL_TYPE(sd_bus_message_get_interface) get_interface;
    KBD_SYMBOL_TYPE(sd_bus_message_get_member) get_member;
    KBD_SYMBOL_TYPE(sd_bus_message_get_signature) get_signature;
    KBD_SYMBOL_TYPE(sd_bus_message_is_method_call) is_method_call;
};

static inline int kbd_sd_bus_portal_load(struct kbd_sd_bus_portal *f) {
    if (f->request_name) return 0;
    void *lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return -ENOENT;
    KBD_DLSYM(lib, f->request_name, sd_bus_request_name);
    KBD_DLSYM(lib, f->message_skip, sd_bus_message_skip);
    KBD_DLSYM(lib, f->message_exit_container, sd_bus_message_exit_container);
    KBD_DLSYM(lib, f->message_enter_container, sd_bus_message_enter_container);
    KBD_DLSYM(lib, f->message_read, sd_bus_message_read);
    KBD_DLSYM(lib, f->new_method_return, sd_bus_message_new_method_return);
    KBD_DLSYM(lib, f->new_signal, sd_bus_message_new_signal);
    KBD_DLSYM(lib, f->set_destination, sd_bus_message_set_destination);
    KBD_DLSYM(lib, f->append, sd_bus_message_append);
    KBD_DLSYM(lib, f->open_container, sd_bus_message_open_container);
    KBD_DLSYM(lib, f->close_container, sd_bus_message_close_container);
    KBD_DLSYM(lib, f->send, sd_bus_send);
    KBD_DLSYM(lib, f->message_unref, sd_bus_message_unref);
    KBD_DLSYM(lib, f->message_ref, sd_bus_message_ref);
    KBD_DLSYM(lib, f->reply_error, sd_bus_reply_method_errorf);
    KBD_DLSYM(lib, f->get_sender, sd_bus_message_get_sender);
    KBD_DLSYM(lib, f->get_path, sd_bus_message_get_path);
    KBD_DLSYM(lib, f->get_interface, sd_bus_message_get_interface);
    KBD_DLSYM(lib, f->get_member, sd_bus_message_get_member);
    KBD_DLSYM(lib, f->get_signature, sd_bus_message_get_signature);
    KBD_DLSYM(lib, f->is_method_call, sd_bus_message_is_method_call);
    if (!f->request_name || !f->message_skip || !f->message_exit_container || !f->message_enter_container || !f->message_read ||
        !f->new_method_return || !f->new_signal || !f->set_destination || !f->append || !f->open_container ||
        !f->close_container || !f->send || !f->message_unref || !f->message_ref || !f->reply_error || !f->get_sender ||
        !f->get_path || !f->get_interface || !f->get_member || !f->get_signature || !f->is_method_call) {
        f->request_name = 0;
        return -ENOSYS;
    }
    return 0;
}

/* A method call's header (pointers into the message); 1 when m is a method call. */
struct kbd_portal_call {
    const char *sender, *path, *interface, *member, *signature;
};
static inline int kbd_portal_read_header(const struct kbd_sd_bus_portal *f, sd_bus_message *m, struct kbd_portal_call *out) {
    if (f->is_method_call(m, NULL, NULL) <= 0) return 0;
    out->sender = f->get_sender(m);
    out->path = f->get_path(m);
    out->interface = f->get_interface(m);
    out->member = f->get_member(m);
    out->signature = f->get_signature(m, 1);
    return 1;
}

/* Reads the leading object paths and strings of a call whose signature starts with sig
 * ("oos": CreateSession, "oo": BindShortcuts, ListShortcuts) into out[0..<strlen(sig)]. */
static inline int kbd_portal_read_strings(const struct kbd_sd_bus_portal *f, sd_bus_message *m, const char *sig, const char **out) {
    size_t n = strlen(sig);
    if (n == 3) return f->message_read(m, sig, &out[0], &out[1], &out[2]);
    if (n == 2) return f->message_read(m, sig, &out[0], &out[1]);
    return -EINVAL;
}

/* Appends text to out (size bytes, used so far in *used); -E2BIG when it does not fit, -EINVAL
 * when it holds a separator byte (0x1e, 0x1f). */
static inline int kbd_portal_put(char *out, size_t size, size_t *used, const char *text, char end) {
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++) if (text[i] == 0x1e || text[i] == 0x1f) return -EINVAL;
    if (*used + n + 2 > size) return -E2BIG;
    memcpy(out + *used, text, n);
    *used += n;
    out[(*used)++] = end;
    out[*used] = 0;
    return 0;
}

/* Reads one shortcut's a{sv}: description and preferred_trigger (strings), the rest skipped. */
static inline int kbd_portal_read_props(const struct kbd_sd_bus_portal *f, sd_bus_message *m, const char **description, const char **trigger) {
    int r = f->message_enter_container(m, 'a', "{sv}");
    if (r < 0) return r;
    while ((r = f->message_enter_container(m, 'e', "sv")) > 0) {
        const char *key = NULL;
        if ((r = f->message_read(m, "s", &key)) < 0) return r;
        const char **slot = strcmp(key, "description") == 0 ? description : strcmp(key, "preferred_trigger") == 0 ? trigger : NULL;
        if (slot && f->message_enter_container(m, 'v', "s") > 0) {
            if ((r = f->message_read(m, "s", slot)) < 0) return r;
            if ((r = f->message_exit_container(m)) < 0) return r;
        } else if ((r = f->message_skip(m, "v")) < 0) {
            return r;
        }
        if ((r = f->message_exit_container(m)) < 0) return r;
    }
    if (r < 0) return r;
    return f->message_exit_container(m);
}

/* BindShortcuts' a(sa{sv}) after its two paths, flattened into out as "id\x1f description
 * \x1f trigger \x1e" per shortcut (at most max of them); -E2BIG past either bound. */
static inline int kbd_portal_read_shortcuts(const struct kbd_sd_bus_portal *f, sd_bus_message *m, char *out, size_t size, int max, int *count) {
    size_t used = 0;
    *count = 0;
    if (size) out[0] = 0;
    int r = f->message_enter_container(m, 'a', "(sa{sv})");
    if (r < 0) return r;
    while ((r = f->message_enter_container(m, 'r', "sa{sv}")) > 0) {
        const char *id = NULL, *description = "", *trigger = "";
        if (++*count > max) return -E2BIG;
        if ((r = f->message_read(m, "s", &id)) < 0) return r;
        if ((r = kbd_portal_read_props(f, m, &description, &trigger)) < 0) return r;
        if ((r = f->message_exit_container(m)) < 0) return r;
        if ((r = kbd_portal_put(out, size, &used, id, 0x1f)) < 0 || (r = kbd_portal_put(out, size, &used, description, 0x1f)) < 0 ||
            (r = kbd_portal_put(out, size, &used, trigger, 0x1e)) < 0) return r;
    }
    if (r < 0) return r;
    return f->message_exit_container(m);
}

/* Appends a(sa{sv}) from "id\x1f description \x1f trigger_description \x1e" records. */
static inline int kbd_portal_append_shortcuts(const struct kbd_sd_bus_portal *f, sd_bus_message *m, const char *flat) {
    int r = f->open_container(m, 'a', "(sa{sv})");
    if (r < 0) return r;
    char id[512], description[1024], trigger[256];
    const char *p = flat;
    while (p && *p) {
        const char *a = strchr(p, 0x1f), *b = a ? strchr(a + 1, 0x1f) : NULL, *e = b ? strchr(b + 1, 0x1e) : NULL;
        if (!e || (size_t)(a - p) >= sizeof id || (size_t)(b - a - 1) >= sizeof description || (size_t)(e - b - 1) >= sizeof trigger) return -EINVAL;
        memcpy(id, p, (size_t)(a - p)); id[a - p] = 0;
        memcpy(description, a + 1, (size_t)(b - a - 1)); description[b - a - 1] = 0;
        memcpy(trigger, b + 1, (size_t)(e - b - 1)); trigger[e - b - 1] = 0;
        r = f->append(m, "(sa{sv})", id, 2, "description", "s", description, "trigger_description", "s", trigger);
        if (r < 0) return r;
        p = e + 1;
    }
    return f->close_container(m);
}

/* Replies (u a{sv}) to a portal call: response, and in results "session_id" (when not NULL)
 * and "shortcuts" (when not NULL). */
static inline int kbd_portal_reply(const struct kbd_sd_bus_portal *f, sd_bus_message *call, uint32_t response, const char *session_id,
                                   const char *shortcuts) {
    sd_bus_message *reply = NULL;
    int r = f->new_method_return(call, &reply);
    if (r < 0) return r;
    if ((r = f->append(reply, "u", response)) >= 0 && (r = f->open_container(reply, 'a', "{sv}")) >= 0) {
        if (session_id && r >= 0) r = f->append(reply, "{sv}", "session_id", "s", session_id);
        if (shortcuts && r >= 0 && (r = f->open_container(reply, 'e', "sv")) >= 0 && (r = f->append(reply, "s", "shortcuts")) >= 0 &&
            (r = f->open_container(reply, 'v', "a(sa{sv})")) >= 0 && (r = kbd_portal_append_shortcuts(f, reply, shortcuts)) >= 0 &&
            (r = f->close_container(reply)) >= 0)
            r = f->close_container(reply);
        if (r >= 0) r = f->close_container(reply);
    }
    if (r >= 0) r = f->send(NULL, reply, NULL);
    f->message_unref(reply);
    return r;
}

/* Replies with no value (Session.Close, Request.Close), one string (Introspect), one
 * variant u (Properties.Get of version) or a{sv} with version (Properties.GetAll). */
static inline int kbd_portal_reply_simple(const struct kbd_sd_bus_portal *f, sd_bus_message *call, char kind, const char *text, uint32_t version) {
    sd_bus_message *reply = NULL;
    int r = f->new_method_return(call, &reply);
    if (r < 0) return r;
    if (kind == 's') r = f->append(reply, "s", text);
    else if (kind == 'v') r = f->append(reply, "v", "u", version);
    else if (kind == 'a') r = f->append(reply, "a{sv}", 1, "version", "u", version);
    if (r >= 0) r = f->send(NULL, reply, NULL);
    f->message_unref(reply);
    return r;
}

static inline int kbd_portal_reply_error(const struct kbd_sd_bus_portal *f, sd_bus_message *call, const char *name, const char *message) {
    return f->reply_error(call, name, "%s", message);
}

/* Activated or Deactivated (member), sent to destination only (the frontend), from the
 * portal's object: session path, shortcut id, timestamp, empty options. */
static inline int kbd_portal_emit(const struct kbd_sd_bus_portal *f, sd_bus *bus, const char *destination, const char *member,
                                  const char *session, const char *shortcut, uint64_t timestamp) {
    sd_bus_message *m = NULL;
    int r = f->new_signal(bus, &m, "/org/freedesktop/portal/desktop", "org.freedesktop.impl.portal.GlobalShortcuts", member);
    if (r < 0) return r;
    if ((r = f->set_destination(m, destination)) >= 0 && (r = f->append(m, "ost", session, shortcut, timestamp)) >= 0 &&
        (r = f->append(m, "a{sv}", 0)) >= 0)
        r = f->send(bus, m, NULL);
    f->message_unref(m);
    return r;
}

/* ShortcutsChanged, sent to destination only: the session's shortcuts as they are now. */
static inline int kbd_portal_emit_changed(const struct kbd_sd_bus_portal *f, sd_bus *bus, const char *destination, const char *session,
                                          const char *shortcuts) {
    sd_bus_message *m = NULL;
    int r = f->new_signal(bus, &m, "/org/freedesktop/portal/desktop", "org.freedesktop.impl.portal.GlobalShortcuts", "ShortcutsChanged");
    if (r < 0) return r;
    if ((r = f->set_destination(m, destination)) >= 0 && (r = f->append(m, "o", session)) >= 0 &&
        (r = kbd_portal_append_shortcuts(f, m, shortcuts)) >= 0)
        r = f->send(bus, m, NULL);
    f->message_unref(m);
    return r;
}

/* Closed on a session object (the backend ended the session), to destination only. */
static inline int kbd_portal_emit_closed(const struct kbd_sd_bus_portal *f, sd_bus *bus, const char *destination, const char *session) {
    sd_bus_message *m = NULL;
    int r = f->new_signal(bus, &m, session, "org.freedesktop.impl.portal.Session", "Closed");
    if (r < 0) return r;
    if ((r = f->set_destination(m, destination)) >= 0) r = f->send(bus, m, NULL);
    f->message_unref(m);
    return r;
}

/* sd-login from libsystemd: the service's view of logind (KbdSeats). Loaded with dlopen
 * when the service first needs to know who is at a keyboard (a client that is not an
 * operator), so an idle service never maps libsystemd and what it links. */
#include <systemd/sd-login.h>
#include <systemd/sd-daemon.h>

struct kbd_sd_login {
    void *lib;
    KBD_SYMBOL_TYPE(sd_booted) booted;
    KBD_SYMBOL_TYPE(sd_get_seats) get_seats;
    KBD_SYMBOL_TYPE(sd_seat_get_active) seat_get_active;
    KBD_SYMBOL_TYPE(sd_session_get_uid) session_get_uid;
    KBD_SYMBOL_TYPE(sd_session_get_state) session_get_state;
    KBD_SYMBOL_TYPE(sd_session_get_class) session_get_class;
    KBD_SYMBOL_TYPE(sd_login_monitor_new) monitor_new;
    KBD_SYMBOL_TYPE(sd_login_monitor_unref) monitor_unref;
    KBD_SYMBOL_TYPE(sd_login_monitor_flush) monitor_flush;
    KBD_SYMBOL_TYPE(sd_login_monitor_get_fd) monitor_get_fd;
};

/* Loads libsystemd's sd-login once; 0 on success, -ENOENT when it is not installed,
 * -ENOSYS when a function is missing. */
static inline int kbd_sd_login_load(struct kbd_sd_login *f) {
    if (f->lib) return 0;
    void *lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return -ENOENT;
    KBD_DLSYM(lib, f->booted, sd_booted);
    KBD_DLSYM(lib, f->get_seats, sd_get_seats);
    KBD_DLSYM(lib, f->seat_get_active, sd_seat_get_active);
    KBD_DLSYM(lib, f->session_get_uid, sd_session_get_uid);
    KBD_DLSYM(lib, f->session_get_state, sd_session_get_state);
    KBD_DLSYM(lib, f->session_get_class, sd_session_get_class);
    KBD_DLSYM(lib, f->monitor_new, sd_login_monitor_new);
    KBD_DLSYM(lib, f->monitor_unref, sd_login_monitor_unref);
    KBD_DLSYM(lib, f->monitor_flush, sd_login_monitor_flush);
    KBD_DLSYM(lib, f->monitor_get_fd, sd_login_monitor_get_fd);
    if (!f->booted || !f->get_seats || !f->seat_get_active || !f->session_get_uid || !f->session_get_state ||
        !f->session_get_class || !f->monitor_new || !f->monitor_unref ||
        !f->monitor_flush || !f->monitor_get_fd) {
        dlclose(lib);
        return -ENOSYS;
    }
    f->lib = lib;
    return 0;
}

/* The seats logind knows, as one string of names separated by NUL bytes (truncated to
 * size); returns how many seats were written, or a negative errno. */
static inline int kbd_sd_login_seats(const struct kbd_sd_login *f, char *out, size_t size) {
    char **seats = NULL;
    int n = f->get_seats(&seats);
    if (n < 0) return n;
    size_t used = 0;
    int written = 0;
    for (int i = 0; i < n && seats; i++) {
        size_t len = strlen(seats[i]);
        if (used + len + 1 <= size) {
            memcpy(out + used, seats[i], len + 1);
            used += len + 1;
            written++;
        }
        free(seats[i]);
    }
    free(seats);
    return written;
}

/* The uid of the person at a seat: the owner of the seat's active session, counted only
 * while that session's state is "active" (not "closing": logind keeps a logged-out session
 * as the seat's active one while any of its processes lives; not "online") and its class
 * is "user" (not the greeter's, not a lock screen's). 0 on success (uid set), -ENODATA when
 * nobody counts as at the seat, else a negative errno. */
static inline int kbd_sd_login_active_uid(const struct kbd_sd_login *f, const char *seat, uid_t *uid) {
    char *session = NULL;
    int r = f->seat_get_active(seat, &session, NULL);
    if (r < 0) return r;
    if (!session) return -ENODATA;
    char *state = NULL, *klass = NULL;
    r = f->session_get_state(session, &state);
    if (r >= 0) r = f->session_get_class(session, &klass);
    if (r >= 0) r = (state && strcmp(state, "active") == 0 && klass && strcmp(klass, "user") == 0) ? 0 : -ENODATA;
    if (r >= 0) r = f->session_get_uid(session, uid);
    free(state);
    free(klass);
    free(session);
    return r < 0 ? r : 0;
}

#endif
