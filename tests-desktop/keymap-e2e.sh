#!/bin/bash
# The desktop's layout reaches the service (issue 26, item 3), with the real desktop:
# headless sway as the unprivileged KBD_USER, with squeekboard's virtual keyboard (sway
# lists only real keyboards, and the headless session has no other) set to
# `xkb_layout "us,de"`. The session agent reads the layouts and the active one from sway's
# IPC (get_inputs, then input events) and sends set_keymap; the service (root) replays
# ctrl-y-twice.evemu: Ctrl and the key at the US Y position at 6 s and 12 s. The user's
# config binds Ctrl+Z (undo) and Ctrl+Y (redo). Before the first key the test switches
# sway to the German layout (`xkb_switch_layout 1`): the key there types z, so undo
# runs; before the second it switches back: redo runs. When the agent stops, the service
# maps with its own keymap again.
#
#   tests-desktop/keymap-e2e.sh [BUILD_DIR]   (root; setup-host.sh first)
#
# Ends with "N passed, N failed"; exit 1 when something failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run keymap "${1:-$here/../.build/debug}" kbd-commandd-daemon kbd-commandd-agent

agent_pid=
cleanup() {
    [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
    agent_pid=
    stop_service_and_session
}
trap 'cleanup; remove_throwaway' EXIT

proof_is() { [ "$(tr '\n' ' ' < "$work/user/proof" 2>/dev/null)" = "$1" ]; }
# The last keymap the service applied, from its log.
service_keymap_is() { grep 'keymap: ' "$work/service.log" | tail -1 | matches "$1"; }
at() { local until=$(( service_t0 + $1 * 1000000 )); while [ "$(now_us)" -lt "$until" ]; do sleep 0.05; done; }

fresh_work "$work"
"$here/session.sh" start >/dev/null || die "the session did not start"
"$here/session.sh" squeekboard >/dev/null 2>&1 || die "squeekboard did not start"
wait_for "$WAIT_SECONDS" eval "as_user swaymsg -t get_inputs | matches '\"type\": \"keyboard\"'" || die "sway lists no keyboard"
as_user swaymsg 'input type:keyboard xkb_layout "us,de"' >/dev/null || die "sway refused the layouts"

cfg="$SESSION_DIR/xdg/config/kbd-commandd"
mkdir -p "$cfg"
cat > "$cfg/config.toml" <<TOML
[osk]
backend = "none"

[[command]]
id = "undo"
keys = "Ctrl+Z"
run = ["/bin/sh", "-c", "echo undo >> $work/user/proof"]

[[command]]
id = "redo"
keys = "Ctrl+Y"
run = ["/bin/sh", "-c", "echo redo >> $work/user/proof"]
TOML
chown -R "$KBD_USER" "$SESSION_DIR/xdg/config"

service_t0=$(now_us)
logind_daemon "$bin/kbd-commandd-daemon" --config "$work/system.toml" --socket "$work/socket" --user-agents --log-level debug \
    --replay "$here/ctrl-y-twice.evemu" >"$work/service.log" 2>&1 &
service_pid=$!
wait_for 5 test -S "$work/socket"
spawn_as_user "$SESSION_DIR/agent.log" "$bin/kbd-commandd-agent" --socket "$work/socket" --log-level debug
agent_pid=$SPAWNED_PID

check "the agent reads sway's layouts and sends them (us,de, first layout active)" \
    wait_for 5 eval "grep -q 'keymap: the desktop.s, layout us,de group 0 (sway IPC)' '$SESSION_DIR/agent.log' && service_keymap_is 'layout us,de variant  group 0'"
as_user swaymsg 'input type:keyboard xkb_switch_layout 1' >/dev/null
check "sway's switch to the German layout reaches the service (group 1)" wait_for 3 service_keymap_is 'layout us,de variant  group 1'
check "Ctrl and the key at the Y position, German layout: Ctrl+Z's command runs" wait_for 10 proof_is "undo "
at 10
as_user swaymsg 'input type:keyboard xkb_switch_layout 0' >/dev/null
check "switched back to the US layout: the service has group 0" wait_for 3 service_keymap_is 'layout us,de variant  group 0'
check "the same key, US layout: Ctrl+Y's command runs" wait_for 10 proof_is "undo redo "
kill "$agent_pid"; wait "$agent_pid" 2>/dev/null; agent_pid=
check "the agent gone, the service maps with its own keymap again" wait_for 3 service_keymap_is "the service's own again"
check "no typed text in the service's log" eval "! grep -qi 'utf8\|\"z\"' '$work/service.log'"
end_of_run keymap "$work"
cleanup
rm -rf "$work"
summary
