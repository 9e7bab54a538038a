#!/bin/bash
# A smoke test of the desktop harness, by hand (root): starts a session with squeekboard,
# hides and shows it through osk-state (its Visible property and a screenshot each time),
# does the same with wvkbd's signals, stops everything and checks that nothing of the
# session's user is left. Screenshots (PNG) go to $SESSION_DIR/shots. Prints the timings.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || die "run as root"
here=$DESKTOP_DIR
failures=0
check() {  # check WHAT EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then echo "ok: $1 ($3)"; else echo "FAIL: $1: expected $2, got $3"; failures=$((failures + 1)); fi
}
stopped=0
cleanup() { [ "$stopped" = 1 ] || "$here/session.sh" stop >/dev/null 2>&1 || true; }
trap cleanup EXIT
shot() { as_user grim - > "$SESSION_DIR/shots/$1.png"; }

t0=$(now_us)
env_file=$("$here/session.sh" start --squeekboard)
start_time=$(since "$t0")
check "session.env names the display, the IPC socket, the bus and the runtime dir" 4 \
    "$(grep -cE '^(WAYLAND_DISPLAY|SWAYSOCK|DBUS_SESSION_BUS_ADDRESS|XDG_RUNTIME_DIR)=.' "$env_file")"
check "sway runs as $KBD_USER" "$KBD_USER" "$(ps -o user= -p "$(pids_named sway | sed -n 1p)")"
shot empty

# GSettings' screen-keyboard-enabled is false in a fresh session: hidden until asked.
check "squeekboard starts hidden" false "$("$here/osk-state" squeekboard)"
check "SetVisible(true)" true "$("$here/osk-state" squeekboard set true)"
check "squeekboard's panel is on screen" shown "$("$here/osk-state" panel --expect shown)"
shot squeekboard-shown
check "SetVisible(false)" false "$("$here/osk-state" squeekboard set false)"
check "Visible stays false" false "$("$here/osk-state" squeekboard --expect false)"
check "squeekboard's panel is gone" hidden "$("$here/osk-state" panel --expect hidden)"
shot squeekboard-hidden

check "no wvkbd yet" absent "$("$here/osk-state" wvkbd)"
pid=$("$here/session.sh" wvkbd)
check "wvkbd shows its panel" shown "$("$here/osk-state" wvkbd --expect shown)"
shot wvkbd-shown
kill -USR1 "$pid"
check "SIGUSR1 hides wvkbd" hidden "$("$here/osk-state" wvkbd --expect hidden)"
shot wvkbd-hidden
kill -USR2 "$pid"
check "SIGUSR2 shows wvkbd" shown "$("$here/osk-state" wvkbd --expect shown)"

t1=$(now_us)
"$here/session.sh" stop
stop_time=$(since "$t1")
stopped=1
check "nothing of $KBD_USER is left" "" "$(ps -u "$KBD_USER" -o pid=,stat=,comm= | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')"
check "no process of the session is left" "" "$(marked_pids)"
echo "timings: start with squeekboard ${start_time}s, stop ${stop_time}s; screenshots in $SESSION_DIR/shots"
[ "$failures" = 0 ] || { echo "smoke: $failures failed"; exit 1; }
echo "smoke: all passed"
