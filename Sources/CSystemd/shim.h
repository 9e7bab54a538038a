#ifndef KBD_COMMANDD_CSYSTEMD_SHIM_H
#define KBD_COMMANDD_CSYSTEMD_SHIM_H
/* sd-bus from libsystemd: the session bus client of the agent's on-screen-keyboard
 * backends. The variadic calls are wrapped here, with the D-Bus signatures fixed, so
 * Swift never calls a C variadic function. */
#include <systemd/sd-bus.h>
#include <stdlib.h>

/* A method with one boolean argument and no reply value. */
static inline int kbd_bus_call_bool(sd_bus *bus, const char *dest, const char *path, const char *iface, const char *member,
                                    int value, sd_bus_error *error) {
    return sd_bus_call_method(bus, dest, path, iface, member, error, NULL, "b", value);
}

/* Reads a boolean property. */
static inline int kbd_bus_get_bool(sd_bus *bus, const char *dest, const char *path, const char *iface, const char *member,
                                   int *value, sd_bus_error *error) {
    return sd_bus_get_property_trivial(bus, dest, path, iface, member, error, 'b', value);
}

/* Writes a boolean property. */
static inline int kbd_bus_set_bool(sd_bus *bus, const char *dest, const char *path, const char *iface, const char *member,
                                   int value, sd_bus_error *error) {
    return sd_bus_set_property(bus, dest, path, iface, member, error, "b", value);
}

/* Whether a well-known name has an owner on the bus. */
static inline int kbd_bus_name_has_owner(sd_bus *bus, const char *name, int *has, sd_bus_error *error) {
    sd_bus_message *reply = NULL;
    int r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                               error, &reply, "s", name);
    if (r < 0) return r;
    r = sd_bus_message_read(reply, "b", has);
    sd_bus_message_unref(reply);
    return r;
}
#endif
