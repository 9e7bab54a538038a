#!/bin/bash
# The bar's two toolkit options side by side (issue 28, BENCHMARKS.md): builds gtk.c (GTK 3
# + gtk-layer-shell) and raw.c (libwayland-client + zwlr_layer_shell_v1 + cairo/pango,
# like wvkbd) and runs each RUNS times (default 5) in a fresh headless sway: time from
# exec to the first frame committed, and RSS / PSS (smaps_rollup) one second after it.
# Prints a table. Root; tests-desktop/setup-host.sh first.
#
#   tests-desktop/bar-toolkits/measure.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
desktop=$(cd "$here/.." && pwd)
. "$desktop/lib.sh"
[ "$(id -u)" = 0 ] || die "run as root (the session runs as $KBD_USER)"
SESSION_DIR=$(mktemp -d /tmp/kbd-desktop-toolkits.XXXXXX)
chmod 755 "$SESSION_DIR"
export SESSION_DIR
RUNTIME_DIR=$SESSION_DIR/runtime
ENV_FILE=$RUNTIME_DIR/session.env
trap '"$desktop/session.sh" stop >/dev/null 2>&1 || true; rm -rf "$SESSION_DIR"' EXIT
b=$SESSION_DIR/bin
mkdir -p "$b"
wayland-scanner client-header "$desktop/protocols/wlr-layer-shell-unstable-v1.xml" "$b/wlr-layer-shell-unstable-v1-client-protocol.h"
wayland-scanner private-code "$desktop/protocols/wlr-layer-shell-unstable-v1.xml" "$b/wlr-layer-shell-unstable-v1-protocol.c"
# layer-shell's popups are xdg_popups: its code names xdg-shell's interfaces (wayland-protocols).
wayland-scanner private-code /usr/share/wayland-protocols/stable/xdg-shell/xdg-shell.xml "$b/xdg-shell-protocol.c"
# shellcheck disable=SC2046
cc -O2 -o "$b/toolkit-gtk" "$here/gtk.c" $(pkg-config --cflags --libs gtk+-3.0 gtk-layer-shell-0)
# shellcheck disable=SC2046
cc -O2 -I"$b" -o "$b/toolkit-raw" "$here/raw.c" "$b/wlr-layer-shell-unstable-v1-protocol.c" "$b/xdg-shell-protocol.c" \
    $(pkg-config --cflags --libs wayland-client cairo pangocairo)
chmod -R a+rX "$SESSION_DIR"
"$desktop/session.sh" start >/dev/null 2>&1
runs=${RUNS:-5}
echo "| option | first frame (ms, median of $runs) | RSS KiB | PSS KiB | shared libraries mapped |"
echo "|---|---|---|---|---|"
for option in gtk raw; do
    times=() rss=0 pss=0 libs=0
    for _ in $(seq "$runs"); do
        out=$SESSION_DIR/$option.out
        rm -f "$out"  # never the line of the run before
        t0=$(date +%s.%N)
        spawn_as_user "$out" "$b/toolkit-$option"
        pid=$SPAWNED_PID
        wait_for 10 grep -q '^first-frame' "$out" || { cat "$out" >&2; die "$option: no first frame"; }
        t1=$(awk '/^first-frame/ { print $2 }' "$out")
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')")
        sleep 1
        rss=$(awk '/^Rss:/ { print $2 }' "/proc/$pid/smaps_rollup")
        pss=$(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup")
        libs=$(awk '$6 ~ /\.so/ { print $6 }' "/proc/$pid/maps" | sort -u | wc -l)
        kill "$pid"; wait "$pid" 2>/dev/null || true
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    echo "| $option | $median (all: ${times[*]}) | $rss | $pss | $libs |"
done
