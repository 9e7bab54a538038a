#!/bin/bash
# The consent dialog for apps' global shortcuts (issue 36, `[portal] approve = "ask"`) with
# the real desktop: `kbd-commandd-bar --consent …` in headless sway, run as the session's
# user, tapped with a virtual pointer (tap.c) and typed to with a virtual keyboard (wtype):
#   (a) the dialog appears (a centred overlay layer surface: its paint in a grim screenshot),
#       a tap on Allow prints "accept Ctrl+Alt+m" and exits 0;
#   (b) a tap on Refuse prints "refuse" and exits 1;
#   (c) "Use another chord…", then Ctrl+Shift+F9 typed, then Allow prints
#       "accept Ctrl+Shift+F9"; Super tapped alone gives "accept Super"; Escape cancels the
#       capture and Allow keeps the chord proposed;
#   (d) no answer within --timeout 2 refuses (exit 1);
#   (g) SIGTERM (the agent stopping) refuses (exit 1); (h) so does Escape outside a capture;
#   (e) a usage error exits 2, names the argument, and prints nothing on stdout;
#   (f) without layer-shell (X11: Xvfb and i3) it is a normal window, in i3's tree by its
#       title; closing it (i3's kill: WM_DELETE_WINDOW) prints "refuse" and exits 1.
#
#   tests-desktop/consent-e2e.sh [BUILD_DIR]          (root; setup-host.sh first)
#
# Ends with "N passed, N failed"; exit 1 when something failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run consent "${1:-$here/../.build/debug}" kbd-commandd-bar
command -v wtype >/dev/null || die "wtype is missing (tests-desktop/setup-host.sh installs it)"

dialog_pid=
cleanup() {
    [ -n "$dialog_pid" ] && kill "$dialog_pid" 2>/dev/null && wait "$dialog_pid" 2>/dev/null
    dialog_pid=
    stop_service_and_session
}
trap 'cleanup; remove_throwaway' EXIT

build_tap

probe() { "$PYTHON" "$here/bar-probe.py" "$@"; }
screen_w=${OUTPUT_MODE%x*} screen_h=${OUTPUT_MODE#*x}
region=($(( screen_w / 2 - 100 )) $(( screen_h / 2 - 40 )) 200 80)

# dialog NAME ARGS…: starts the dialog as the session's user (its trace on), stdout to
# $work/NAME.out, stderr to $work/NAME.err.
dialog() {
    local name=$1; shift
    out=$work/$name.out err=$work/$name.err
    ( cd / && EXTRA_ENV=(KBD_BAR_TRACE=1) && AS_USER_EXEC=1 as_user "$bin/kbd-commandd-bar" --consent "$@" ) </dev/null >"$out" 2>"$err" &
    dialog_pid=$!
}
# finished: waits for the dialog (at most 10 s); its status in rc.
finished() {
    local i
    for i in $(seq 200); do kill -0 "$dialog_pid" 2>/dev/null || break; sleep 0.05; done
    kill "$dialog_pid" 2>/dev/null
    wait "$dialog_pid"; rc=$?
    dialog_pid=
}
shown() { wait_for 10 grep -q "^consent-frame" "$err"; }
# tap_button INDEX: a tap in the middle of button INDEX (0 Allow, 1 another chord, 2 Refuse):
# the window is centred on the output (the trace says its size and where the button is in it).
tap_button() {
    local win b ww wh bx by bw bh
    win=$(grep "^consent-window " "$err" | tail -1) b=$(grep "^consent-button $1 " "$err" | tail -1)
    [ -n "$win" ] && [ -n "$b" ] || return 1
    read -r _ ww wh _ <<<"$win"
    read -r _ _ bx by bw bh <<<"$b"
    as_user "$bin/tap" $(( (screen_w - ww) / 2 + bx + bw / 2 )) $(( (screen_h - wh) / 2 + by + bh / 2 )) "$screen_w" "$screen_h" >/dev/null
}
# states_are N: the dialog drew its chord N times (the capture's start and end draw it again).
states_are() { [ "$(grep -c '^consent-state ' "$err")" -ge "$1" ]; }
answered() { [ "$(cat "$out")" = "$1" ] && [ "$rc" = "$2" ]; }
run_failed() { echo "--- $1 stdout"; cat "$out"; echo "--- $1 stderr"; grep -v "^consent-button" "$err"; }

allow_case() {
    local before=$work/before.ppm during=$work/during.ppm
    screenshot_ppm > "$before"
    dialog allow --app org.example.Recorder --description "Start or stop recording" --chord Ctrl+Alt+M \
        --conflict "Mark (the system's table)"
    check "(a) the dialog was painted" shown
    check "(a) it is a layer surface (the compositor has layer-shell)" grep -q "^consent-window .* layer=1$" "$err"
    screenshot_ppm > "$during"
    check "(a) the screenshot shows the dialog in the middle of the output" \
        eval "[ \$(probe diff '$before' '$during' ${region[*]}) -gt 2000 ]"
    check "(a) Allow is offered with the chord proposed" grep -q "^consent-state allow=1$" "$err"
    tap_button 0
    finished
    check "(a) a tap on Allow prints 'accept Ctrl+Alt+m' and exits 0" answered "accept Ctrl+Alt+m" 0
    [ "$failed" = 0 ] || run_failed allow
    screenshot_ppm > "$during"
    check "(a) the dialog is gone after the answer" eval "[ \$(probe diff '$before' '$during' ${region[*]}) -lt 50 ]"
}

refuse_case() {
    dialog refuse --app org.example.Recorder --description "Start or stop recording" --chord Ctrl+Alt+M
    check "(b) the dialog was painted" shown
    tap_button 2
    finished
    check "(b) a tap on Refuse prints 'refuse' and exits 1" answered refuse 1
}

# another_case NAME EXPECTED WTYPE-ARGS…: "Use another chord…", the keys typed, then Allow.
another_case() {
    local name=$1 expected=$2 f=$failed; shift 2
    dialog "$name" --app org.example.Recorder --description "Start or stop recording" --chord Ctrl+Alt+M
    check "(c) $name: the dialog was painted" shown
    tap_button 1
    check "(c) $name: the capture started (Allow is not offered meanwhile)" wait_for 5 grep -q "^consent-state allow=0$" "$err"
    # A new virtual keyboard sends its keymap first: a key at once may reach the client
    # before it read the keymap (then GTK drops it), so wtype waits 200 ms before typing.
    as_user wtype -s 200 "$@"
    check "(c) $name: the capture ended" wait_for 5 states_are 3
    tap_button 0
    finished
    check "(c) $name: Allow prints 'accept $expected' and exits 0" answered "accept $expected" 0
    [ "$failed" = "$f" ] || run_failed "$name"
}

timeout_case() {
    local t0; t0=$(now_us)
    dialog timeout --app "" --description "No answer" --chord Super+Return --timeout 2
    check "(d) the dialog was painted" shown
    finished
    check "(d) no answer within 2 s prints 'refuse' and exits 1" answered refuse 1
    check "(d) it waited the 2 s ($(since "$t0") s)" eval "[ \$(( \$(now_us) - $t0 )) -ge 2000000 ]"
    check "(d) it says why on stderr" grep -q "no answer within 2 s; refused" "$err"
}

term_case() {
    dialog term --app org.example.Recorder --description "Start or stop recording" --chord Ctrl+Alt+M
    check "(g) the dialog was painted" shown
    kill -TERM "$dialog_pid"
    finished
    check "(g) SIGTERM prints 'refuse' and exits 1" answered refuse 1
}

# (h) Escape outside a capture closes the dialog: a refusal.
escape_case() {
    dialog escape-closes --app org.example.Recorder --description "Start or stop recording" --chord Ctrl+Alt+M
    check "(h) the dialog was painted" shown
    as_user wtype -s 200 -k Escape
    finished
    check "(h) Escape outside a capture prints 'refuse' and exits 1" answered refuse 1
}

usage_case() {
    dialog usage --app a --description d --chord Ctrl+Sprocket
    finished
    check "(e) a bad --chord exits 2 with nothing on stdout" answered "" 2
    check "(e) the message names the bad argument" grep -q "^Error: --chord 'Ctrl+Sprocket' is not a chord" "$err"
}

# i3's tree names the dialog's window.
in_i3_tree() { as_user i3-msg -t get_tree | grep '"name":"Allow a global shortcut?"' >/dev/null; }

x11_case() {
    dialog x11 --app org.example.Recorder --description "Start or stop recording" --chord Ctrl+Alt+M
    check "(f) X11: the dialog was painted" shown
    check "(f) X11: it is a normal window (no layer-shell)" grep -q "^consent-window .* layer=0$" "$err"
    check "(f) X11: i3's tree has the window by its title" wait_for 5 in_i3_tree
    as_user i3-msg '[title="^Allow a global shortcut"] kill' >/dev/null
    finished
    check "(f) X11: closing the window prints 'refuse' and exits 1" answered refuse 1
    [ "$failed" = 0 ] || run_failed x11
}

fresh_work "$work"
usage_case
if "$here/session.sh" start >/dev/null; then
    allow_case
    refuse_case
    another_case ctrl-shift-f9 Ctrl+Shift+F9 -M ctrl -M shift -k F9 -m shift -m ctrl
    another_case super-tap Super -k Super_L
    another_case escape Ctrl+Alt+m -k Escape
    timeout_case
    term_case
    escape_case
    check "nothing was left running" eval "[ -z \"\$(pids_named kbd-commandd-ba)\" ]"
else
    failed=$((failed + 1)); echo "FAILED: the sway session did not start"
fi
cleanup
if "$here/session.sh" start --x11 >/dev/null; then
    x11_case
else
    failed=$((failed + 1)); echo "FAILED: the X11 session did not start"
fi
cleanup
summary
