// The shortcuts bar's toolkit shim: the few GTK 3 + gtk-layer-shell calls the bar makes,
// behind plain C functions (GTK's casts and signal macros do not cross into Swift). It
// draws what it is told and reports taps; what to show and when is decided in Swift
// (KbdBar). One bar per process: the shim keeps its widgets in one static struct.
#ifndef KBD_BAR_SHIM_H
#define KBD_BAR_SHIM_H
#include <stdint.h>

/// kbdbar_init's results.
enum {
    KBDBAR_OK = 0,
    KBDBAR_NO_DISPLAY = 1,      // no Wayland display to connect to
    KBDBAR_NO_LAYER_SHELL = 2,  // the compositor has no zwlr_layer_shell_v1 (GNOME's Mutter)
};

typedef void (*kbdbar_event_cb)(void *context);
typedef void (*kbdbar_tap_cb)(void *context, int32_t index);
typedef void (*kbdbar_width_cb)(void *context, int32_t width);

/// Connects to the display (GDK_BACKEND=wayland) and checks for layer-shell.
int kbdbar_init(void);
/// The callbacks: a tap on toolbar button `index` (-1: the More button), the watched
/// descriptor readable (or hung up), the one-shot timer fired, the toolbar's surface got a
/// new width (called from an idle callback, never while GTK lays the bar out).
void kbdbar_set_callbacks(void *context, kbdbar_tap_cb tap, kbdbar_event_cb readable, kbdbar_event_cb timer,
                          kbdbar_width_cb resized);
/// Watches one descriptor (replacing the one watched before); -1 stops watching.
void kbdbar_watch(int fd);
/// Arms the one-shot timer (replacing an armed one); a negative value disarms it.
void kbdbar_arm_timer(int32_t milliseconds);

/// The toolbar: cleared, then filled with groups and buttons, then shown or hidden. Its
/// exclusive zone is its height: windows move out of its way while it is shown. Its content
/// never widens its surface (a viewport with no scrollbar): what does not fit is cut off,
/// and labels are ellipsized past 24 characters.
void kbdbar_toolbar_begin(int32_t height);
void kbdbar_toolbar_group(const char *title);
void kbdbar_toolbar_button(const char *label, const char *tooltip, int32_t index);
void kbdbar_toolbar_show(int visible);
/// How wide `text` is drawn on a button's label, in pixels (GTK's font for the screen).
int32_t kbdbar_text_width(const char *text);
/// The first output's width in pixels (0 when GDK knows no output yet).
int32_t kbdbar_output_width(void);

/// The HUD: a centred overlay (no input, no keyboard focus), cleared and filled the same way.
void kbdbar_hud_begin(const char *heading);
void kbdbar_hud_group(const char *title);
void kbdbar_hud_row(const char *chord, const char *title, int dimmed);
void kbdbar_hud_show(int visible);

/// Runs the main loop until SIGTERM, SIGINT or kbdbar_quit.
void kbdbar_run(void);
void kbdbar_quit(void);
/// CLOCK_MONOTONIC in microseconds (GLib's clock, the one KBD_BAR_TRACE's lines use).
int64_t kbdbar_monotonic_us(void);

/// The consent dialog (`kbd-commandd-bar --consent`, consent.c): a process of its own, one
/// dialog. A centred overlay layer surface taking the keyboard (exclusive), or a normal
/// toplevel where the compositor has no layer-shell (or on X11).
enum {
    KBDBAR_CONSENT_ALLOW = 0,
    KBDBAR_CONSENT_ANOTHER = 1,
    KBDBAR_CONSENT_REFUSE = 2,
    KBDBAR_CONSENT_CLOSED = -1,  // the window was closed
};
/// A key event while the dialog has the keyboard: `pressed` 1 or 0, the keyval at the key's
/// first level of its group (the service's chord key), GDK's modifier state before the key.
/// Returns 1 when the key was taken (not passed on to the buttons).
typedef int (*kbdbar_key_cb)(void *context, int32_t pressed, uint32_t keyval, uint32_t state);
/// Connects to the display (Wayland, else X11): KBDBAR_OK or KBDBAR_NO_DISPLAY.
int kbdbar_consent_init(void);
/// The callbacks: a button (KBDBAR_CONSENT_*), a key, the timer (kbdbar_consent_arm).
void kbdbar_consent_set_callbacks(void *context, kbdbar_tap_cb button, kbdbar_key_cb key, kbdbar_event_cb timer);
/// Builds and shows the dialog; `conflict` NULL for none. Refuse has the focus (Return refuses).
void kbdbar_consent_show(const char *title, const char *description, const char *conflict);
/// The chord shown, the hint under it, and whether Allow may be pressed.
void kbdbar_consent_chord(const char *chord, const char *hint, int allow);
/// Arms the one-shot timer (the timeout).
void kbdbar_consent_arm(int32_t milliseconds);
#endif
