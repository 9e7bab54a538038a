#ifndef KBD_COMMANDD_CXCB_SHIM_H
#define KBD_COMMANDD_CXCB_SHIM_H
/* EWMH focus through libxcb, the session agent's focus source on an X11 window manager
 * that has no IPC of its own: _NET_ACTIVE_WINDOW on the root window (PropertyNotify, so
 * the agent wakes only when it changes), WM_CLASS and _NET_WM_NAME of that window (and its
 * PropertyNotify while it is active, for title changes). libxcb is loaded with dlopen when
 * the source is opened, so an agent on Wayland never maps it. Only the headers come from
 * libxcb1-dev. One struct kbd_xcb owns one connection. */
#include <xcb/xcb.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One dlopen idiom (systemd's DLSYM_PROTOTYPE, as in CSystemd and CGio): a loaded symbol's
 * field has the type of libxcb's own declaration and the load converts dlsym's pointer to
 * exactly that type, so the compiler checks every symbol against the header. */
#ifndef KBD_SYMBOL_TYPE
#define KBD_SYMBOL_TYPE(symbol) __typeof__(&symbol)
#define KBD_DLSYM(lib, field, symbol) ((field) = (KBD_SYMBOL_TYPE(symbol))dlsym((lib), #symbol))
#endif

struct kbd_xcb {
    KBD_SYMBOL_TYPE(xcb_connect) connect;
    KBD_SYMBOL_TYPE(xcb_connection_has_error) connection_has_error;
    KBD_SYMBOL_TYPE(xcb_disconnect) disconnect;
    KBD_SYMBOL_TYPE(xcb_get_setup) get_setup;
    KBD_SYMBOL_TYPE(xcb_setup_roots_iterator) setup_roots_iterator;
    KBD_SYMBOL_TYPE(xcb_screen_next) screen_next;
    KBD_SYMBOL_TYPE(xcb_get_file_descriptor) get_file_descriptor;
    KBD_SYMBOL_TYPE(xcb_intern_atom) intern_atom;
    KBD_SYMBOL_TYPE(xcb_intern_atom_reply) intern_atom_reply;
    KBD_SYMBOL_TYPE(xcb_get_property) get_property;
    KBD_SYMBOL_TYPE(xcb_get_property_reply) get_property_reply;
    KBD_SYMBOL_TYPE(xcb_get_property_value) get_property_value;
    KBD_SYMBOL_TYPE(xcb_get_property_value_length) get_property_value_length;
    KBD_SYMBOL_TYPE(xcb_change_window_attributes) change_window_attributes;
    KBD_SYMBOL_TYPE(xcb_flush) flush;
    KBD_SYMBOL_TYPE(xcb_poll_for_event) poll_for_event;

    xcb_connection_t *conn;
    xcb_window_t root;
    xcb_atom_t net_active_window, net_wm_name, utf8_string, net_wm_pid;
    /* The active window whose property changes are selected (0: none). */
    xcb_window_t watched;
};

/* Loads libxcb once; 0 on success, -ENOENT when it is not installed. */
static inline int kbd_xcb_load(struct kbd_xcb *x) {
    if (x->connect) return 0;
    void *lib = dlopen("libxcb.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return -ENOENT;
    KBD_DLSYM(lib, x->connection_has_error, xcb_connection_has_error);
    KBD_DLSYM(lib, x->disconnect, xcb_disconnect);
    KBD_DLSYM(lib, x->get_setup, xcb_get_setup);
    KBD_DLSYM(lib, x->setup_roots_iterator, xcb_setup_roots_iterator);
    KBD_DLSYM(lib, x->screen_next, xcb_screen_next);
    KBD_DLSYM(lib, x->get_file_descriptor, xcb_get_file_descriptor);
    KBD_DLSYM(lib, x->intern_atom, xcb_intern_atom);
    KBD_DLSYM(lib, x->intern_atom_reply, xcb_intern_atom_reply);
    KBD_DLSYM(lib, x->get_property, xcb_get_property);
    KBD_DLSYM(lib, x->get_property_reply, xcb_get_property_reply);
    KBD_DLSYM(lib, x->get_property_value, xcb_get_property_value);
    KBD_DLSYM(lib, x->get_property_value_length, xcb_get_property_value_length);
    KBD_DLSYM(lib, x->change_window_attributes, xcb_change_window_attributes);
    KBD_DLSYM(lib, x->flush, xcb_flush);
    KBD_DLSYM(lib, x->poll_for_event, xcb_poll_for_event);
    if (!x->connection_has_error || !x->disconnect || !x->get_setup || !x->setup_roots_iterator || !x->screen_next ||
        !x->get_file_descriptor || !x->intern_atom || !x->intern_atom_reply || !x->get_property || !x->get_property_reply ||
        !x->get_property_value || !x->get_property_value_length || !x->change_window_attributes || !x->flush || !x->poll_for_event)
        return -ENOSYS;
    /* connect last: it is what says the table is loaded. */
    KBD_DLSYM(lib, x->connect, xcb_connect);
    return x->connect ? 0 : -ENOSYS;
}

static inline xcb_atom_t kbd_xcb_atom(struct kbd_xcb *x, const char *name) {
    xcb_intern_atom_reply_t *r = x->intern_atom_reply(x->conn, x->intern_atom(x->conn, 0, (uint16_t)strlen(name), name), NULL);
    if (!r) return XCB_ATOM_NONE;
    xcb_atom_t a = r->atom;
    free(r);
    return a;
}

/* Connects to `display`, interns the atoms and selects PropertyChange on the root window
 * of the default screen. Returns the connection's descriptor, or -1 (then *reason says
 * why: 1 no libxcb, 2 cannot connect, 3 no screen). */
/* Loads libxcb and connects to `display`: 0 and the default screen's number, 1 when libxcb
 * cannot be loaded, 2 when the display does not answer (x->conn stays NULL). */
static inline int kbd_xcb_connect(struct kbd_xcb *x, const char *display, int *screen) {
    if (kbd_xcb_load(x) != 0) return 1;
    *screen = 0;
    x->conn = x->connect(display, screen);
    if (!x->conn || x->connection_has_error(x->conn)) {
        if (x->conn) x->disconnect(x->conn);
        x->conn = NULL;
        return 2;
    }
    return 0;
}

static inline int kbd_xcb_open(struct kbd_xcb *x, const char *display, int *reason) {
    int screen = 0;
    int failed = kbd_xcb_connect(x, display, &screen);
    if (failed) { *reason = failed; return -1; }
    xcb_screen_iterator_t it = x->setup_roots_iterator(x->get_setup(x->conn));
    for (int i = 0; i < screen && it.rem; i++) x->screen_next(&it);
    if (!it.rem || !it.data) {
        x->disconnect(x->conn);
        x->conn = NULL;
        *reason = 3;
        return -1;
    }
    x->root = it.data->root;
    x->net_active_window = kbd_xcb_atom(x, "_NET_ACTIVE_WINDOW");
    x->net_wm_name = kbd_xcb_atom(x, "_NET_WM_NAME");
    x->utf8_string = kbd_xcb_atom(x, "UTF8_STRING");
    x->net_wm_pid = kbd_xcb_atom(x, "_NET_WM_PID");
    uint32_t mask = XCB_EVENT_MASK_PROPERTY_CHANGE;
    x->change_window_attributes(x->conn, x->root, XCB_CW_EVENT_MASK, &mask);
    x->flush(x->conn);
    return x->get_file_descriptor(x->conn);
}

/* Connects to `display` for lookups only (no events selected: nothing ever queues): the
 * _NET_WM_PID of i3's windows. 0, or -1 when it cannot. */
static inline int kbd_xcb_open_lookups(struct kbd_xcb *x, const char *display) {
    int screen = 0;
    if (kbd_xcb_connect(x, display, &screen) != 0) return -1;
    x->net_wm_pid = kbd_xcb_atom(x, "_NET_WM_PID");
    return 0;
}

static inline void kbd_xcb_close(struct kbd_xcb *x) {
    if (x->conn) x->disconnect(x->conn);
    x->conn = NULL;
}

/* The window _NET_ACTIVE_WINDOW names (0: none, or not set). */
static inline xcb_window_t kbd_xcb_active_window(struct kbd_xcb *x) {
    xcb_get_property_reply_t *r = x->get_property_reply(
        x->conn, x->get_property(x->conn, 0, x->root, x->net_active_window, XCB_ATOM_WINDOW, 0, 1), NULL);
    if (!r) return 0;
    xcb_window_t w = 0;
    if (r->type == XCB_ATOM_WINDOW && r->format == 32 && x->get_property_value_length(r) >= 4)
        memcpy(&w, x->get_property_value(r), 4);
    free(r);
    return w;
}

/* A text property of `w` into buf (at most cap-1 bytes, NUL added); `which` 0 is
 * _NET_WM_NAME (UTF8_STRING, else WM_NAME), 1 is the class of WM_CLASS (its second
 * string). Returns the length, or -1 when the window has none. */
static inline int kbd_xcb_text(struct kbd_xcb *x, xcb_window_t w, int which, char *buf, int cap) {
    xcb_atom_t property = which == 1 ? XCB_ATOM_WM_CLASS : x->net_wm_name;
    xcb_atom_t type = which == 1 ? XCB_ATOM_STRING : x->utf8_string;
    xcb_get_property_reply_t *r = x->get_property_reply(x->conn, x->get_property(x->conn, 0, w, property, type, 0, 1024), NULL);
    if ((!r || r->type == XCB_ATOM_NONE) && which == 0) {
        free(r);
        r = x->get_property_reply(x->conn, x->get_property(x->conn, 0, w, XCB_ATOM_WM_NAME, XCB_GET_PROPERTY_TYPE_ANY, 0, 1024), NULL);
    }
    if (!r || r->type == XCB_ATOM_NONE || r->format != 8) { free(r); return -1; }
    const char *value = (const char *)x->get_property_value(r);
    int length = x->get_property_value_length(r);
    if (which == 1) {
        /* "instance\0class\0": the class is after the first NUL. */
        const char *nul = memchr(value, 0, (size_t)length);
        if (!nul) { free(r); return -1; }
        int skip = (int)(nul - value) + 1;
        value += skip;
        length -= skip;
        const char *end = memchr(value, 0, (size_t)length);
        if (end) length = (int)(end - value);
    }
    if (length > cap - 1) length = cap - 1;
    if (length < 0) length = 0;
    memcpy(buf, value, (size_t)length);
    buf[length] = 0;
    free(r);
    return length;
}

/* The process of `w` as its client set _NET_WM_PID (a CARDINAL); 0 when it did not. */
static inline uint32_t kbd_xcb_pid(struct kbd_xcb *x, xcb_window_t w) {
    if (x->net_wm_pid == XCB_ATOM_NONE) return 0;
    xcb_get_property_reply_t *r = x->get_property_reply(
        x->conn, x->get_property(x->conn, 0, w, x->net_wm_pid, XCB_ATOM_CARDINAL, 0, 1), NULL);
    if (!r) return 0;
    uint32_t pid = 0;
    if (r->type == XCB_ATOM_CARDINAL && r->format == 32 && x->get_property_value_length(r) >= 4)
        memcpy(&pid, x->get_property_value(r), 4);
    free(r);
    return pid;
}

/* Selects property changes of the active window `w` (and no longer of the one before). */
static inline void kbd_xcb_watch(struct kbd_xcb *x, xcb_window_t w) {
    if (x->watched == w) return;
    uint32_t none = 0, mask = XCB_EVENT_MASK_PROPERTY_CHANGE;
    if (x->watched) x->change_window_attributes(x->conn, x->watched, XCB_CW_EVENT_MASK, &none);
    if (w) x->change_window_attributes(x->conn, w, XCB_CW_EVENT_MASK, &mask);
    x->watched = w;
    x->flush(x->conn);
}

/* Takes every queued event: *active when _NET_ACTIVE_WINDOW changed on the root, *title
 * when the watched window's name or class changed. Errors (a window gone) are skipped.
 * Returns -1 when the connection broke, else 0. */
static inline int kbd_xcb_drain(struct kbd_xcb *x, int *active, int *title) {
    xcb_generic_event_t *e;
    while ((e = x->poll_for_event(x->conn))) {
        if ((e->response_type & 0x7f) == XCB_PROPERTY_NOTIFY) {
            xcb_property_notify_event_t *p = (xcb_property_notify_event_t *)e;
            if (p->window == x->root && p->atom == x->net_active_window) *active = 1;
            else if (p->window == x->watched && (p->atom == x->net_wm_name || p->atom == XCB_ATOM_WM_NAME || p->atom == XCB_ATOM_WM_CLASS)) *title = 1;
        }
        free(e);
    }
    return x->connection_has_error(x->conn) ? -1 : 0;
}
#endif
