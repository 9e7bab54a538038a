#!/bin/bash
# The session agent end to end with the real desktop (issue 13): a headless sway session
# as the unprivileged KBD_USER with squeekboard, then with wvkbd; the service (root)
# replays a USB keyboard that attaches, types Ctrl+Alt+T and detaches
# (ctrl-alt-t.evemu); the agent, in the session, hides the on-screen keyboard at attach,
# runs the bound program as the user with the session's WAYLAND_DISPLAY, and shows the
# keyboard again after the detach. A second agent of another uid (nobody) registers its
# own table and must get none of the first agent's commands.
#
#   tests-desktop/agent-e2e.sh [BUILD_DIR]      (root; setup-host.sh first)
#
# Ends with "N passed, N failed"; exit 1 when something failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export SESSION_DIR=/tmp/kbd-desktop-agent-e2e
. "$here/lib.sh"
bin=$(cd "${1:-$here/../.build/debug}" && pwd)
[ "$(id -u)" = 0 ] || die "run as root (the session runs as $KBD_USER)"
for b in kbd-commandd-daemon kbd-commandd-agent; do [ -x "$bin/$b" ] || die "$bin/$b is not built"; done

work=/tmp/kbd-agent-e2e
passed=0
failed=0
check() {
    local name=$1; shift
    if "$@"; then passed=$((passed + 1)); echo "ok: $name"; else failed=$((failed + 1)); echo "FAILED: $name"; fi
}

service_pid=
other_pid=
cleanup() {
    [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null
    [ -n "$other_pid" ] && kill "$other_pid" 2>/dev/null && wait "$other_pid" 2>/dev/null
    service_pid= other_pid=
    "$here/session.sh" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

# One run: $1 is the backend (squeekboard or wvkbd).
scenario() {
    local backend=$1
    rm -rf "$work"
    mkdir -p "$work/nobody" "$work/user"
    chown "$KBD_USER" "$work/user"
    chmod 755 "$work"
    chown nobody "$work/nobody"
    printf '' > "$work/system.toml"
    chmod 644 "$work/system.toml"

    "$here/session.sh" start "--$backend" >/dev/null || { failed=$((failed + 1)); echo "FAILED: $backend: the session did not start"; return; }
    # The user's config, in the session's XDG_CONFIG_HOME, owned by the user.
    local cfg="$SESSION_DIR/xdg/config/kbd-commandd"
    mkdir -p "$cfg"
    cat > "$cfg/config.toml" <<EOF
[osk]
backend = "$backend"

[[command]]
id = "terminal"
title = "Terminal"
keys = "Ctrl+Alt+T"
run = ["/bin/sh", "-c", "echo \"\$WAYLAND_DISPLAY \$(id -un)\" > $work/user/proof"]
EOF
    chown -R "$KBD_USER" "$SESSION_DIR/xdg/config"
    if [ "$backend" = squeekboard ]; then
        "$here/osk-state" squeekboard set true >/dev/null
        check "$backend: squeekboard shows its panel before the keyboard" "$here/osk-state" squeekboard --expect true
        check "$backend: the screenshot shows the panel" "$here/osk-state" panel --expect shown --timeout 10
    else
        check "$backend: wvkbd shows its panel before the keyboard" "$here/osk-state" wvkbd --expect shown
    fi

    # The agent in the session, as the user, started before the service (it waits for it).
    spawn_as_user "$SESSION_DIR/agent.log" "$bin/kbd-commandd-agent" --socket "$work/socket"
    # A second agent of another uid, with its own chord.
    printf '[osk]\nbackend = "none"\n\n[[command]]\nid = "other"\nkeys = "Ctrl+Alt+B"\nrun = ["/bin/sh", "-c", "echo other > %s/nobody/proof"]\n' "$work" > "$work/nobody/config.toml"
    chown nobody "$work/nobody/config.toml"
    setpriv --reuid=nobody --regid=nogroup --clear-groups env -i HOME="$work/nobody" PATH=/usr/bin:/bin \
        "$bin/kbd-commandd-agent" --config "$work/nobody/config.toml" --socket "$work/socket" >"$work/nobody.log" 2>&1 &
    other_pid=$!

    "$bin/kbd-commandd-daemon" --config "$work/system.toml" --socket "$work/socket" --user-agents \
        --replay "$here/ctrl-alt-t.evemu" >"$work/service.log" 2>&1 &
    service_pid=$!

    check "$backend: both agents register with the service" \
        wait_for 10 eval "[ \$(grep -c 'registered 1 commands' '$work/service.log' '$SESSION_DIR/agent.log' '$work/nobody.log' 2>/dev/null | awk -F: '{s+=\$2} END {print s}') -ge 2 ]"
    if [ "$backend" = squeekboard ]; then
        check "$backend: hidden while the hardware keyboard is present" "$here/osk-state" squeekboard --expect false --timeout 10
        check "$backend: the screenshot shows no panel" "$here/osk-state" panel --expect hidden --timeout 10
    else
        check "$backend: hidden while the hardware keyboard is present" "$here/osk-state" wvkbd --expect hidden --timeout 10
    fi
    check "$backend: the command ran as $KBD_USER with the session's WAYLAND_DISPLAY" \
        wait_for 10 eval "grep -qx 'wayland-[0-9]* $KBD_USER' '$work/user/proof' 2>/dev/null"
    if [ "$backend" = squeekboard ]; then
        check "$backend: shown again after the keyboard left" "$here/osk-state" squeekboard --expect true --timeout 10
        check "$backend: the screenshot shows the panel again" "$here/osk-state" panel --expect shown --timeout 10
    else
        check "$backend: shown again after the keyboard left" "$here/osk-state" wvkbd --expect shown --timeout 10
    fi
    check "$backend: the other uid's agent got none of the first agent's commands" \
        eval "[ ! -e '$work/nobody/proof' ] && ! grep -q 'command terminal' '$work/nobody.log'"
    check "$backend: nothing typed reached a log" \
        eval "! grep -qi 'KEY_T\\|keysym' '$work/service.log' '$SESSION_DIR/agent.log' '$work/nobody.log'"
    if [ $failed -gt 0 ]; then
        echo "--- service"; cat "$work/service.log"; echo "--- agent"; cat "$SESSION_DIR/agent.log"; echo "--- other agent"; cat "$work/nobody.log"
    fi
    cleanup
}

scenario squeekboard
scenario wvkbd
rm -rf "$work"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
