// A verbatim copy of the project's shared benchmark floor (shared/bench/replay_floor.c), built
// here so kbd-bench can run it side by side with replay in one run. Keep it identical.
// replay_floor: the C floor for replaying an evemu recording through libxkbcommon.
// Streams the file, parses E: lines, and for EV_KEY: keysym + UTF-8 (before the update), then
// xkb_state_update_key on press/release (not on repeat). Prints a checksum and ns/event.
// build: cc -O2 -o replay_floor replay_floor.c $(pkg-config --cflags --libs xkbcommon)
// usage: replay_floor FILE [layout] [options]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xkbcommon/xkbcommon.h>
static unsigned long hex(const char **p) { unsigned long v = 0; while (**p == ' ') (*p)++;
  for (;;) { char c = **p; int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) break; v = v * 16 + d; (*p)++; } return v; }
static long dec(const char **p) { long v = 0, s = 1; while (**p == ' ') (*p)++; if (**p == '-') { s = -1; (*p)++; }
  while (**p >= '0' && **p <= '9') { v = v * 10 + (**p - '0'); (*p)++; } return s * v; }
int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s FILE [layout] [options]\n", argv[0]); return 2; }
  struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
  struct xkb_context *ctx = xkb_context_new(XKB_CONTEXT_NO_ENVIRONMENT_NAMES);
  struct xkb_rule_names n = { "evdev", "pc105", argc > 2 ? argv[2] : "us", "", argc > 3 ? argv[3] : "" };
  struct xkb_keymap *km = xkb_keymap_new_from_names(ctx, &n, 0);
  if (!km) { fprintf(stderr, "keymap failed\n"); return 1; }
  struct xkb_state *st = xkb_state_new(km);
  FILE *f = fopen(argv[1], "r"); if (!f) { perror(argv[1]); return 1; }
  static char line[4096]; char buf[64]; unsigned long sum = 0, events = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] != 'E' || line[1] != ':') continue;
    const char *p = line + 2; while (*p == ' ') p++;
    while (*p && *p != ' ') p++;               // time
    unsigned type = hex(&p), code = hex(&p); long value = dec(&p);
    events++;
    if (type != 1) continue;
    xkb_keycode_t kc = code + 8;
    xkb_keysym_t sym = xkb_state_key_get_one_sym(st, kc);
    int len = xkb_state_key_get_utf8(st, kc, buf, sizeof buf);
    sum += sym + (len > 0 ? (unsigned char)buf[0] : 0);
    if (value != 2) xkb_state_update_key(st, kc, value ? XKB_KEY_DOWN : XKB_KEY_UP);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
  printf("events %lu checksum %lu total_ms %.1f ns_per_event %.1f\n", events, sum, ns / 1e6, ns / (events ? events : 1));
  return 0;
}
