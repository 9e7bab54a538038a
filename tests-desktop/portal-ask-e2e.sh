#!/bin/bash
# `[portal] approve = "ask"` end to end (issue 36): one headless sway session (session.sh)
# whose session bus carries the real xdg-desktop-portal (Debian 12's 1.16, XDG_DESKTOP_PORTAL_DIR
# holding the package's kbd-commandd.portal, XDG_CURRENT_DESKTOP=sway), the session agent
# started with sway's environment (WAYLAND_DISPLAY: the portal's child runs the bar's
# consent dialog, `kbd-commandd-bar --consent`, there), the service (root, simulated logind)
# replaying a USB keyboard, and apps on the public GlobalShortcuts interface (portal-app.py).
# The dialog is answered as a person would: taps of a virtual pointer (tap.c) on its
# buttons, found from its KBD_BAR_TRACE lines (the agent's environment has it, the dialog
# inherits it and writes them to the agent's log), and a chord typed with wtype.
#   (a) app A asks CTRL+ALT+m: the dialog appears (its first frame, and a grim screenshot
#       shows it in the middle of the output), a tap on Allow answers; BindShortcuts'
#       response lists Ctrl+Alt+M, the service lists it (`kbd-commandd commands --active`)
#       and the approvals file keeps it;
#   (b) app B asks SHIFT+F9 and its dialog stays open over Ctrl+Alt+M held at 12 s
#       (replayed): A gets one Activated at the press and one Deactivated at the release,
#       not when B's dialog is answered; then a tap on Refuse: B's response binds nothing,
#       the service and the approvals file have nothing of B, the agent's log says why;
#   (c) A in a new session (the same executable) gets Ctrl+Alt+M without a dialog (the
#       approval was kept);
#   (d) app D asks CTRL+ALT+n, "Use another chord…", Ctrl+Shift+F8 typed, Allow: D is bound
#       to Ctrl+Shift+F8 (response and service), and not to Ctrl+Alt+N.
#
#   tests-desktop/portal-ask-e2e.sh [BUILD_DIR]      (root; setup-host.sh first)
#
# Ends with "N passed, N failed"; exit 1 when something failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run portal-ask "${1:-$here/../.build/debug}" kbd-commandd-daemon kbd-commandd-agent kbd-commandd kbd-commandd-bar
[ -x /usr/libexec/xdg-desktop-portal ] || die "xdg-desktop-portal is not installed (tests-desktop/setup-host.sh)"
command -v wtype >/dev/null || die "wtype is missing (tests-desktop/setup-host.sh installs it)"
# Apps without an app id (unsandboxed) are named by their executables: a copy of the
# interpreter each.
for app in talk-app record-app note-app; do install -m 0755 "$(readlink -f "$PYTHON")" "$bin/$app"; done

trap 'stop_service_and_session; remove_throwaway' EXIT

# The virtual-pointer tap (lib.sh).
build_tap

# The keyboard: portal-chords.evemu's device and its first Ctrl+Alt+M (held 0.6 s), moved
# from 8 s to 12 s: A's dialog is long answered and B's is open.
fresh_work "$work"
awk '!/^E:/ { print; next }
     $2 < 1473280903 { print; next }
     $2 >= 1473280910 && $2 < 1473280912 { printf "E: %.6f %s %s %s\n", $2 + 4, $3, $4, $5 }' \
    "$here/portal-chords.evemu" > "$work/keyboard.evemu"
chmod 644 "$work/keyboard.evemu"

probe() { "$PYTHON" "$here/bar-probe.py" "$@"; }
screen_w=${OUTPUT_MODE%x*} screen_h=${OUTPUT_MODE#*x}
region=($(( screen_w / 2 - 100 )) $(( screen_h / 2 - 40 )) 200 80)
log=$SESSION_DIR/agent.log

# mark: where the agent's log ends now; dialog lines after it are the next dialog's.
mark() { from=$(( $(wc -l < "$log") + 1 )); }
since_mark() { tail -n +"$from" "$log"; }
shown() { since_mark | matches "^consent-frame"; }
# tap_button INDEX: a tap in the middle of the dialog's button INDEX (0 Allow, 1 another
# chord, 2 Refuse); the window is centred on the output.
tap_button() {
    local win b ww wh bx by bw bh
    win=$(since_mark | grep "^consent-window " | tail -1) b=$(since_mark | grep "^consent-button $1 " | tail -1)
    [ -n "$win" ] && [ -n "$b" ] || return 1
    read -r _ ww wh _ <<<"$win"
    read -r _ _ bx by bw bh <<<"$b"
    as_user "$bin/tap" $(( (screen_w - ww) / 2 + bx + bw / 2 )) $(( (screen_h - wh) / 2 + by + bh / 2 )) "$screen_w" "$screen_h" >/dev/null
}
states_are() { [ "$(since_mark | grep -c '^consent-state ')" -ge "$1" ]; }
listed() { as_user "$bin/kbd-commandd" commands --active --socket "$work/socket" 2>/dev/null | matches "$@"; }
count() { grep -c "$1" "$2" 2>/dev/null || true; }
# app EXECUTABLE LOG ARG…: portal-app.py as the session's user, on sway's session bus.
app() { local exe=$1 out=$2; shift 2; spawn_as_user "$work/$exe.err" "$bin/$exe" "$bin/portal-app.py" "$out" "$@"; }
at() { local until=$(( service_t0 + $1 * 1000000 )); while [ "$(now_us)" -lt "$until" ]; do sleep 0.05; done; }
gone() { [ "$(probe diff "$SESSION_DIR/empty.ppm" <(screenshot_ppm) "${region[@]}")" -lt 50 ]; }

# (a) A asks, the dialog appears, Allow.
case_allow() {
    mark
    app talk-app "$work/user/a.log" "talk=CTRL+ALT+m=Push to talk" --close-after-release --seconds 40
    check "(a) A's BindShortcuts shows the consent dialog (its first frame)" wait_for 15 shown
    check "(a) it is a layer surface on sway" eval "since_mark | matches '^consent-window .* layer=1\$'"
    check "(a) a grim screenshot shows the dialog in the middle of the output" \
        eval "[ \$(probe diff '$SESSION_DIR/empty.ppm' <(screenshot_ppm) ${region[*]}) -gt 2000 ]"
    check "(a) A's response waits for the answer" eval "! grep -q '^bound' '$work/user/a.log'"
    tap_button 0
    check "(a) after a tap on Allow, A's response lists Ctrl+Alt+M" wait_for 10 grep -qx "bound talk Ctrl+Alt+M" "$work/user/a.log"
    check "(a) the dialog is gone" wait_for 5 gone
    check "(a) the service lists A's binding" wait_for 5 listed -E "Ctrl\+Alt\+M.*Push to talk"
    check "(a) the approvals file keeps it" grep -q $'\ttalk\tCtrl+Alt+M\tPush to talk' "$approvals"
}

# (b) B asks; A's chord is held while B's dialog is open; Refuse.
case_refuse() {
    mark
    app record-app "$work/user/b.log" "record=SHIFT+F9=Record" --seconds 30
    check "(b) B's BindShortcuts shows the dialog (before the chord at 12 s)" \
        eval "wait_for 8 eval 'since_mark | matches ^consent-frame' && [ \$(( \$(now_us) - service_t0 )) -lt 11500000 ]"
    at 14
    local on off press=$(( service_t0 + 12000000 ))
    on=$(awk '$1 == "activated" {print $3}' "$work/user/a.log")
    off=$(awk '$1 == "deactivated" {print $3}' "$work/user/a.log")
    check "(b) B's dialog is still open at 14 s" eval "! grep -q '^bound' '$work/user/b.log'"
    check "(b) meanwhile Ctrl+Alt+M held gives A one Activated at the press (less than 1 s after 12 s)" \
        eval "[ \$(count '^activated talk' '$work/user/a.log') = 1 ] && [ -n '$on' ] && [ $(( ${on:-0} - press )) -lt 1000000 ]"
    check "(b) … and one Deactivated at the release (0.4 to 1.5 s after it)" \
        eval "[ \$(count '^deactivated talk' '$work/user/a.log') = 1 ] && [ -n '$off' ] && [ $(( ${off:-0} - ${on:-0} )) -gt 400000 ] && [ $(( ${off:-0} - ${on:-0} )) -lt 1500000 ]"
    tap_button 2
    check "(b) after a tap on Refuse, B's response binds nothing" wait_for 10 grep -qx "bound none" "$work/user/b.log"
    check "(b) the dialog is gone" wait_for 5 gone
    check "(b) the service has nothing of B" eval "! listed -E 'Shift\+F9|Record'"
    check "(b) the approvals file has nothing of B" eval "! grep -q 'Shift+F9' '$approvals'"
    check "(b) the agent's log says the dialog refused it" grep -q "record-app: 0 shortcuts bound, 1 not (refused or unanswered in the consent dialog" "$log"
    check "(b) A closed its session after the release; its binding left the service" \
        eval "wait_for 5 grep -qx closed '$work/user/a.log' && wait_for 5 eval '! listed \"Push to talk\"'"
}

# (c) A again, in a new session: no question.
case_again() {
    mark
    app talk-app "$work/user/a2.log" "talk=CTRL+ALT+m=Push to talk" --seconds 30
    check "(c) A in a new session gets Ctrl+Alt+M" wait_for 10 grep -qx "bound talk Ctrl+Alt+M" "$work/user/a2.log"
    check "(c) … without a dialog" eval "! since_mark | matches '^consent-'"
    check "(c) the service lists A's binding again" wait_for 5 listed -E "Ctrl\+Alt\+M.*Push to talk"
}

# (d) D asks, another chord typed, Allow.
case_another() {
    mark
    app note-app "$work/user/d.log" "note=CTRL+ALT+n=Take a note" --seconds 30
    check "(d) D's BindShortcuts shows the dialog" wait_for 15 shown
    tap_button 1
    check "(d) \"Use another chord…\" starts the capture" wait_for 5 eval "since_mark | matches '^consent-state allow=0\$'"
    # wtype waits 200 ms: a new virtual keyboard's keys may come before the dialog read its keymap.
    as_user wtype -s 200 -M ctrl -M shift -k F8 -m shift -m ctrl
    check "(d) the capture ended" wait_for 5 states_are 3
    tap_button 0
    check "(d) after Allow, D's response lists the typed Ctrl+Shift+F8" wait_for 10 grep -qx "bound note Ctrl+Shift+F8" "$work/user/d.log"
    check "(d) the service lists D's binding on Ctrl+Shift+F8" wait_for 5 listed -E "Ctrl\+Shift\+F8.*Take a note"
    check "(d) … and nothing on Ctrl+Alt+N" eval "! listed -E 'Ctrl\+Alt\+N'"
}

"$here/session.sh" start >/dev/null || die "the sway session did not start"
portal_dirs "$work"
approvals=$SESSION_DIR/xdg/state/kbd-commandd/portal-approvals
cat > "$SESSION_DIR/xdg/config/kbd-commandd/config.toml" <<CONF
[osk]
backend = "none"

[bar]
enabled = false

[portal]
approve = "ask"
CONF
chown "$KBD_USER" "$SESSION_DIR/xdg/config/kbd-commandd/config.toml"

start_service "$work/keyboard.evemu"
wait_for 5 test -S "$work/socket" || die "the service did not make its socket"
EXTRA_ENV=(KBD_BAR_TRACE=1)
start_agent
spawn_as_user "$work/portal.log" env XDG_DESKTOP_PORTAL_DIR="$work/portals" XDG_CURRENT_DESKTOP=sway /usr/libexec/xdg-desktop-portal -v
unset EXTRA_ENV
check "the agent serves the portal's backend" wait_for 10 grep -q "portal: serves" "$log"
check "xdg-desktop-portal is on sway's session bus" wait_for 10 dbus_name_has_owner org.freedesktop.portal.Desktop
case_allow
case_refuse
case_again
case_another
check "no typed key reached the apps' logs" \
    eval "! grep -qvE '^(bound|list|ready|closed|activated|deactivated|response)( |$)' '$work/user/a.log' '$work/user/b.log' '$work/user/a2.log' '$work/user/d.log'"
check "no dialog is left" eval "[ -z \"\$(pids_named kbd-commandd-ba)\" ]"

if [ "$failed" -gt 0 ]; then
    for f in "$work/service.log" "$log" "$work"/*.err "$work"/user/*.log; do echo "--- $f"; grep -v "^consent-button" "$f"; done
    echo "--- portal"; grep -i -m 30 "shortcut\|kbd" "$work/portal.log"
fi
summary
