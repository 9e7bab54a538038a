#!/bin/bash
# The shortcuts bar and HUD with the real desktop (issue 28): the session agent starts
# kbd-commandd-bar ([bar] enabled = true); the service (root, simulated logind with the
# session's user active) replays bar-super-hold.evemu: a USB keyboard attached for 16 s,
# Super held alone from 6 s to 8.5 s. In headless sway with a foot window:
#   - foot's window (sway's tree) gets shorter by the bar's height while the keyboard is
#     present (the bar's exclusive zone) and gets its height back after the detach;
#   - a tap on the bar's button (a virtual pointer, tap.c) runs its system command;
#   - the HUD is in a grim screenshot while Super is held, and gone after;
#   - a tap on the bar's button of a user command runs it through the agent;
#   - foot keeps the keyboard focus throughout;
#   - the service restarts: the bar reconnects; a tap on the HUD reaches the window under
#     it (its empty input region); the bar is killed: the agent starts it again after 1 s;
#     the agent stops: so does the bar, and its zone goes;
# then 300 short commands (many): the bar lays out what fits and pages the rest behind a
# "More" button, stays alive, and a command of the second page runs when tapped;
# then the same under KWin (kwin_wayland --virtual) for the exclusive zone and the HUD
# (KWin has no screenshots for grim: the bar's own trace says when the HUD was painted).
# With SHOTS=DIR it saves the bar and the HUD as PNGs there (the README's pictures).
#
#   tests-desktop/bar-e2e.sh [BUILD_DIR]          (root; setup-host.sh first)
#   SCENARIOS=sway tests-desktop/bar-e2e.sh …      (sway, many, kwin)
#
# Ends with "N passed, N failed"; exit 1 when something failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run bar "${1:-$here/../.build/debug}" kbd-commandd-daemon kbd-commandd-agent kbd-commandd-bar

agent_pid= foot_pid=
cleanup() {
    [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
    agent_pid= foot_pid=
    stop_service_and_session
}
trap 'cleanup; remove_throwaway' EXIT

build_tap

probe() { "$PYTHON" "$here/bar-probe.py" "$@"; }
foot_height() { as_user swaymsg -t get_tree | probe height foot; }
foot_height_is() { [ "$(foot_height)" = "$1" ]; }
focused_is() { [ "$(as_user swaymsg -t get_tree | probe focused)" = "$1" ]; }
focused_is_foot() { focused_is foot; }
# at MS: waits until MS milliseconds after the service started (the recording's clock).
at() { local until=$(( service_t0 + $1 * 1000 )); while [ "$(now_us)" -lt "$until" ]; do sleep 0.05; done; }
# tap_button LABEL: a tap in the middle of the bar's button LABEL (where the bar's trace says
# it is, in the bar's coordinates; the bar is the output's bottom 55 pixels).
tap_button() {
    local b bx by bw bh
    b=$(grep "^toolbar-button -\?[0-9]* .* $1\$" "$SESSION_DIR/agent.log" | tail -1)
    [ -n "$b" ] || return 0
    read -r _ _ bx by bw bh _ <<<"$b"
    as_user "$bin/tap" $(( bx + bw / 2 )) $(( screen_h - 55 + by + bh / 2 )) "$screen_w" "$screen_h" >/dev/null
}
# The output's size (OUTPUT_MODE).
screen_w=${OUTPUT_MODE%x*} screen_h=${OUTPUT_MODE#*x}
# The HUD's region: the middle of the output.
hud_region=($(( screen_w / 2 - 150 )) $(( screen_h / 2 - 100 )) 300 200)

# The system table: groups and titles as an app would give them; Ctrl+S in the focused
# window's scope (foot: the agent sets the scopes from sway's focus) shadows the global one.
# Mark writes the proof of a tap.
write_configs() {
    cat > "$work/system.toml" <<TOML
[[command]]
id = "save-scrollback"
title = "Save"
discoverability_title = "Save Scrollback"
group = "File"
scope = "foot"
keys = "Ctrl+S"
run = ["true"]

[[command]]
id = "mark"
title = "Mark"
discoverability_title = "Mark the Proof File"
group = "File"
keys = "Ctrl+Alt+M"
run = ["/bin/sh", "-c", "echo tapped >> $work/tapped"]

[[command]]
id = "save"
title = "Save"
group = "File"
keys = "Ctrl+S"
run = ["true"]

[[command]]
id = "find"
title = "Find"
discoverability_title = "Find in Scrollback"
group = "Edit"
scope = "foot"
keys = "Ctrl+Shift+F"
run = ["true"]

[[command]]
id = "copy"
title = "Copy"
group = "Edit"
keys = "Ctrl+Shift+C"
run = ["true"]

[[command]]
id = "zoom-in"
title = "Zoom In"
group = "View"
keys = "Ctrl+Plus"
run = ["true"]

[[command]]
id = "terminal"
title = "Terminal"
discoverability_title = "New Terminal"
keys = "Ctrl+Alt+T"
run = ["true"]
TOML
    chmod 644 "$work/system.toml"
    local cfg="$SESSION_DIR/xdg/config/kbd-commandd"
    mkdir -p "$cfg"
    # The user's own table: Note runs through the agent (run_command of a user command).
    cat > "$cfg/config.toml" <<TOML
[osk]
backend = "none"

[bar]
enabled = true

[[command]]
id = "note"
title = "Note"
discoverability_title = "Note in the User's Proof"
group = "Mine"
keys = "Ctrl+Alt+U"
run = ["/bin/sh", "-c", "echo note >> $work/user/proof"]
TOML
    chown -R "$KBD_USER" "$SESSION_DIR/xdg/config"
}

start_agent_and_service() {
    local EXTRA_ENV=(KBD_BAR_TRACE=1)
    start_service_and_agent --agent-first "$here/bar-super-hold.evemu"
    unset EXTRA_ENV
}

sway_run() {
    fresh_work "$work"
    "$here/session.sh" start >/dev/null || { failed=$((failed + 1)); echo "FAILED: sway: the session did not start"; return; }
    write_configs
    spawn_as_user "$SESSION_DIR/foot.log" foot
    foot_pid=$SPAWNED_PID
    wait_for "$WAIT_SECONDS" focused_is_foot || { failed=$((failed + 1)); echo "FAILED: sway: foot did not get the focus"; return; }
    local full; full=$(foot_height)
    start_agent_and_service
    check "sway: the agent started the bar, which connected" wait_for 10 grep -q "connected to" "$SESSION_DIR/agent.log"
    check "sway: the bar was painted" wait_for 10 grep -q "^toolbar-frame" "$SESSION_DIR/agent.log"
    check "sway: foot's window is shorter by the bar's 55 px while the keyboard is present (was $full)" wait_for 5 foot_height_is $(( full - 55 ))
    check "sway: foot has the keyboard focus with the bar shown" focused_is_foot
    local before="$work/before.ppm" during="$work/during.ppm" after="$work/after.ppm"
    screenshot_ppm > "$before"
    tap_button Mark
    check "sway: a tap on the bar's Mark button ran its system command" wait_for 5 grep -qx tapped "$work/tapped"
    # The groups the bar drew last: both tables', "Other" (commands without a group) last.
    check "sway: the bar shows the user's own group (the agent registers groups) and Other last" \
        eval "[ \"\$(grep '^toolbar-group ' '$SESSION_DIR/agent.log' | tail -5 | cut -d' ' -f2- | sort | tr '\n' ,)\" = Edit,File,Mine,Other,View, ] \
              && [ \"\$(grep '^toolbar-group ' '$SESSION_DIR/agent.log' | tail -1)\" = 'toolbar-group Other' ]"
    tap_button Note
    check "sway: a tap on the bar's Note button ran the user's command through the agent" wait_for 5 grep -qx note "$work/user/proof"
    check "sway: foot kept the keyboard focus after the tap" focused_is_foot
    at 7500
    screenshot_ppm > "$during"
    check "sway: the HUD is painted while Super is held" grep -q "^hud-frame" "$SESSION_DIR/agent.log"
    check "sway: the screenshot shows the HUD in the middle of the screen" \
        eval "[ \$(probe diff '$before' '$during' ${hud_region[*]}) -gt 2000 ]"
    check "sway: foot has the keyboard focus while the HUD is shown" focused_is_foot
    if [ -n "${SHOTS:-}" ]; then
        mkdir -p "$SHOTS"
        as_user grim -l 9 -g "$(( screen_w / 2 - 280 )),$(( screen_h / 2 - 200 )) 560x400" - > "$SHOTS/bar-hud.png"
        as_user grim -l 9 -g "0,$(( screen_h - 55 )) ${screen_w}x55" - > "$SHOTS/bar-toolbar.png"
    fi
    at 9500
    screenshot_ppm > "$after"
    check "sway: the HUD is gone after Super was released" eval "[ \$(probe diff '$before' '$after' ${hud_region[*]}) -lt 50 ]"
    check "sway: foot's window gets its height back after the detach" wait_for 15 foot_height_is "$full"
    check "sway: foot kept the keyboard focus throughout" focused_is_foot
    check "sway: nothing typed reached a log" eval "! grep -qi 'KEY_LEFTMETA\\|keysym' '$work/service.log' '$SESSION_DIR/agent.log'"
    # The service restarts: the bar reconnects (the client's backoff) and shows the bar again.
    kill "$service_pid"; wait "$service_pid" 2>/dev/null; service_pid=
    check "sway: the bar noticed the service went away" wait_for 5 grep -q "lost the service" "$SESSION_DIR/agent.log"
    start_service "$here/bar-super-hold.evemu"
    check "sway: the bar reconnected to the new service" \
        wait_for 10 eval "[ \$(grep -c 'kbd-commandd-bar: connected to' '$SESSION_DIR/agent.log') -ge 2 ]"
    check "sway: the bar is back with the keyboard of the new replay" wait_for 10 foot_height_is $(( full - 55 ))
    # The HUD lets taps through (an empty input region): a second window (foot2) on the right
    # half, foot focused again; while the HUD of the new replay covers the middle of the
    # screen, a tap on the HUD over foot2 reaches foot2, which sway then focuses.
    spawn_as_user "$SESSION_DIR/foot2.log" foot --app-id foot2
    wait_for 10 focused_is foot2
    as_user swaymsg '[app_id="^foot$"] focus' >/dev/null
    wait_for 5 focused_is foot
    at 7300
    check "sway: the HUD is shown again (the new replay holds Super)" eval "[ \$(grep -c '^hud-frame' '$SESSION_DIR/agent.log') -ge 2 ]"
    check "sway: foot has the focus before the tap on the HUD" focused_is foot
    as_user "$bin/tap" $(( screen_w / 2 + 100 )) $(( screen_h / 2 )) "$screen_w" "$screen_h" >/dev/null
    check "sway: a tap on the HUD went through to the window under it (foot2 focused)" wait_for 3 focused_is foot2
    # The bar dies (SIGKILL, as the OOM killer kills; a SIGSEGV sent by kill only makes Swift's
    # runtime print a backtrace and go on) while the keyboard is still present: the agent starts
    # it again after 1 s, and the new bar connects and takes its zone back.
    bar_pid=$(pids_named kbd-commandd-ba)
    [ -n "$bar_pid" ] && kill -KILL "$bar_pid"
    check "sway: the agent said the bar died and when it starts again" \
        wait_for 3 grep -q "bar: \[$bar_pid\] ended (signal 9); starting it again in 1 s" "$SESSION_DIR/agent.log"
    check "sway: the agent started a crashed bar again" \
        wait_for 5 eval "p=\$(pids_named kbd-commandd-ba); [ -n \"\$p\" ] && [ \"\$p\" != '$bar_pid' ]"
    check "sway: the restarted bar connected and takes its zone back" \
        wait_for 5 eval "[ \$(grep -c 'kbd-commandd-bar: connected to' '$SESSION_DIR/agent.log') -ge 3 ] && foot_height_is $(( full - 55 ))"
    # The agent stops: so does its bar, and its exclusive zone goes with it.
    kill "$agent_pid"; wait "$agent_pid" 2>/dev/null; agent_pid=
    check "sway: the agent stopped its bar when it stopped" eval "[ -z \"\$(pids_named kbd-commandd-ba)\" ]"
    check "sway: foot gets its height back with the bar gone" wait_for 5 foot_height_is "$full"
    if [ "$failed" -gt 0 ]; then echo "--- service"; cat "$work/service.log"; echo "--- agent and bar"; cat "$SESSION_DIR/agent.log"; fi
    cleanup
}

# 300 short global commands (issue 33): far more buttons than the output is wide. The bar
# asked for a surface as wide as all of them and died in cairo (SIGSEGV). Now it lays out
# what fits, the rest on further pages behind a "More" button: the bar stays alive, every
# button is inside the output, a tap on More shows the next page, a tap on a command of
# that page runs it, and the HUD of the same 300 commands (Super held) is painted.
write_many_configs() {
    local letters=(A B C D E F G H I J K L M N O P Q R S T U V W X Y Z) i
    for i in $(seq 0 299); do
        printf '[[command]]\nid = "c%d"\ntitle = "Command %d"\nkeys = "Ctrl+Alt+Shift+%s F%d"\nrun = ["/bin/sh", "-c", "echo c%d >> %s/tapped"]\n\n' \
            "$((i + 1))" "$((i + 1))" "${letters[i / 12]}" "$((i % 12 + 1))" "$((i + 1))" "$work"
    done > "$work/system.toml"
    chmod 644 "$work/system.toml"
    local cfg="$SESSION_DIR/xdg/config/kbd-commandd"
    mkdir -p "$cfg"
    printf '[osk]\nbackend = "none"\n\n[bar]\nenabled = true\n' > "$cfg/config.toml"
    chown -R "$KBD_USER" "$SESSION_DIR/xdg/config"
}
# Every traced button inside the output (x >= 0, x + width <= the output's width).
buttons_inside() { awk -v w="$screen_w" '$1 == "toolbar-button" && ($3 < 0 || $3 + $5 > w) { bad = 1 } END { exit bad }' "$SESSION_DIR/agent.log"; }
bar_alive() { [ -n "$(pids_named kbd-commandd-ba)" ] && ! grep -q "bar: \[[0-9]*\] ended" "$SESSION_DIR/agent.log"; }

many_run() {
    fresh_work "$work"
    "$here/session.sh" start >/dev/null || { failed=$((failed + 1)); echo "FAILED: many: the session did not start"; return; }
    write_many_configs
    spawn_as_user "$SESSION_DIR/foot.log" foot
    foot_pid=$SPAWNED_PID
    wait_for "$WAIT_SECONDS" focused_is_foot || { failed=$((failed + 1)); echo "FAILED: many: foot did not get the focus"; return; }
    start_agent_and_service
    check "many: the agent started the bar, which connected" wait_for 10 grep -q "connected to" "$SESSION_DIR/agent.log"
    check "many: the bar with 300 commands was painted" wait_for 10 grep -q "^toolbar-frame" "$SESSION_DIR/agent.log"
    check "many: the More button is on the bar" wait_for 5 grep -q "^toolbar-button -1 .* More (1/[0-9]*)$" "$SESSION_DIR/agent.log"
    check "many: every button is inside the output ($screen_w px)" buttons_inside
    local first_page; first_page=$(grep "^toolbar-button [0-9]" "$SESSION_DIR/agent.log" | cut -d' ' -f2 | sort -u | wc -l)
    check "many: the first page shows some commands, not all ($first_page buttons)" eval "[ $first_page -gt 5 ] && [ $first_page -lt 300 ]"
    tap_button "More (1/[0-9]*)"
    check "many: a tap on More shows the second page" wait_for 5 grep -q "toolbar-page 2/" "$SESSION_DIR/agent.log"
    check "many: the second page's More button is there" wait_for 5 grep -q "^toolbar-button -1 .* More (2/[0-9]*)$" "$SESSION_DIR/agent.log"
    check "many: every button of the second page is inside the output" buttons_inside
    # The second page's first command (the first button traced after the page changed).
    local second
    second=$(sed -n '/toolbar-page 2\//,$p' "$SESSION_DIR/agent.log" | grep -m1 "^toolbar-button [0-9]" | cut -d' ' -f7-)
    [ -n "$second" ] && tap_button "$second"
    check "many: a tap on the second page's \"$second\" ran its command" wait_for 5 grep -qx "c${second#Command }" "$work/tapped"
    at 7500
    check "many: the HUD of 300 commands is painted while Super is held" wait_for 3 grep -q "^hud-frame" "$SESSION_DIR/agent.log"
    at 9000
    check "many: the bar stayed alive throughout" bar_alive
    check "many: foot kept the keyboard focus" focused_is_foot
    if [ "$failed" -gt 0 ]; then echo "--- service"; tail -20 "$work/service.log"; echo "--- agent and bar"; grep -v "^toolbar-button" "$SESSION_DIR/agent.log" | tail -40; fi
    cleanup
}

# KWin's work area (what a maximised window gets), from a KWin script (its print() goes
# to KWin's log): "X Y WIDTH HEIGHT".
area_runs=0
kwin_area() {
    area_runs=$((area_runs + 1))
    local name="kbd-area-$area_runs" lines
    lines=$(grep -c '^js: kbd-area ' "$SESSION_DIR/kwin.log")
    as_user busctl --user call org.kde.KWin /Scripting org.kde.kwin.Scripting loadScript ss "$work/area.js" "$name" >/dev/null || return 1
    as_user busctl --user call org.kde.KWin /Scripting org.kde.kwin.Scripting start >/dev/null || return 1
    wait_for 5 eval "[ \$(grep -c '^js: kbd-area ' '$SESSION_DIR/kwin.log') -gt $lines ]"
    as_user busctl --user call org.kde.KWin /Scripting org.kde.kwin.Scripting unloadScript s "$name" >/dev/null
    grep '^js: kbd-area ' "$SESSION_DIR/kwin.log" | tail -1 | cut -d' ' -f3-
}
kwin_area_height_is() { [ "$(kwin_area | cut -d' ' -f4)" = "$1" ]; }

# KWin: the exclusive zone as KWin's work area (grim has no screenshots of KWin: the bar's
# own trace says when the HUD was painted).
kwin_run() {
    fresh_work "$work"
    "$here/session.sh" start --kwin >/dev/null || { failed=$((failed + 1)); echo "FAILED: kwin: the session did not start"; return; }
    write_configs
    cat > "$work/area.js" <<'JS'
var a = workspace.clientArea(KWin.MaximizeArea, workspace.activeScreen, workspace.currentDesktop);
print("kbd-area " + a.x + " " + a.y + " " + a.width + " " + a.height);
JS
    chmod 644 "$work/area.js"
    check "kwin: the work area is the whole output before the keyboard" kwin_area_height_is "$screen_h"
    start_agent_and_service
    check "kwin: the agent started the bar, which connected" wait_for 10 grep -q "connected to" "$SESSION_DIR/agent.log"
    check "kwin: the bar was painted while the keyboard is present" wait_for 10 grep -q "^toolbar-frame" "$SESSION_DIR/agent.log"
    check "kwin: the work area is shorter by the bar's 55 px while the keyboard is present" wait_for 5 kwin_area_height_is $(( screen_h - 55 ))
    at 6500
    check "kwin: the HUD is painted while Super is held" wait_for 3 grep -q "^hud-frame" "$SESSION_DIR/agent.log"
    check "kwin: the work area is the whole output again after the detach" wait_for 15 kwin_area_height_is "$screen_h"
    if [ "$failed" -gt 0 ]; then echo "--- service"; cat "$work/service.log"; echo "--- agent and bar"; cat "$SESSION_DIR/agent.log"; fi
    cleanup
}

for s in ${SCENARIOS:-sway many kwin}; do "${s}_run"; done
rm -rf "$work"
summary
