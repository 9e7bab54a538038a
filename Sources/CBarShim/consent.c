// The consent dialog's toolkit part (see include/bar_shim.h): GTK 3 + gtk-layer-shell. It
// draws what Swift says and reports the buttons and the keys; Swift decides (KbdBar's
// ConsentCapture). Keys are never printed here.
#include "bar_shim.h"
#include "gtk_decls.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static struct {
    void *context;
    kbdbar_tap_cb button;
    kbdbar_key_cb key;
    kbdbar_event_cb timer;
    guint timeout;
    int trace, layer, painted;
    GtkWidget *window, *chord, *hint, *allow, *refuse;
} dialog;

static const char *consent_css =
    "window.kbd-consent { background-color: rgba(36, 36, 40, 0.98); border-radius: 10px; }\n"
    "window.kbd-consent label { color: #f2f2f2; }\n"
    "window.kbd-consent label.heading { font-weight: bold; font-size: larger; }\n"
    "window.kbd-consent label.chord { font-family: monospace; font-size: x-large; font-weight: bold; margin: 8px 0; }\n"
    "window.kbd-consent label.conflict { color: #ffb86c; }\n"
    "window.kbd-consent label.hint { color: #9a9aa6; font-size: smaller; }\n"
    "window.kbd-consent button { padding: 4px 14px; background: #4a4a52; border: 1px solid #5a5a62; box-shadow: none; }\n"
    "window.kbd-consent button label { color: #f2f2f2; }\n"
    "window.kbd-consent button:hover { background: #5a5a64; }\n"
    "window.kbd-consent button:focus { border-color: #8ab4f8; }\n"
    "window.kbd-consent button:disabled { background: #38383e; }\n"
    "window.kbd-consent button:disabled label { color: #77777f; }\n";

static void style(GtkWidget *w, const char *name) { gtk_style_context_add_class(gtk_widget_get_style_context(w), name); }

int kbdbar_consent_init(void) {
    dialog.trace = getenv("KBD_BAR_TRACE") != NULL;
    gdk_set_allowed_backends("wayland,x11");
    if (!gtk_init_check(NULL, NULL)) return KBDBAR_NO_DISPLAY;
    dialog.layer = gtk_layer_is_supported();
    GtkCssProvider *provider = gtk_css_provider_new();
    gtk_css_provider_load_from_data(provider, consent_css, -1, NULL);
    gtk_style_context_add_provider_for_screen(gdk_screen_get_default(), provider, GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref(provider);
    return KBDBAR_OK;
}

void kbdbar_consent_set_callbacks(void *context, kbdbar_tap_cb button, kbdbar_key_cb key, kbdbar_event_cb timer) {
    dialog.context = context;
    dialog.button = button;
    dialog.key = key;
    dialog.timer = timer;
}

static gboolean on_consent_timer(gpointer data) {
    (void)data;
    dialog.timeout = 0;
    if (dialog.timer) dialog.timer(dialog.context);
    return 0;
}

void kbdbar_consent_arm(int32_t milliseconds) {
    if (dialog.timeout) g_source_remove(dialog.timeout);
    dialog.timeout = milliseconds >= 0 ? g_timeout_add((guint)milliseconds, on_consent_timer, NULL) : 0;
}

/// The key at its first level in the event's group (what the service names a chord by:
/// Shift+1 is "Shift+1", not "Shift+exclam"); the event's own keyval when GDK cannot say.
static guint first_level(const GdkEventKeyView *k) {
    GdkKeymap *keymap = gdk_keymap_get_for_display(gdk_display_get_default());
    guint keyval = 0;
    if (keymap && gdk_keymap_translate_keyboard_state(keymap, k->hardware_keycode, 0, k->group, &keyval, NULL, NULL, NULL) && keyval)
        return keyval;
    return k->keyval;
}

static gboolean on_key(GtkWidget *w, GdkEventKeyView *k, gpointer data) {
    (void)w; (void)data;
    if (!dialog.key) return 0;
    return dialog.key(dialog.context, k->type == GDK_KEY_PRESS, first_level(k), k->state) ? 1 : 0;
}

static void on_clicked(GtkWidget *b, gpointer data) {
    (void)b;
    if (dialog.button) dialog.button(dialog.context, (int32_t)(intptr_t)data);
}

static gboolean on_delete(GtkWidget *w, void *event, gpointer data) {
    (void)w; (void)event; (void)data;
    if (dialog.button) dialog.button(dialog.context, KBDBAR_CONSENT_CLOSED);
    return 1;  // Swift quits the loop; the window goes with the process
}

/// GTK's GtkAllocation: where a widget is in its window.
typedef struct { int x, y, width, height; } ConsentAllocation;

/// KBD_BAR_TRACE: where the window and its buttons are, for a test that taps them
/// ("consent-window WIDTH HEIGHT", "consent-button INDEX X Y WIDTH HEIGHT" in the window's
/// coordinates), and "consent-frame MICROSECONDS" once painted.
static void traced_window(GtkWidget *w, ConsentAllocation *a, gpointer data) {
    (void)w; (void)data;
    fprintf(stderr, "consent-window %d %d layer=%d\n", a->width, a->height, dialog.layer);
}

static void traced_button(GtkWidget *b, ConsentAllocation *a, gpointer data) {
    (void)b;
    fprintf(stderr, "consent-button %d %d %d %d %d\n", (int)(intptr_t)data, a->x, a->y, a->width, a->height);
}

static void traced_paint(GdkFrameClock *clock, gpointer data) {
    (void)clock; (void)data;
    if (dialog.painted) return;
    dialog.painted = 1;
    fprintf(stderr, "consent-frame %" PRId64 "\n", g_get_monotonic_time());
}

static void traced_realize(GtkWidget *w, gpointer data) {
    (void)data;
    g_signal_connect_data(gtk_widget_get_frame_clock(w), "after-paint", (GCallback)(traced_paint), NULL, NULL, 0);
}

/// The window: a centred overlay layer surface with the keyboard (exclusive: the next chord
/// comes here, not to the app under it), else a toplevel kept above, centred.
static GtkWidget *consent_window(void) {
    GtkWidget *w = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    gtk_window_set_title(w, "Allow a global shortcut?");
    gtk_window_set_resizable(w, 0);
    if (dialog.layer) {
        gtk_layer_init_for_window(w);
        gtk_layer_set_layer(w, GTK_LAYER_SHELL_LAYER_OVERLAY);
        gtk_layer_set_namespace(w, "kbd-commandd-consent");
        gtk_layer_set_exclusive_zone(w, -1);  // centred on the whole output, whatever the panels
        gtk_layer_set_keyboard_mode(w, GTK_LAYER_SHELL_KEYBOARD_MODE_EXCLUSIVE);
    } else {
        gtk_window_set_position(w, GTK_WIN_POS_CENTER);
        gtk_window_set_keep_above(w, 1);
    }
    style(w, "kbd-consent");
    gtk_container_set_border_width(w, 18);
    g_signal_connect_data(w, "key-press-event", (GCallback)(on_key), NULL, NULL, 0);
    g_signal_connect_data(w, "key-release-event", (GCallback)(on_key), NULL, NULL, 0);
    g_signal_connect_data(w, "delete-event", (GCallback)(on_delete), NULL, NULL, 0);
    if (dialog.trace) {
        g_signal_connect_data(w, "size-allocate", (GCallback)(traced_window), NULL, NULL, 0);
        g_signal_connect_data(w, "realize", (GCallback)(traced_realize), NULL, NULL, 0);
    }
    return w;
}

static GtkWidget *text(GtkWidget *box, const char *s, const char *css_class) {
    GtkWidget *l = gtk_label_new(s);
    gtk_label_set_line_wrap(l, 1);
    gtk_label_set_max_width_chars(l, 48);
    gtk_label_set_xalign(l, 0);
    if (css_class) style(l, css_class);
    gtk_box_pack_start(box, l, 0, 0, 0);
    return l;
}

static GtkWidget *button(GtkWidget *row, const char *label, int index) {
    GtkWidget *b = gtk_button_new_with_label(label);
    g_signal_connect_data(b, "clicked", (GCallback)(on_clicked), (gpointer)(intptr_t)index, NULL, 0);
    if (dialog.trace) g_signal_connect_data(b, "size-allocate", (GCallback)(traced_button), (gpointer)(intptr_t)index, NULL, 0);
    gtk_box_pack_start(row, b, 1, 1, 0);
    return b;
}

void kbdbar_consent_show(const char *title, const char *description, const char *conflict) {
    dialog.window = consent_window();
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_container_add(dialog.window, box);
    text(box, title, "heading");
    if (description && *description) text(box, description, NULL);
    dialog.chord = text(box, "", "chord");
    gtk_label_set_xalign(dialog.chord, 0.5f);
    if (conflict && *conflict) text(box, conflict, "conflict");
    dialog.hint = text(box, "", "hint");
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
    gtk_box_pack_start(box, row, 0, 0, 6);
    dialog.allow = button(row, "Allow", KBDBAR_CONSENT_ALLOW);
    button(row, "Use another chord…", KBDBAR_CONSENT_ANOTHER);
    dialog.refuse = button(row, "Refuse", KBDBAR_CONSENT_REFUSE);
    gtk_widget_show_all(dialog.window);
    // Return or Space as the dialog appears (the person was typing elsewhere) refuses.
    gtk_widget_grab_focus(dialog.refuse);
    gtk_window_present(dialog.window);
}

void kbdbar_consent_chord(const char *chord, const char *hint, int allow) {
    gtk_label_set_text(dialog.chord, chord);
    gtk_label_set_text(dialog.hint, hint);
    gtk_widget_set_sensitive(dialog.allow, allow);
    if (dialog.trace) fprintf(stderr, "consent-state allow=%d\n", allow);
}
