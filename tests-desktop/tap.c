/* tap X Y [WIDTH HEIGHT]: a tap of the first mouse button at (X, Y) of the output, through
 * a virtual pointer (zwlr_virtual_pointer_v1, which sway and other wlroots compositors
 * offer). The headless test session has no pointer device at all (no libinput devices), so
 * `swaymsg seat … cursor press` reaches no client; a virtual pointer is a real pointer
 * device of the seat. WIDTH and HEIGHT are the output's (default 1024 768). Exit 0 when
 * the compositor took the events, 2 without the protocol. Test tooling (bar-e2e.sh builds
 * it), not the product. */
#include <linux/input-event-codes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wayland-client.h>
#include "wlr-virtual-pointer-unstable-v1-client-protocol.h"

static struct zwlr_virtual_pointer_manager_v1 *manager;
static struct wl_seat *seat;

static void global(void *d, struct wl_registry *r, uint32_t name, const char *iface, uint32_t v) {
    (void)d; (void)v;
    if (!strcmp(iface, zwlr_virtual_pointer_manager_v1_interface.name))
        manager = wl_registry_bind(r, name, &zwlr_virtual_pointer_manager_v1_interface, 1);
    else if (!strcmp(iface, wl_seat_interface.name) && !seat)
        seat = wl_registry_bind(r, name, &wl_seat_interface, 1);
}
static void global_remove(void *d, struct wl_registry *r, uint32_t name) { (void)d; (void)r; (void)name; }
static const struct wl_registry_listener listener = {global, global_remove};

static uint32_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void pause_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 5) { fprintf(stderr, "usage: tap X Y [WIDTH HEIGHT]\n"); return 64; }
    uint32_t x = (uint32_t)atoi(argv[1]), y = (uint32_t)atoi(argv[2]);
    uint32_t w = argc == 5 ? (uint32_t)atoi(argv[3]) : 1024, h = argc == 5 ? (uint32_t)atoi(argv[4]) : 768;
    struct wl_display *display = wl_display_connect(NULL);
    if (!display) { fprintf(stderr, "tap: no Wayland display\n"); return 1; }
    struct wl_registry *registry = wl_display_get_registry(display);
    wl_registry_add_listener(registry, &listener, NULL);
    wl_display_roundtrip(display);
    if (!manager) { fprintf(stderr, "tap: the compositor has no zwlr_virtual_pointer_manager_v1\n"); return 2; }
    struct zwlr_virtual_pointer_v1 *pointer = zwlr_virtual_pointer_manager_v1_create_virtual_pointer(manager, seat);
    wl_display_roundtrip(display);
    // The new device first: the client under the cursor gets wl_pointer.enter on the motion.
    pause_ms(100);
    zwlr_virtual_pointer_v1_motion_absolute(pointer, now_ms(), x, y, w, h);
    zwlr_virtual_pointer_v1_frame(pointer);
    wl_display_roundtrip(display);
    pause_ms(100);
    zwlr_virtual_pointer_v1_button(pointer, now_ms(), BTN_LEFT, WL_POINTER_BUTTON_STATE_PRESSED);
    zwlr_virtual_pointer_v1_frame(pointer);
    wl_display_roundtrip(display);
    pause_ms(50);
    zwlr_virtual_pointer_v1_button(pointer, now_ms(), BTN_LEFT, WL_POINTER_BUTTON_STATE_RELEASED);
    zwlr_virtual_pointer_v1_frame(pointer);
    wl_display_roundtrip(display);
    pause_ms(100);
    zwlr_virtual_pointer_v1_destroy(pointer);
    wl_display_roundtrip(display);
    wl_display_disconnect(display);
    return 0;
}
