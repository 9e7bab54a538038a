#ifndef KBD_COMMANDD_CGIO_SHIM_H
#define KBD_COMMANDD_CGIO_SHIM_H
/* GSettings from GIO (libgio-2.0): the client of the agent's GNOME backend, the setting
 * org.gnome.desktop.a11y.applications screen-keyboard-enabled. libgio (with GObject,
 * GLib and, on first use, the dconf GSettings module) is loaded with dlopen in the
 * child process the agent makes its GSettings calls in (DesktopProcess), so the agent
 * itself never maps it (GLib's libraries cannot be unloaded). No GLib
 * header is needed: the few entry points are declared here with the types of GLib's
 * ABI (gboolean is int, the objects are opaque). */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <stdio.h>

/* One dlopen idiom (systemd's DLSYM_PROTOTYPE, as in CSystemd and CXcb): every symbol is
 * loaded with KBD_DLSYM(lib, field, symbol). The agent is built without GLib's headers, so
 * the types below are GLib's ABI (gboolean is int, gsize is size_t, the objects are
 * opaque); compiled with KBD_CHECK_REAL_HEADERS and GLib's headers (ShimHeaderTests does,
 * with pkg-config's flags for gio-2.0), each kbd_ type is GLib's own and each load is
 * checked against the real declaration: a field of the wrong type does not compile. */
#ifdef KBD_CHECK_REAL_HEADERS
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gio.h>
#include <gio/gsettingsbackend.h>
typedef GSettingsSchemaSource kbd_GSettingsSchemaSource;
typedef GSettingsSchema kbd_GSettingsSchema;
typedef GSettings kbd_GSettings;
typedef GSettingsBackend kbd_GSettingsBackend;
typedef GMainContext kbd_GMainContext;
typedef GVariant kbd_GVariant;
typedef GTypeInstance kbd_GTypeInstance;
typedef GCallback kbd_GCallback;
typedef GClosureNotify kbd_GClosureNotify;
typedef GConnectFlags kbd_GConnectFlags;
#define KBD_DLSYM(lib, field, symbol) do { \
        _Static_assert(__builtin_types_compatible_p(__typeof__(field), __typeof__(&symbol)), \
                       "the field for " #symbol " does not have the type of its declaration in GLib's headers"); \
        (field) = (__typeof__(&symbol))dlsym((lib), #symbol); \
    } while (0)
#else
typedef struct kbd_GSettingsSchemaSource kbd_GSettingsSchemaSource;
typedef struct kbd_GSettingsSchema kbd_GSettingsSchema;
typedef struct kbd_GSettings kbd_GSettings;
typedef struct kbd_GSettingsBackend kbd_GSettingsBackend;
typedef struct kbd_GMainContext kbd_GMainContext;
typedef struct kbd_GVariant kbd_GVariant;
typedef struct kbd_GTypeInstance kbd_GTypeInstance;
typedef struct kbd_GClosure kbd_GClosure;
typedef void (*kbd_GCallback)(void);
typedef void (*kbd_GClosureNotify)(void *, kbd_GClosure *);
typedef enum { KBD_G_CONNECT_DEFAULT = 0 } kbd_GConnectFlags;
#define KBD_DLSYM(lib, field, symbol) ((field) = (__typeof__(field))dlsym((lib), #symbol))
#endif

struct kbd_gio {
    kbd_GSettingsSchemaSource *(*schema_source_get_default)(void);
    kbd_GSettingsSchema *(*schema_source_lookup)(kbd_GSettingsSchemaSource *, const char *, int);
    int (*schema_has_key)(kbd_GSettingsSchema *, const char *);
    void (*schema_unref)(kbd_GSettingsSchema *);
    kbd_GSettings *(*settings_new_full)(kbd_GSettingsSchema *, kbd_GSettingsBackend *, const char *);
    int (*settings_get_boolean)(kbd_GSettings *, const char *);
    int (*settings_set_boolean)(kbd_GSettings *, const char *, int);
    int (*settings_is_writable)(kbd_GSettings *, const char *);
    void (*settings_sync)(void);
    kbd_GSettingsBackend *(*backend_get_default)(void);
    kbd_GSettingsBackend *(*memory_backend_new)(void);
    const char *(*type_name_from_instance)(kbd_GTypeInstance *);
    void (*object_unref)(void *);
    kbd_GMainContext *(*main_context_new)(void);
    void (*main_context_push_thread_default)(kbd_GMainContext *);
    void (*main_context_pop_thread_default)(kbd_GMainContext *);
    int (*main_context_iteration)(kbd_GMainContext *, int);
    void (*main_context_unref)(kbd_GMainContext *);
    /* The input sources' watch (DesktopKeymapWatch): values of other types, and the
     * settings' "changed" signal. */
    kbd_GVariant *(*settings_get_value)(kbd_GSettings *, const char *);
    unsigned (*settings_get_uint)(kbd_GSettings *, const char *);
    size_t (*variant_n_children)(kbd_GVariant *);
    kbd_GVariant *(*variant_get_child_value)(kbd_GVariant *, size_t);
    const char *(*variant_get_string)(kbd_GVariant *, size_t *);
    void (*variant_unref)(kbd_GVariant *);
    unsigned long (*signal_connect_data)(void *, const char *, kbd_GCallback, void *, kbd_GClosureNotify, kbd_GConnectFlags);
};

/* Loads libgio once; 0 on success, -ENOENT when it is not installed, -ENOSYS when an
 * entry point is missing (a GLib older than 2.32). */
static inline int kbd_gio_load(struct kbd_gio *f) {
    if (f->settings_sync) return 0;
    void *lib = dlopen("libgio-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return -ENOENT;
    /* dlsym on the handle also searches its dependencies (libgobject, libglib). */
    KBD_DLSYM(lib, f->schema_source_get_default, g_settings_schema_source_get_default);
    KBD_DLSYM(lib, f->schema_source_lookup, g_settings_schema_source_lookup);
    KBD_DLSYM(lib, f->schema_has_key, g_settings_schema_has_key);
    KBD_DLSYM(lib, f->schema_unref, g_settings_schema_unref);
    KBD_DLSYM(lib, f->settings_new_full, g_settings_new_full);
    KBD_DLSYM(lib, f->settings_get_boolean, g_settings_get_boolean);
    KBD_DLSYM(lib, f->settings_set_boolean, g_settings_set_boolean);
    KBD_DLSYM(lib, f->settings_is_writable, g_settings_is_writable);
    KBD_DLSYM(lib, f->backend_get_default, g_settings_backend_get_default);
    KBD_DLSYM(lib, f->memory_backend_new, g_memory_settings_backend_new);
    KBD_DLSYM(lib, f->type_name_from_instance, g_type_name_from_instance);
    KBD_DLSYM(lib, f->object_unref, g_object_unref);
    KBD_DLSYM(lib, f->main_context_new, g_main_context_new);
    KBD_DLSYM(lib, f->main_context_push_thread_default, g_main_context_push_thread_default);
    KBD_DLSYM(lib, f->main_context_pop_thread_default, g_main_context_pop_thread_default);
    KBD_DLSYM(lib, f->main_context_iteration, g_main_context_iteration);
    KBD_DLSYM(lib, f->main_context_unref, g_main_context_unref);
    KBD_DLSYM(lib, f->settings_get_value, g_settings_get_value);
    KBD_DLSYM(lib, f->settings_get_uint, g_settings_get_uint);
    KBD_DLSYM(lib, f->variant_n_children, g_variant_n_children);
    KBD_DLSYM(lib, f->variant_get_child_value, g_variant_get_child_value);
    KBD_DLSYM(lib, f->variant_get_string, g_variant_get_string);
    KBD_DLSYM(lib, f->variant_unref, g_variant_unref);
    KBD_DLSYM(lib, f->signal_connect_data, g_signal_connect_data);
    void (*sync)(void) = NULL;
    KBD_DLSYM(lib, sync, g_settings_sync);
    if (!sync || !f->schema_source_get_default || !f->schema_source_lookup || !f->schema_has_key || !f->schema_unref ||
        !f->settings_new_full || !f->settings_get_boolean || !f->settings_set_boolean || !f->settings_is_writable ||
        !f->backend_get_default || !f->memory_backend_new || !f->type_name_from_instance || !f->object_unref || !f->main_context_new ||
        !f->main_context_push_thread_default || !f->main_context_pop_thread_default || !f->main_context_iteration ||
        !f->main_context_unref || !f->settings_get_value || !f->settings_get_uint || !f->variant_n_children || !f->variant_get_child_value ||
        !f->variant_get_string || !f->variant_unref || !f->signal_connect_data)
        return -ENOSYS;
    f->settings_sync = sync;
    return 0;
}

enum {
    KBD_GSETTINGS_OK = 0,
    /* No compiled schemas at all (no gschemas.compiled in XDG_DATA_DIRS). */
    KBD_GSETTINGS_NO_SCHEMAS = -1,
    /* The schema is not installed. */
    KBD_GSETTINGS_NO_SCHEMA = -2,
    /* The schema has no such key. */
    KBD_GSETTINGS_NO_KEY = -3,
    /* The key is locked (dconf lockdown): a write would be refused. */
    KBD_GSETTINGS_NOT_WRITABLE = -4,
};

/* The name of the default GSettings backend's type (GMemorySettingsBackend when GIO found
 * no dconf module), copied into `name`. */
static inline void kbd_gsettings_backend_name(const struct kbd_gio *f, char *name, size_t size) {
    kbd_GSettingsBackend *backend = f->backend_get_default();
    const char *type = backend ? f->type_name_from_instance((kbd_GTypeInstance *)backend) : "";
    strncpy(name, type ? type : "", size - 1);
    name[size - 1] = 0;
    if (backend) f->object_unref(backend);
}

/* Reads (`write` 0) or writes (`write` 1, then g_settings_sync) the boolean `key` of
 * `schema_id` through `backend` (NULL: the default one, dconf on a desktop); the value
 * read goes to *value. The GSettings object lives only for the
 * call, with a private main context as the thread default: its change notifications
 * (dispatched to the context it was made in) are run before it goes, and nothing is
 * left queued on a context that no loop would ever run. */
static inline int kbd_gsettings_bool(const struct kbd_gio *f, kbd_GSettingsBackend *backend, const char *schema_id, const char *key,
                                     int write, int *value) {
    kbd_GSettingsSchemaSource *source = f->schema_source_get_default();
    if (!source) return KBD_GSETTINGS_NO_SCHEMAS;
    kbd_GSettingsSchema *schema = f->schema_source_lookup(source, schema_id, 1);
    if (!schema) return KBD_GSETTINGS_NO_SCHEMA;
    if (!f->schema_has_key(schema, key)) {
        f->schema_unref(schema);
        return KBD_GSETTINGS_NO_KEY;
    }
    kbd_GMainContext *context = f->main_context_new();
    f->main_context_push_thread_default(context);
    kbd_GSettings *settings = f->settings_new_full(schema, backend, NULL);
    f->schema_unref(schema);
    int result = KBD_GSETTINGS_OK;
    if (!write) {
        *value = f->settings_get_boolean(settings, key) ? 1 : 0;
    } else if (!f->settings_is_writable(settings, key) || !f->settings_set_boolean(settings, key, *value ? 1 : 0)) {
        result = KBD_GSETTINGS_NOT_WRITABLE;
    } else {
        f->settings_sync();
    }
    f->object_unref(settings);
    while (f->main_context_iteration(context, 0)) {}
    f->main_context_pop_thread_default(context);
    f->main_context_unref(context);
    return result;
}
/* The keyboard's input sources (org.gnome.desktop.input-sources), watched for changes in
 * the agent's keymap child: GSettings on a private main context that the child's loop
 * runs (kbd_input_sources_wait), so "changed" signals (dconf's over D-Bus, the keyfile
 * backend's file monitor) come in while the child sleeps in poll. */
struct kbd_input_sources {
    kbd_GSettings *settings;
    kbd_GMainContext *context;
    int changed;
};

static void kbd_input_sources_changed(void *settings, const char *key, void *data) {
    (void)settings; (void)key;
    ((struct kbd_input_sources *)data)->changed = 1;
}

/* Opens the schema through the default backend and connects "changed" before the first
 * read (GSettings only signals keys that were read with a handler connected). */
static inline int kbd_input_sources_open(const struct kbd_gio *f, const char *schema_id, struct kbd_input_sources *w) {
    kbd_GSettingsSchemaSource *source = f->schema_source_get_default();
    if (!source) return KBD_GSETTINGS_NO_SCHEMAS;
    kbd_GSettingsSchema *schema = f->schema_source_lookup(source, schema_id, 1);
    if (!schema) return KBD_GSETTINGS_NO_SCHEMA;
    static const char *const keys[] = {"sources", "mru-sources", "current", "xkb-options"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (!f->schema_has_key(schema, keys[i])) {
            f->schema_unref(schema);
            return KBD_GSETTINGS_NO_KEY;
        }
    }
    w->context = f->main_context_new();
    f->main_context_push_thread_default(w->context);
    w->settings = f->settings_new_full(schema, NULL, NULL);
    f->schema_unref(schema);
    f->signal_connect_data(w->settings, "changed", (kbd_GCallback)kbd_input_sources_changed, w, NULL, (kbd_GConnectFlags)0);
    return KBD_GSETTINGS_OK;
}

/* Appends s (or up to the room left) to out at *used. */
static inline void kbd_append(char *out, size_t size, size_t *used, const char *s) {
    size_t n = strlen(s);
    if (*used + n + 1 > size) n = size > *used + 1 ? size - *used - 1 : 0;
    memcpy(out + *used, s, n);
    *used += n;
    out[*used] = 0;
}

/* Formats one key's value as text: a(ss) as "type id" pairs one per line, as strings one
 * per line, u as a decimal number. */
static inline void kbd_input_sources_key(const struct kbd_gio *f, struct kbd_input_sources *w, const char *key, char *out, size_t size) {
    size_t used = 0;
    out[0] = 0;
    if (strcmp(key, "current") == 0) {
        snprintf(out, size, "%u", f->settings_get_uint(w->settings, key));
        return;
    }
    kbd_GVariant *value = f->settings_get_value(w->settings, key);
    if (!value) return;
    size_t n = f->variant_n_children(value);
    for (size_t i = 0; i < n; i++) {
        kbd_GVariant *child = f->variant_get_child_value(value, i);
        if (strcmp(key, "xkb-options") == 0) {
            kbd_append(out, size, &used, f->variant_get_string(child, NULL));
        } else {
            kbd_GVariant *type = f->variant_get_child_value(child, 0);
            kbd_GVariant *id = f->variant_get_child_value(child, 1);
            kbd_append(out, size, &used, f->variant_get_string(type, NULL));
            kbd_append(out, size, &used, " ");
            kbd_append(out, size, &used, f->variant_get_string(id, NULL));
            f->variant_unref(type);
            f->variant_unref(id);
        }
        kbd_append(out, size, &used, "\n");
        f->variant_unref(child);
    }
    f->variant_unref(value);
}

/* Runs the private context until a "changed" signal came (blocking: the child sleeps). */
static inline void kbd_input_sources_wait(const struct kbd_gio *f, struct kbd_input_sources *w) {
    w->changed = 0;
    while (!w->changed) f->main_context_iteration(w->context, 1);
    /* Several keys change together (a layout switch writes mru-sources and current):
     * take what is already queued before reading. */
    while (f->main_context_iteration(w->context, 0)) {}
}
#endif
