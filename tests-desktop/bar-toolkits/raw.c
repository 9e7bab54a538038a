/* Option (b) of the bar's toolkit measurement (issue 28): libwayland-client +
 * zwlr_layer_shell_v1 + cairo/pango, as wvkbd is built. The same surface as gtk.c: bottom
 * anchored, 40 px high, exclusive zone 40, keyboard interactivity none, six labelled
 * buttons drawn with pango into a wl_shm buffer. Prints "first-frame T" (CLOCK_REALTIME)
 * when the first buffer is committed, then idles until killed. */
#define _GNU_SOURCE
#include <cairo.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>
#include "wlr-layer-shell-unstable-v1-client-protocol.h"

static struct wl_compositor *compositor;
static struct wl_shm *shm;
static struct zwlr_layer_shell_v1 *layer_shell;
static struct wl_surface *surface;
static struct wl_display *display;

static void global(void *d, struct wl_registry *r, uint32_t name, const char *iface, uint32_t v) {
    (void)d; (void)v;
    if (!strcmp(iface, wl_compositor_interface.name)) compositor = wl_registry_bind(r, name, &wl_compositor_interface, 4);
    else if (!strcmp(iface, wl_shm_interface.name)) shm = wl_registry_bind(r, name, &wl_shm_interface, 1);
    else if (!strcmp(iface, zwlr_layer_shell_v1_interface.name)) layer_shell = wl_registry_bind(r, name, &zwlr_layer_shell_v1_interface, 1);
}
static void global_remove(void *d, struct wl_registry *r, uint32_t name) { (void)d; (void)r; (void)name; }
static const struct wl_registry_listener registry_listener = {global, global_remove};

static void draw(uint32_t width, uint32_t height) {
    int stride = (int)width * 4, size = stride * (int)height;
    int fd = memfd_create("bar", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, size) < 0) exit(1);
    void *data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    struct wl_shm_pool *pool = wl_shm_create_pool(shm, fd, size);
    struct wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, (int)width, (int)height, stride, WL_SHM_FORMAT_ARGB8888);
    cairo_surface_t *cs = cairo_image_surface_create_for_data(data, CAIRO_FORMAT_ARGB32, (int)width, (int)height, stride);
    cairo_t *cr = cairo_create(cs);
    cairo_set_source_rgb(cr, 0.93, 0.93, 0.93);
    cairo_paint(cr);
    PangoLayout *layout = pango_cairo_create_layout(cr);
    PangoFontDescription *font = pango_font_description_from_string("Sans 11");
    pango_layout_set_font_description(layout, font);
    const char *labels[] = {"Save", "Undo", "Redo", "Find", "Copy", "Paste"};
    double x = 4;
    for (int i = 0; i < 6; i++) {
        pango_layout_set_text(layout, labels[i], -1);
        int w, h;
        pango_layout_get_pixel_size(layout, &w, &h);
        cairo_set_source_rgb(cr, 0.8, 0.8, 0.8);
        cairo_rectangle(cr, x, 4, w + 16, height - 8);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, x + 8, (height - h) / 2.0);
        pango_cairo_show_layout(cr, layout);
        x += w + 20;
    }
    cairo_destroy(cr);
    cairo_surface_destroy(cs);
    wl_surface_attach(surface, buffer, 0, 0);
    wl_surface_damage(surface, 0, 0, (int)width, (int)height);
    wl_surface_commit(surface);
    wl_display_flush(display);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    printf("first-frame %ld.%09ld\n", (long)ts.tv_sec, ts.tv_nsec);
    fflush(stdout);
    wl_shm_pool_destroy(pool);
    close(fd);
}

static void configure(void *d, struct zwlr_layer_surface_v1 *ls, uint32_t serial, uint32_t w, uint32_t h) {
    (void)d;
    zwlr_layer_surface_v1_ack_configure(ls, serial);
    draw(w, h);
}
static void closed(void *d, struct zwlr_layer_surface_v1 *ls) { (void)d; (void)ls; exit(0); }
static const struct zwlr_layer_surface_v1_listener layer_listener = {configure, closed};

int main(void) {
    display = wl_display_connect(NULL);
    if (!display) return 1;
    struct wl_registry *registry = wl_display_get_registry(display);
    wl_registry_add_listener(registry, &registry_listener, NULL);
    wl_display_roundtrip(display);
    if (!layer_shell) { fprintf(stderr, "no layer-shell\n"); return 2; }
    surface = wl_compositor_create_surface(compositor);
    struct zwlr_layer_surface_v1 *ls = zwlr_layer_shell_v1_get_layer_surface(layer_shell, surface, NULL, ZWLR_LAYER_SHELL_V1_LAYER_BOTTOM, "bar");
    zwlr_layer_surface_v1_set_anchor(ls, ZWLR_LAYER_SURFACE_V1_ANCHOR_BOTTOM | ZWLR_LAYER_SURFACE_V1_ANCHOR_LEFT | ZWLR_LAYER_SURFACE_V1_ANCHOR_RIGHT);
    zwlr_layer_surface_v1_set_size(ls, 0, 40);
    zwlr_layer_surface_v1_set_exclusive_zone(ls, 40);
    zwlr_layer_surface_v1_set_keyboard_interactivity(ls, 0);
    zwlr_layer_surface_v1_add_listener(ls, &layer_listener, NULL);
    wl_surface_commit(surface);
    while (wl_display_dispatch(display) != -1) {}
    return 0;
}
