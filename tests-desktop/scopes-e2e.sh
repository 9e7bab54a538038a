#!/bin/bash
# Scopes follow the focused window (issue 18), with the real desktop: the session agent
# reads the focused window from the window manager and sends set_scopes to the service,
# which routes the agent's own table with them. Three runs as the unprivileged KBD_USER:
#   sway  headless sway, foot --app-id=AppA/AppB/AppC, focus by swaymsg (sway IPC)
#   i3    Xvfb and i3, xterm -class AppA/AppB/AppC, focus by i3-msg (i3 IPC)
#   ewmh  the same X session, the agent without I3SOCK (EWMH through libxcb)
# The service (root) replays scope-chords.evemu: Ctrl+Alt+T at 4 s and 8 s, Shift+T at
# 12 s, Ctrl+Alt+T at 16 s, Shift+T at 20 s. The user's config binds Ctrl+Alt+T in the
# scopes alpha (AppA), beta (AppB, marked text_input) and global, and Shift+T globally.
# The test focuses AppA before the first chord, AppB before the second and third, AppC
# (no [scopes] entry: its scope is "AppC", which binds nothing) before the last two. The
# commands that ran must be alpha, beta, global, shift-t: the Shift+T typed into AppB
# (text input) fires nothing. list_commands must show the active scopes, and no window
# title may reach a log.
#
#   tests-desktop/scopes-e2e.sh [BUILD_DIR] [sway|i3|ewmh ...]   (root; setup-host.sh first)
#
# Ends with "N passed, N failed"; exit 1 when something failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run scopes "${1:-$here/../.build/debug}" kbd-commandd-daemon kbd-commandd-agent
shift || true
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(sway i3 ewmh)


cleanup() { stop_service_and_session; }
# Each run stops what it started (cleanup); the run's folders go at the end.
trap 'cleanup; remove_throwaway' EXIT

# The scopes the service was last given ("[a, b]"), from its debug log.
last_scopes() { grep 'set scopes' "$work/service.log" | tail -1 | sed 's/.*set scopes //'; }
scopes_are() { [ "$(last_scopes)" = "$1" ]; }
proof_is() { [ "$(tr '\n' ' ' < "$work/user/proof" 2>/dev/null)" = "$1" ]; }

# The service's list_commands, asked as root (a client of the service's group): prints
# the active scopes, comma-separated.
listed_scopes() {
    "$PYTHON" - "$work/socket" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b'{"request":"list_commands"}\n')
data = b""
while not data.endswith(b"\n"):
    data += s.recv(65536)
print(",".join(json.loads(data)["scopes"]))
PY
}

scenario() {
    local run=$1
    fresh_work "$work"

    local focus_cmd window_of
    if [ "$run" = sway ]; then
        "$here/session.sh" start >/dev/null || { failed=$((failed + 1)); echo "FAILED: $run: the session did not start"; return; }
    else
        "$here/session.sh" start --x11 >/dev/null || { failed=$((failed + 1)); echo "FAILED: $run: the session did not start"; return; }
    fi
    # Three windows, each with a title that must never reach a log; AppC is focused last.
    local app
    declare -A pid_of=()
    for app in AppA AppB AppC; do
        if [ "$run" = sway ]; then
            spawn_as_user "$SESSION_DIR/$app.log" foot --app-id="$app" --title="private-title-$app"
            pid_of[$app]=$SPAWNED_PID
            wait_for "$WAIT_SECONDS" eval "as_user swaymsg -t get_tree | matches '\"app_id\": \"$app\"'" \
                || { failed=$((failed + 1)); echo "FAILED: $run: $app did not map"; cleanup; return; }
        else
            spawn_as_user "$SESSION_DIR/$app.log" xterm -class "$app" -T "private-title-$app" -e sleep 600
            pid_of[$app]=$SPAWNED_PID
            wait_for "$WAIT_SECONDS" eval "as_user i3-msg -t get_tree | matches '\"class\":\"$app\"'" \
                || { failed=$((failed + 1)); echo "FAILED: $run: $app did not map"; cleanup; return; }
        fi
    done
    focus() {
        if [ "$run" = sway ]; then as_user swaymsg "[app_id=$1] focus" >/dev/null; else as_user i3-msg "[class=$1] focus" >/dev/null; fi
    }

    local cfg="$SESSION_DIR/xdg/config/kbd-commandd"
    mkdir -p "$cfg"
    cat > "$cfg/config.toml" <<EOF
[osk]
backend = "none"

[scopes]
AppA = ["alpha"]
AppB = { scopes = ["beta"], text_input = true }

[[command]]
id = "alpha"
keys = "Ctrl+Alt+T"
scope = "alpha"
run = ["/bin/sh", "-c", "echo alpha >> $work/user/proof"]

[[command]]
id = "beta"
keys = "Ctrl+Alt+T"
scope = "beta"
run = ["/bin/sh", "-c", "echo beta >> $work/user/proof"]

[[command]]
id = "global"
keys = "Ctrl+Alt+T"
run = ["/bin/sh", "-c", "echo global >> $work/user/proof"]

[[command]]
id = "shift-t"
keys = "Shift+T"
run = ["/bin/sh", "-c", "echo shift-t >> $work/user/proof"]
EOF
    chown -R "$KBD_USER" "$SESSION_DIR/xdg/config"

    # The service first (its replay starts the clock), then the agent as the user.
    # EWMH: the X session without i3's socket in the agent's environment.
    local AGENT_PREFIX=()
    [ "$run" = ewmh ] && AGENT_PREFIX=(env -u I3SOCK)
    start_service_and_agent --debug "$here/scope-chords.evemu"
    unset AGENT_PREFIX

    local source="sway IPC"
    [ "$run" = i3 ] && source="i3 IPC"
    [ "$run" = ewmh ] && source="EWMH"
    check "$run: the agent follows the focus through $source" \
        wait_for 5 grep -q "scopes follow the focused window through $source" "$SESSION_DIR/agent.log"
    check "$run: the agent registers and sends the focused window's scopes (AppC: no entry, its app id)" \
        wait_for 5 eval "grep -q 'registered 4 commands' '$work/service.log' && scopes_are '[AppC]'"
    focus AppA
    check "$run: focusing AppA sets [alpha] at the service" wait_for 3 scopes_are "[alpha]"
    check "$run: Ctrl+Alt+T in AppA runs the alpha command" wait_for 10 proof_is "alpha "
    # sway's pid and X11's _NET_WM_PID (for i3 and EWMH) name the window's process (the
    # text-input watch believes only its focus claims).
    check "$run: the agent knows AppA's process (pid ${pid_of[AppA]})" \
        grep -q "focus: app AppA (pid ${pid_of[AppA]})" "$SESSION_DIR/agent.log"
    focus AppB
    check "$run: focusing AppB sets [beta] and text input at the service" \
        wait_for 3 eval "scopes_are '[beta]' && grep 'set text input' '$work/service.log' | tail -1 | matches 'on\$'"
    check "$run: Ctrl+Alt+T in AppB runs the beta command" wait_for 10 proof_is "alpha beta "
    check "$run: list_commands shows beta, global active" eval "[ \"\$(listed_scopes)\" = beta,global ]"
    # Shift+T at 12 s is typed into AppB (text input): it must fire nothing. AppC gets the
    # focus at 14 s, between it and the Ctrl+Alt+T at 16 s.
    local until=$(( service_t0 + 14000000 ))
    while [ "$(now_us)" -lt "$until" ]; do sleep 0.05; done
    focus AppC
    check "$run: focusing AppC sets [AppC] and text input off" \
        wait_for 3 eval "scopes_are '[AppC]' && grep 'set text input' '$work/service.log' | tail -1 | matches 'off\$'"
    check "$run: Ctrl+Alt+T in AppC (nothing bound in AppC) runs the global command" wait_for 10 proof_is "alpha beta global "
    check "$run: Shift+T outside text input runs; the one typed into AppB did not" wait_for 10 proof_is "alpha beta global shift-t "
    end_of_run "$run" "$work"
    cleanup
}

for r in "${runs[@]}"; do scenario "$r"; done
rm -rf "$work"
summary
