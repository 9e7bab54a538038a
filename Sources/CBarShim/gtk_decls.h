// The GTK 3, GDK, GLib, GObject, cairo, Pango and gtk-layer-shell functions the shim calls,
// declared here (types opaque) instead of including their headers: GTK's pkg-config flags
// carry -pthread, which SwiftPM refuses with a warning, and its include paths name the
// architecture. The libraries are linked by name (Package.swift). The values of the enums
// are those of GTK 3.24 and gtk-layer-shell 0.8 (stable ABI).
#ifndef KBD_BAR_GTK_DECLS_H
#define KBD_BAR_GTK_DECLS_H
#include <stdint.h>

typedef struct _GtkWidget GtkWidget;
typedef struct _GtkCssProvider GtkCssProvider;
typedef struct _GtkStyleContext GtkStyleContext;
typedef struct _GdkScreen GdkScreen;
typedef struct _GdkVisual GdkVisual;
typedef struct _GdkFrameClock GdkFrameClock;
typedef struct _GdkDisplay GdkDisplay;
typedef struct _GdkMonitor GdkMonitor;
typedef struct _GList { void *data; struct _GList *next, *prev; } GList;
typedef struct _cairo_region cairo_region_t;
typedef int gboolean;
typedef unsigned int guint;
typedef void *gpointer;
typedef void (*GCallback)(void);
typedef gboolean (*GSourceFunc)(gpointer data);
typedef gboolean (*GUnixFDSourceFunc)(int fd, unsigned int condition, gpointer data);

enum { GTK_WINDOW_TOPLEVEL = 0 };
enum { GTK_ORIENTATION_HORIZONTAL = 0, GTK_ORIENTATION_VERTICAL = 1 };
enum { GTK_ALIGN_START = 1, GTK_ALIGN_END = 2, GTK_ALIGN_CENTER = 3 };
enum { GTK_RELIEF_NONE = 2 };
enum { GTK_POLICY_NEVER = 2, GTK_POLICY_EXTERNAL = 3 };
enum { GTK_SHADOW_NONE = 0 };
enum { PANGO_ELLIPSIZE_END = 3 };
enum { GTK_STYLE_PROVIDER_PRIORITY_APPLICATION = 600 };
enum { G_IO_IN = 1, G_IO_ERR = 8, G_IO_HUP = 16 };
enum { GTK_LAYER_SHELL_LAYER_BOTTOM = 1, GTK_LAYER_SHELL_LAYER_TOP = 2, GTK_LAYER_SHELL_LAYER_OVERLAY = 3 };
enum { GTK_LAYER_SHELL_EDGE_LEFT = 0, GTK_LAYER_SHELL_EDGE_RIGHT = 1, GTK_LAYER_SHELL_EDGE_TOP = 2, GTK_LAYER_SHELL_EDGE_BOTTOM = 3 };
enum { GTK_LAYER_SHELL_KEYBOARD_MODE_NONE = 0 };

void gdk_set_allowed_backends(const char *backends);
gboolean gtk_init_check(int *argc, char ***argv);
void gtk_main(void);
void gtk_main_quit(void);
GdkScreen *gdk_screen_get_default(void);
GdkVisual *gdk_screen_get_rgba_visual(GdkScreen *screen);
GdkFrameClock *gtk_widget_get_frame_clock(GtkWidget *widget);

GtkWidget *gtk_window_new(int type);
void gtk_window_set_accept_focus(GtkWidget *window, gboolean setting);
void gtk_window_set_focus_on_map(GtkWidget *window, gboolean setting);
void gtk_window_resize(GtkWidget *window, int width, int height);
GtkWidget *gtk_box_new(int orientation, int spacing);
void gtk_box_pack_start(GtkWidget *box, GtkWidget *child, gboolean expand, gboolean fill, guint padding);
GtkWidget *gtk_grid_new(void);
void gtk_grid_attach(GtkWidget *grid, GtkWidget *child, int left, int top, int width, int height);
void gtk_grid_set_column_spacing(GtkWidget *grid, guint spacing);
void gtk_grid_set_row_spacing(GtkWidget *grid, guint spacing);
GtkWidget *gtk_label_new(const char *text);
void gtk_label_set_ellipsize(GtkWidget *label, int mode);
void gtk_label_set_max_width_chars(GtkWidget *label, int n_chars);
GtkWidget *gtk_bin_get_child(GtkWidget *bin);
GtkWidget *gtk_scrolled_window_new(void *hadjustment, void *vadjustment);
void gtk_scrolled_window_set_policy(GtkWidget *scrolled_window, int hscrollbar_policy, int vscrollbar_policy);
GtkWidget *gtk_viewport_new(void *hadjustment, void *vadjustment);
void gtk_viewport_set_shadow_type(GtkWidget *viewport, int type);
typedef struct _PangoLayout PangoLayout;
enum { GTK_SCROLL_NATURAL = 1 };
void gtk_scrollable_set_hscroll_policy(GtkWidget *scrollable, int policy);
PangoLayout *gtk_widget_create_pango_layout(GtkWidget *widget, const char *text);
void pango_layout_get_pixel_size(PangoLayout *layout, int *width, int *height);
GdkDisplay *gdk_display_get_default(void);
GdkMonitor *gdk_display_get_monitor(GdkDisplay *display, int monitor_num);
void gdk_monitor_get_geometry(GdkMonitor *monitor, void *geometry);
GtkWidget *gtk_button_new_with_label(const char *label);
void gtk_button_set_relief(GtkWidget *button, int relief);
void gtk_container_add(GtkWidget *container, GtkWidget *widget);
GList *gtk_container_get_children(GtkWidget *container);
void g_list_free(GList *list);
void gtk_widget_destroy(GtkWidget *widget);
void gtk_widget_show_all(GtkWidget *widget);
void gtk_widget_hide(GtkWidget *widget);
void gtk_widget_queue_draw(GtkWidget *widget);
void gtk_widget_set_size_request(GtkWidget *widget, int width, int height);
void gtk_widget_set_halign(GtkWidget *widget, int align);
void gtk_widget_set_can_focus(GtkWidget *widget, gboolean can_focus);
void gtk_widget_set_tooltip_text(GtkWidget *widget, const char *text);
void gtk_widget_set_app_paintable(GtkWidget *widget, gboolean app_paintable);
void gtk_widget_set_visual(GtkWidget *widget, GdkVisual *visual);
void gtk_widget_input_shape_combine_region(GtkWidget *widget, cairo_region_t *region);
GtkStyleContext *gtk_widget_get_style_context(GtkWidget *widget);
void gtk_style_context_add_class(GtkStyleContext *context, const char *class_name);
GtkCssProvider *gtk_css_provider_new(void);
gboolean gtk_css_provider_load_from_data(GtkCssProvider *provider, const char *data, long length, void **error);
void gtk_style_context_add_provider_for_screen(GdkScreen *screen, GtkCssProvider *provider, guint priority);

unsigned long g_signal_connect_data(gpointer instance, const char *signal, GCallback handler, gpointer data, void *destroy, int flags);
void g_object_unref(gpointer object);
guint g_idle_add(GSourceFunc function, gpointer data);
guint g_unix_fd_add(int fd, unsigned int condition, GUnixFDSourceFunc function, gpointer data);
guint g_unix_signal_add(int signum, GSourceFunc handler, gpointer data);
guint g_timeout_add(guint interval, GSourceFunc function, gpointer data);
gboolean g_source_remove(guint tag);
int64_t g_get_monotonic_time(void);

cairo_region_t *cairo_region_create(void);
void cairo_region_destroy(cairo_region_t *region);

gboolean gtk_layer_is_supported(void);
void gtk_layer_init_for_window(GtkWidget *window);
void gtk_layer_set_layer(GtkWidget *window, int layer);
void gtk_layer_set_namespace(GtkWidget *window, const char *name_space);
void gtk_layer_set_anchor(GtkWidget *window, int edge, gboolean anchor_to_edge);
void gtk_layer_set_exclusive_zone(GtkWidget *window, int exclusive_zone);
void gtk_layer_set_keyboard_mode(GtkWidget *window, int mode);

// The consent dialog's (consent.c).
typedef struct _GdkWindow GdkWindow;
typedef struct _GdkKeymap GdkKeymap;
/// GdkEventKey of GTK 3 (a stable ABI): the fields the dialog reads.
typedef struct {
    int type;
    GdkWindow *window;
    signed char send_event;
    uint32_t time;
    guint state;
    guint keyval;
    int length;
    char *string;
    uint16_t hardware_keycode;
    uint8_t group;
    guint is_modifier : 1;
} GdkEventKeyView;
enum { GDK_KEY_PRESS = 8, GDK_KEY_RELEASE = 9 };
enum { GTK_WIN_POS_CENTER = 1 };
enum { GTK_LAYER_SHELL_KEYBOARD_MODE_EXCLUSIVE = 1 };
void gtk_window_set_title(GtkWidget *window, const char *title);
void gtk_window_set_position(GtkWidget *window, int position);
void gtk_window_set_keep_above(GtkWidget *window, gboolean setting);
void gtk_window_set_resizable(GtkWidget *window, gboolean resizable);
void gtk_window_present(GtkWidget *window);
void gtk_widget_set_sensitive(GtkWidget *widget, gboolean sensitive);
void gtk_widget_grab_focus(GtkWidget *widget);
void gtk_label_set_text(GtkWidget *label, const char *text);
void gtk_label_set_line_wrap(GtkWidget *label, gboolean wrap);
void gtk_label_set_xalign(GtkWidget *label, float xalign);
void gtk_container_set_border_width(GtkWidget *container, guint border_width);
GdkKeymap *gdk_keymap_get_for_display(GdkDisplay *display);
gboolean gdk_keymap_translate_keyboard_state(GdkKeymap *keymap, guint hardware_keycode, guint state, int group,
                                             guint *keyval, int *effective_group, int *level, guint *consumed);
#endif
