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

struct kbd_sd_bus {
    int (*open_user)(sd_bus **);
    int (*set_method_call_timeout)(sd_bus *, uint64_t);
    sd_bus *(*flush_close_unref)(sd_bus *);
    void (*error_free)(sd_bus_error *);
    int (*call_method)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *, sd_bus_message **, const char *, ...);
    int (*get_property_trivial)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *, char, void *);
    int (*set_property)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *, const char *, ...);
    int (*message_read)(sd_bus_message *, const char *, ...);
    sd_bus_message *(*message_unref)(sd_bus_message *);
};

/* Loads libsystemd once; 0 on success, -ENOENT when it is not installed. */
static inline int kbd_sd_bus_load(struct kbd_sd_bus *f) {
    if (f->open_user) return 0;
    void *lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return -ENOENT;
    f->open_user = (int (*)(sd_bus **))dlsym(lib, "sd_bus_open_user");
    f->set_method_call_timeout = (int (*)(sd_bus *, uint64_t))dlsym(lib, "sd_bus_set_method_call_timeout");
    f->flush_close_unref = (sd_bus *(*)(sd_bus *))dlsym(lib, "sd_bus_flush_close_unref");
    f->error_free = (void (*)(sd_bus_error *))dlsym(lib, "sd_bus_error_free");
    f->call_method = (int (*)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *, sd_bus_message **, const char *, ...))dlsym(lib, "sd_bus_call_method");
    f->get_property_trivial = (int (*)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *, char, void *))dlsym(lib, "sd_bus_get_property_trivial");
    f->set_property = (int (*)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *, const char *, ...))dlsym(lib, "sd_bus_set_property");
    f->message_read = (int (*)(sd_bus_message *, const char *, ...))dlsym(lib, "sd_bus_message_read");
    f->message_unref = (sd_bus_message *(*)(sd_bus_message *))dlsym(lib, "sd_bus_message_unref");
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
#endif
