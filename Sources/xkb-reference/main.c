/*
 * xkb-reference: the minimum work per event, in C, straight on libxkbcommon.
 *
 * Reads the E: lines of an evemu file, and for every EV_KEY event does what
 * libxkbcommon's tools/interactive-evdev.c does: keycode = code + 8, skip
 * repeats of keys the keymap does not repeat, read the keysym and the UTF-8
 * text before updating the state, update the state on press and release.
 *
 * It is two things: the oracle the tests compare kbd-commandd's key events
 * with (--print), and the floor the benchmark measures the Swift pipeline
 * against (no output). It keeps no per-device state beyond one xkb_state and
 * does not validate the file beyond what it needs.
 *
 * usage: xkb-reference [--print] [--layout L] [--variant V] [--options O] FILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xkbcommon/xkbcommon.h>

int main(int argc, char **argv) {
    const char *layout = "us", *variant = "", *options = "", *path = NULL;
    int print = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--print")) print = 1;
        else if (!strcmp(argv[i], "--layout") && i + 1 < argc) layout = argv[++i];
        else if (!strcmp(argv[i], "--variant") && i + 1 < argc) variant = argv[++i];
        else if (!strcmp(argv[i], "--options") && i + 1 < argc) options = argv[++i];
        else path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: xkb-reference [--print] [--layout L] [--variant V] [--options O] FILE\n");
        return 64;
    }
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); return 66; }

    struct xkb_context *ctx = xkb_context_new(XKB_CONTEXT_NO_ENVIRONMENT_NAMES);
    struct xkb_rule_names names = { "evdev", "pc105", layout, variant, options };
    struct xkb_keymap *keymap = xkb_keymap_new_from_names(ctx, &names, XKB_KEYMAP_COMPILE_NO_FLAGS);
    if (!keymap) { fprintf(stderr, "cannot compile keymap\n"); return 78; }
    struct xkb_state *state = xkb_state_new(keymap);

    char line[4096], name[64], text[64];
    unsigned char down[768] = {0};
    unsigned long events = 0, keys = 0, checksum = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] != 'E' || line[1] != ':') continue;
        /* E: sec.usec type code value */
        char *p = line + 2;
        unsigned long sec = strtoul(p, &p, 10);
        unsigned long usec = strtoul(p + 1, &p, 10);
        unsigned type = (unsigned)strtoul(p, &p, 16);
        unsigned code = (unsigned)strtoul(p, &p, 16);
        long value = strtol(p, &p, 10);
        events++;
        if (type != 1 || code >= 768) continue;
        xkb_keycode_t kc = code + 8;
        /* the same transition rules as kbd-commandd: no double press, no release or repeat of a key that is up */
        if (value == 1 && down[code]) continue;
        if (value != 1 && !down[code]) continue;
        if (value == 2 && !xkb_keymap_key_repeats(keymap, kc)) continue;
        xkb_keysym_t sym = xkb_state_key_get_one_sym(state, kc);
        int n = xkb_state_key_get_utf8(state, kc, text, sizeof text);
        keys++;
        checksum += sym + (unsigned long)n;
        if (print) {
            xkb_keysym_get_name(sym, name, sizeof name);
            printf("%lu.%06lu %u %s %s %s %u\n", sec, usec, code,
                   value == 0 ? "release" : value == 1 ? "press" : "repeat", name, text,
                   xkb_state_serialize_layout(state, XKB_STATE_LAYOUT_EFFECTIVE));
        }
        if (value == 1) { down[code] = 1; xkb_state_update_key(state, kc, XKB_KEY_DOWN); }
        else if (value == 0) { down[code] = 0; xkb_state_update_key(state, kc, XKB_KEY_UP); }
    }
    if (!print) printf("events=%lu keys=%lu checksum=%lu\n", events, keys, checksum);
    xkb_state_unref(state);
    xkb_keymap_unref(keymap);
    xkb_context_unref(ctx);
    fclose(f);
    return 0;
}
