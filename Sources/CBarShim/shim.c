// The shortcuts bar's toolkit shim (see include/bar_shim.h): GTK 3 + gtk-layer-shell.
#include "bar_shim.h"
#include "gtk_decls.h"
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    void *context;
    kbdbar_tap_cb tap;
    kbdbar_event_cb readable, timer;
    kbdbar_width_cb resized;
    guint watch, timeout, resize_idle;
    int toolbar_width, reported_width;
    GtkWidget *toolbar, *toolbar_box;
    GtkWidget *hud, *hud_box, *hud_grid;
    int hud_column, hud_row, trace, hud_traced, toolbar_traced;
} bar;

static const char *css =
    "window.kbd-bar { background-color: rgba(40, 40, 44, 0.96); }\n"
    "window.kbd-bar button { padding: 2px 10px; margin: 6px 2px; color: #f2f2f2; background: #4a4a52; border: none; box-shadow: none; }\n"
    "window.kbd-bar label.group { color: #9a9aa6; margin: 0 4px 0 14px; font-size: smaller; }\n"
    "window.kbd-bar scrolledwindow, window.kbd-bar viewport { background-color: transparent; border: none; box-shadow: none; }\n"
    "window.kbd-hud { background-color: transparent; }\n"
    "box.kbd-hud-panel { background-color: rgba(30, 30, 34, 0.94); border-radius: 14px; padding: 18px 24px; }\n"
    "box.kbd-hud-panel label { color: #f2f2f2; }\n"
    "box.kbd-hud-panel label.heading { font-weight: bold; margin-bottom: 10px; }\n"
    "box.kbd-hud-panel label.group { color: #9a9aa6; font-weight: bold; margin-top: 8px; }\n"
    "box.kbd-hud-panel label.chord { font-family: monospace; margin-left: 18px; }\n"
    "box.kbd-hud-panel label.dim { color: #75757e; }\n";

static void css_class(GtkWidget *w, const char *name) { gtk_style_context_add_class(gtk_widget_get_style_context(w), name); }

static void traced_paint(GdkFrameClock *clock, gpointer data) {
    (void)clock;
    int *flag = data;
    if (*flag) return;
    *flag = 1;
    fprintf(stderr, "%s-frame %" PRId64 "\n", flag == &bar.hud_traced ? "hud" : "toolbar", g_get_monotonic_time());
}

static void realized(GtkWidget *w, gpointer data) {
    if (bar.trace) g_signal_connect_data(gtk_widget_get_frame_clock(w), "after-paint", (GCallback)(traced_paint), data, NULL, 0);
}

/// Taps go through the HUD to the windows under it: an empty input region, set again each
/// time it is mapped (gtk-layer-shell makes a new surface for every map, and GTK applies
/// the input shape to the surface it has then).
static void hud_mapped(GtkWidget *w, gpointer data) {
    (void)data;
    cairo_region_t *none = cairo_region_create();
    gtk_widget_input_shape_combine_region(w, NULL);
    gtk_widget_input_shape_combine_region(w, none);
    cairo_region_destroy(none);
}

static GtkWidget *layer_window(int layer, const char *namespace, const char *style) {
    GtkWidget *w = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    GtkWidget *win = w;
    gtk_layer_init_for_window(win);
    gtk_layer_set_layer(win, layer);
    gtk_layer_set_namespace(win, namespace);
    gtk_layer_set_keyboard_mode(win, GTK_LAYER_SHELL_KEYBOARD_MODE_NONE);
    gtk_window_set_accept_focus(win, 0);
    gtk_window_set_focus_on_map(win, 0);
    css_class(w, style);
    return w;
}

int kbdbar_init(void) {
    bar.trace = getenv("KBD_BAR_TRACE") != NULL;
    gdk_set_allowed_backends("wayland");
    if (!gtk_init_check(NULL, NULL)) return KBDBAR_NO_DISPLAY;
    if (!gtk_layer_is_supported()) return KBDBAR_NO_LAYER_SHELL;
    GtkCssProvider *provider = gtk_css_provider_new();
    gtk_css_provider_load_from_data(provider, css, -1, NULL);
    gtk_style_context_add_provider_for_screen(gdk_screen_get_default(), provider, GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref(provider);

    bar.toolbar = layer_window(GTK_LAYER_SHELL_LAYER_TOP, "kbd-commandd-bar", "kbd-bar");
    GtkWidget *t = bar.toolbar;
    gtk_layer_set_anchor(t, GTK_LAYER_SHELL_EDGE_BOTTOM, 1);
    gtk_layer_set_anchor(t, GTK_LAYER_SHELL_EDGE_LEFT, 1);
    gtk_layer_set_anchor(t, GTK_LAYER_SHELL_EDGE_RIGHT, 1);
    g_signal_connect_data(bar.toolbar, "realize", (GCallback)(realized), &bar.toolbar_traced, NULL, 0);

    bar.hud = layer_window(GTK_LAYER_SHELL_LAYER_OVERLAY, "kbd-commandd-hud", "kbd-hud");
    gtk_layer_set_exclusive_zone(bar.hud, -1);  // centred on the whole output, whatever the panels
    gtk_widget_set_app_paintable(bar.hud, 1);
    GdkVisual *rgba = gdk_screen_get_rgba_visual(gdk_screen_get_default());
    if (rgba) gtk_widget_set_visual(bar.hud, rgba);
    g_signal_connect_data(bar.hud, "realize", (GCallback)(realized), &bar.hud_traced, NULL, 0);
    g_signal_connect_data(bar.hud, "map", (GCallback)(hud_mapped), NULL, NULL, 0);
    return KBDBAR_OK;
}

void kbdbar_set_callbacks(void *context, kbdbar_tap_cb tap, kbdbar_event_cb readable, kbdbar_event_cb timer,
                          kbdbar_width_cb resized) {
    bar.context = context;
    bar.tap = tap;
    bar.readable = readable;
    bar.timer = timer;
    bar.resized = resized;
}

static gboolean on_readable(int fd, unsigned int condition, gpointer data) {
    (void)fd; (void)condition; (void)data;
    bar.readable(bar.context);
    return 1;
}

void kbdbar_watch(int fd) {
    if (bar.watch) g_source_remove(bar.watch);
    bar.watch = fd >= 0 ? g_unix_fd_add(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_readable, NULL) : 0;
}

static gboolean on_timer(gpointer data) {
    (void)data;
    bar.timeout = 0;
    bar.timer(bar.context);
    return 0;
}

void kbdbar_arm_timer(int32_t milliseconds) {
    if (bar.timeout) g_source_remove(bar.timeout);
    bar.timeout = milliseconds >= 0 ? g_timeout_add((guint)milliseconds, on_timer, NULL) : 0;
}

static void clear(GtkWidget *container) {
    GList *children = gtk_container_get_children(container);
    for (GList *c = children; c; c = c->next) gtk_widget_destroy(c->data);
    g_list_free(children);
}

static GtkWidget *label(const char *text, const char *style) {
    GtkWidget *l = gtk_label_new(text);
    if (style) css_class(l, style);
    return l;
}

/// The toolbar's width, told to Swift from an idle callback: it redraws the buttons, which
/// must not happen while GTK allocates them.
static gboolean report_width(gpointer data) {
    (void)data;
    bar.resize_idle = 0;
    if (bar.toolbar_width != bar.reported_width && bar.resized) {
        bar.reported_width = bar.toolbar_width;
        bar.resized(bar.context, bar.toolbar_width);
    }
    return 0;
}

/// GTK's GtkAllocation (GdkRectangle): where a widget is in its window.
typedef struct { int x, y, width, height; } Allocation;

static void toolbar_allocated(GtkWidget *w, Allocation *a, gpointer data) {
    (void)w; (void)data;
    bar.toolbar_width = a->width;
    if (a->width != bar.reported_width && !bar.resize_idle) bar.resize_idle = g_idle_add(report_width, NULL);
}

void kbdbar_toolbar_begin(int32_t height) {
    if (!bar.toolbar_box) {
        // The buttons sit in a viewport with no scrollbar: however many there are, the bar asks
        // for no more width than the output gives it (300 buttons asked for 38,000 pixels, and
        // cairo, which makes surfaces up to 32,767, could not: SIGSEGV in libgdk). Swift lays
        // out what fits (ToolbarPaging); anything wider is cut off, never a wider surface.
        GtkWidget *scroll = gtk_scrolled_window_new(NULL, NULL);
        gtk_scrolled_window_set_policy(scroll, GTK_POLICY_EXTERNAL, GTK_POLICY_NEVER);
        GtkWidget *viewport = gtk_viewport_new(NULL, NULL);
        gtk_viewport_set_shadow_type(viewport, GTK_SHADOW_NONE);
        // Buttons keep their natural width (the minimum of an ellipsizing label is "…").
        gtk_scrollable_set_hscroll_policy(viewport, GTK_SCROLL_NATURAL);
        bar.toolbar_box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
        gtk_widget_set_halign(bar.toolbar_box, GTK_ALIGN_CENTER);
        gtk_container_add(viewport, bar.toolbar_box);
        gtk_container_add(scroll, viewport);
        gtk_container_add(bar.toolbar, scroll);
        g_signal_connect_data(bar.toolbar, "size-allocate", (GCallback)(toolbar_allocated), NULL, NULL, 0);
    }
    clear(bar.toolbar_box);
    gtk_widget_set_size_request(bar.toolbar, -1, height);
    gtk_layer_set_exclusive_zone(bar.toolbar, height);
}

void kbdbar_toolbar_group(const char *title) {
    if (bar.trace) fprintf(stderr, "toolbar-group %s\n", title);
    gtk_box_pack_start(bar.toolbar_box, label(title, "group"), 0, 0, 0);
}

const char *gtk_button_get_label(GtkWidget *button);

/// KBD_BAR_TRACE: where each button is, for a test that taps it ("toolbar-button INDEX X Y
/// WIDTH HEIGHT LABEL" in the bar's coordinates; the label is a command's title).
static void allocated(GtkWidget *button, Allocation *a, gpointer data) {
    fprintf(stderr, "toolbar-button %d %d %d %d %d %s\n", (int)(intptr_t)data, a->x, a->y, a->width, a->height, gtk_button_get_label(button));
}

static void clicked(GtkWidget *button, gpointer data) {
    (void)button;
    if (bar.tap) bar.tap(bar.context, (int32_t)(intptr_t)data);
}

/// Labels longer than this many characters are ellipsized (Swift cuts titles to 24 already;
/// this bounds what its measure got wrong).
enum { LABEL_CHARS = 24 };

void kbdbar_toolbar_button(const char *text, const char *tooltip, int32_t index) {
    GtkWidget *b = gtk_button_new_with_label(text);
    GtkWidget *l = gtk_bin_get_child(b);
    if (l) {
        gtk_label_set_ellipsize(l, PANGO_ELLIPSIZE_END);
        gtk_label_set_max_width_chars(l, LABEL_CHARS);
    }
    gtk_widget_set_can_focus(b, 0);
    gtk_button_set_relief(b, GTK_RELIEF_NONE);
    if (tooltip && *tooltip) gtk_widget_set_tooltip_text(b, tooltip);
    g_signal_connect_data(b, "clicked", (GCallback)(clicked), (gpointer)(intptr_t)index, NULL, 0);
    if (bar.trace) g_signal_connect_data(b, "size-allocate", (GCallback)(allocated), (gpointer)(intptr_t)index, NULL, 0);
    gtk_box_pack_start(bar.toolbar_box, b, 0, 0, 0);
}

int32_t kbdbar_text_width(const char *text) {
    // The toolbar's font (its style context's), as its buttons' labels draw it.
    PangoLayout *layout = gtk_widget_create_pango_layout(bar.toolbar, text);
    int width = 0, height = 0;
    pango_layout_get_pixel_size(layout, &width, &height);
    g_object_unref(layout);
    return width;
}

int32_t kbdbar_output_width(void) {
    GdkDisplay *display = gdk_display_get_default();
    GdkMonitor *monitor = display ? gdk_display_get_monitor(display, 0) : NULL;
    if (!monitor) return 0;
    Allocation geometry = {0, 0, 0, 0};
    gdk_monitor_get_geometry(monitor, &geometry);
    return geometry.width;
}

void kbdbar_toolbar_show(int visible) {
    if (visible) {
        bar.toolbar_traced = 0;
        gtk_widget_show_all(bar.toolbar);
    } else {
        gtk_widget_hide(bar.toolbar);
    }
}

void kbdbar_hud_begin(const char *heading) {
    if (!bar.hud_box) {
        bar.hud_box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
        css_class(bar.hud_box, "kbd-hud-panel");
        gtk_container_add(bar.hud, bar.hud_box);
    }
    clear(bar.hud_box);
    gtk_box_pack_start(bar.hud_box, label(heading, "heading"), 0, 0, 0);
    bar.hud_grid = gtk_grid_new();
    gtk_grid_set_column_spacing(bar.hud_grid, 12);
    gtk_grid_set_row_spacing(bar.hud_grid, 2);
    gtk_box_pack_start(bar.hud_box, bar.hud_grid, 0, 0, 0);
    bar.hud_column = -2;
    bar.hud_row = 0;
}

/// Groups go in columns of at most this many rows (a new column starts with a group).
enum { HUD_ROWS = 14 };

void kbdbar_hud_group(const char *title) {
    if (bar.hud_column < 0 || bar.hud_row > HUD_ROWS) {
        bar.hud_column += 2;
        bar.hud_row = 0;
    }
    GtkWidget *l = label(title, "group");
    gtk_widget_set_halign(l, GTK_ALIGN_START);
    gtk_grid_attach(bar.hud_grid, l, bar.hud_column, bar.hud_row++, 2, 1);
}

void kbdbar_hud_row(const char *chord, const char *title, int dimmed) {
    if (bar.hud_column < 0) kbdbar_hud_group("");
    // A long group goes on in the next column (Swift bounds the rows to the columns that fit).
    if (bar.hud_row > HUD_ROWS) {
        bar.hud_column += 2;
        bar.hud_row = 0;
    }
    GtkWidget *t = label(title, dimmed ? "dim" : NULL), *c = label(chord, "chord");
    if (dimmed) css_class(c, "dim");
    gtk_widget_set_halign(t, GTK_ALIGN_START);
    gtk_widget_set_halign(c, GTK_ALIGN_END);
    gtk_grid_attach(bar.hud_grid, t, bar.hud_column, bar.hud_row, 1, 1);
    gtk_grid_attach(bar.hud_grid, c, bar.hud_column + 1, bar.hud_row++, 1, 1);
}

void kbdbar_hud_show(int visible) {
    if (visible) {
        bar.hud_traced = 0;
        gtk_widget_show_all(bar.hud);
        // A shown HUD that was refilled is resized to its new content.
        gtk_window_resize(bar.hud, 1, 1);
        gtk_widget_queue_draw(bar.hud);
    } else {
        gtk_widget_hide(bar.hud);
    }
}

static gboolean on_signal(gpointer data) {
    (void)data;
    gtk_main_quit();
    return 1;
}

void kbdbar_run(void) {
    g_unix_signal_add(SIGTERM, on_signal, NULL);
    g_unix_signal_add(SIGINT, on_signal, NULL);
    gtk_main();
}

void kbdbar_quit(void) { gtk_main_quit(); }

int64_t kbdbar_monotonic_us(void) { return g_get_monotonic_time(); }
