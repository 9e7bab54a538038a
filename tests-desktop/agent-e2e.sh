#!/bin/bash
# The session agent end to end with the real desktop (issue 13): a headless sway session
# as the unprivileged KBD_USER with squeekboard, then with wvkbd, then with GNOME's
# setting (GSettings through dconf on the session bus); the service (root) replays a USB
# keyboard that attaches, types Ctrl+Alt+T and detaches (ctrl-alt-t.evemu); the agent, in
# the session, hides the on-screen keyboard at attach, runs the bound program as the user
# with the session's WAYLAND_DISPLAY, and shows the keyboard again after the detach (a
# GNOME screen keyboard the user had switched off stays off; that run also lets `auto`
# find GNOME through XDG_CURRENT_DESKTOP). A second agent of another uid (nobody)
# registers its own table and must get none of the first agent's commands.
#
# Run session-switch: users switch at the seat (issue 25). The service follows logind
# (simulated: lib.sh's logind_daemon and logind_switch) and replays Ctrl+Alt+T at 4, 10 and
# 16 s (session-switch.evemu); the user's agent and nobody's bind it. Between 4 and 10 s
# seat0's active session becomes nobody's, before 16 s the user's again: the user's command
# runs at 4 and 16 s only, nobody's at 10 s only, and both agents hear each switch (the
# session event).
#
#   tests-desktop/agent-e2e.sh [BUILD_DIR]      (root; setup-host.sh first)
#   SCENARIOS="kwin kwin-off" tests-desktop/agent-e2e.sh …    only these runs
#
# Ends with "N passed, N failed"; exit 1 when something failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run agent-e2e "${1:-$here/../.build/debug}" kbd-commandd-daemon kbd-commandd-agent


service_pid=
other_pid=
cleanup() {
    [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null
    [ -n "$other_pid" ] && kill "$other_pid" 2>/dev/null && wait "$other_pid" 2>/dev/null
    service_pid= other_pid=
    "$here/session.sh" stop >/dev/null 2>&1 || true
}
# Each run stops what it started (cleanup); the run's folders go at the end.
trap 'cleanup; remove_throwaway' EXIT

# GNOME's setting, read or written as the user in the session (dconf in its XDG_CONFIG_HOME).
a11y_key=(org.gnome.desktop.a11y.applications screen-keyboard-enabled)
gnome_setting() { as_user gsettings get "${a11y_key[@]}"; }
gnome_setting_is() { [ "$(gnome_setting 2>/dev/null)" = "$1" ]; }
# KWin's virtual keyboard switch (org.kde.kwin.VirtualKeyboard enabled), as the user.
kwin_vk=(org.kde.KWin /VirtualKeyboard org.kde.kwin.VirtualKeyboard enabled)
kwin_enabled_is() { [ "$(as_user busctl --user get-property "${kwin_vk[@]}" 2>/dev/null)" = "b $1" ]; }

# One run: $1 is the scenario: squeekboard, wvkbd, gnome (the setting true before the
# keyboard) or gnome-off (false before, and backend = "auto" in a session that says GNOME),
# kwin (a KWin session, its virtual keyboard enabled before) or kwin-off (disabled before,
# backend = "auto", which finds org.kde.KWin on the bus).
scenario() {
    local backend=$1 before=true osk_backend=$1
    case $1 in
        gnome-off) backend=gnome before=false osk_backend=auto ;;
        kwin-off) backend=kwin before=false osk_backend=auto ;;
    esac
    rm -rf "$work"
    mkdir -p "$work/nobody" "$work/user"
    chown "$KBD_USER" "$work/user"
    chmod 755 "$work"
    chown nobody "$work/nobody"
    printf '' > "$work/system.toml"
    chmod 644 "$work/system.toml"

    local session=("--$backend")
    [ "$backend" != gnome ] || session=()
    "$here/session.sh" start "${session[@]}" >/dev/null || { failed=$((failed + 1)); echo "FAILED: $1: the session did not start"; return; }
    # The user's config, in the session's XDG_CONFIG_HOME, owned by the user.
    local cfg="$SESSION_DIR/xdg/config/kbd-commandd"
    mkdir -p "$cfg"
    cat > "$cfg/config.toml" <<EOF
[osk]
backend = "$osk_backend"
on_present = ["/bin/sh", "-c", "echo present >> $work/user/presence"]
on_absent = ["/bin/sh", "-c", "echo absent >> $work/user/presence"]

[[command]]
id = "terminal"
title = "Terminal"
keys = "Ctrl+Alt+T"
run = ["/bin/sh", "-c", "echo \"\$WAYLAND_DISPLAY \$(id -un)\" > $work/user/proof"]
EOF
    chown -R "$KBD_USER" "$SESSION_DIR/xdg/config"
    if [ "$backend" = squeekboard ]; then
        "$here/osk-state" squeekboard set true >/dev/null
        check "$1: squeekboard shows its panel before the keyboard" "$here/osk-state" squeekboard --expect true
        check "$1: the screenshot shows the panel" "$here/osk-state" panel --expect shown --timeout 10
    elif [ "$backend" = gnome ]; then
        as_user gsettings set "${a11y_key[@]}" "$before"
        check "$1: screen-keyboard-enabled is $before before the keyboard" gnome_setting_is "$before"
    elif [ "$backend" = kwin ]; then
        as_user busctl --user set-property "${kwin_vk[@]}" b "$before"
        check "$1: KWin's virtual keyboard enabled is $before before the keyboard" kwin_enabled_is "$before"
    else
        check "$1: wvkbd shows its panel before the keyboard" "$here/osk-state" wvkbd --expect shown
    fi

    # The agent in the session, as the user, started before the service (it waits for it).
    # gnome-off: a GNOME session as far as XDG_CURRENT_DESKTOP tells (what auto looks at).
    local EXTRA_ENV=()
    [ "$1" != gnome-off ] || EXTRA_ENV=(XDG_CURRENT_DESKTOP=GNOME)
    # kwin-off: a Plasma session says KDE (auto goes by the desktop, never by a bus name).
    [ "$1" != kwin-off ] || EXTRA_ENV=(XDG_CURRENT_DESKTOP=KDE)
    start_agent
    unset EXTRA_ENV
    # A second agent of another uid, with its own chord.
    printf '[osk]\nbackend = "none"\n\n[[command]]\nid = "other"\nkeys = "Ctrl+Alt+B"\nrun = ["/bin/sh", "-c", "echo other > %s/nobody/proof"]\n' "$work" > "$work/nobody/config.toml"
    chown nobody "$work/nobody/config.toml"
    setpriv --reuid=nobody --regid=nogroup --clear-groups env -i HOME="$work/nobody" PATH=/usr/bin:/bin \
        "$bin/kbd-commandd-agent" --config "$work/nobody/config.toml" --socket "$work/socket" >"$work/nobody.log" 2>&1 &
    other_pid=$!

    start_service "$here/ctrl-alt-t.evemu"

    check "$1: both agents register with the service" \
        wait_for 10 eval "[ \$(grep -c 'registered 1 commands' '$work/service.log' '$SESSION_DIR/agent.log' '$work/nobody.log' 2>/dev/null | awk -F: '{s+=\$2} END {print s}') -ge 2 ]"
    if [ "$backend" = squeekboard ]; then
        check "$1: hidden while the hardware keyboard is present" "$here/osk-state" squeekboard --expect false --timeout 10
        check "$1: the screenshot shows no panel" "$here/osk-state" panel --expect hidden --timeout 10
    elif [ "$1" = gnome ]; then
        check "$1: screen-keyboard-enabled false while the hardware keyboard is present" wait_for 10 gnome_setting_is false
    elif [ "$1" = gnome-off ]; then
        check "$1: auto found GNOME, whose screen keyboard was off, and left it so" \
            wait_for 10 grep -q "GNOME's screen keyboard .* was off; left as it is" "$SESSION_DIR/agent.log"
    elif [ "$1" = kwin ]; then
        check "$1: KWin's virtual keyboard disabled while the hardware keyboard is present" wait_for 10 kwin_enabled_is false
    elif [ "$1" = kwin-off ]; then
        check "$1: auto found KWin, whose virtual keyboard was disabled, and left it so" \
            wait_for 10 grep -q "KWin's virtual keyboard was off; left as it is" "$SESSION_DIR/agent.log"
    else
        check "$1: hidden while the hardware keyboard is present" "$here/osk-state" wvkbd --expect hidden --timeout 10
    fi
    check "$1: the command ran as $KBD_USER with the session's WAYLAND_DISPLAY" \
        wait_for 10 eval "grep -qx 'wayland-[0-9]* $KBD_USER' '$work/user/proof' 2>/dev/null"
    if [ "$backend" = squeekboard ]; then
        check "$1: shown again after the keyboard left" "$here/osk-state" squeekboard --expect true --timeout 10
        check "$1: the screenshot shows the panel again" "$here/osk-state" panel --expect shown --timeout 10
    elif [ "$backend" = gnome ] || [ "$backend" = kwin ]; then
        # on_absent runs after the agent restored the setting: then it must be what it was.
        # (The agent also runs it when it connects while no keyboard is present.)
        check "$1: the agent saw the keyboard leave" wait_for 10 eval "tr '\\n' ' ' < '$work/user/presence' | matches 'present absent'"
        if [ "$backend" = gnome ]; then
            check "$1: screen-keyboard-enabled is $before again after the keyboard left" gnome_setting_is "$before"
        else
            check "$1: KWin's virtual keyboard enabled is $before again after the keyboard left" kwin_enabled_is "$before"
        fi
    else
        check "$1: shown again after the keyboard left" "$here/osk-state" wvkbd --expect shown --timeout 10
    fi
    check "$1: the other uid's agent got none of the first agent's commands" \
        eval "[ ! -e '$work/nobody/proof' ] && ! grep -q 'command terminal' '$work/nobody.log'"
    check "$1: nothing typed reached a log" \
        eval "! grep -qi 'KEY_T\\|keysym' '$work/service.log' '$SESSION_DIR/agent.log' '$work/nobody.log'"
    if [ $failed -gt 0 ]; then
        echo "--- service"; cat "$work/service.log"; echo "--- agent"; cat "$SESSION_DIR/agent.log"; echo "--- other agent"; cat "$work/nobody.log"
    fi
    cleanup
}

# Sleeps until SECONDS after the service started (its replay's clock).
at() { local until=$(( service_t0 + $1 * 1000000 )); while [ "$(now_us)" -lt "$until" ]; do sleep 0.05; done; }
lines_in() { grep -c . "$1" 2>/dev/null || echo 0; }
count_is() { [ "$(grep -c "$2" "$1" 2>/dev/null)" = "$3" ]; }

switch_scenario() {
    local run=session-switch
    rm -rf "$work"
    mkdir -p "$work/nobody" "$work/user"
    chown "$KBD_USER" "$work/user"
    chown nobody "$work/nobody"
    chmod 755 "$work"
    printf '' > "$work/system.toml"
    chmod 644 "$work/system.toml"
    "$here/session.sh" start >/dev/null || { failed=$((failed + 1)); echo "FAILED: $run: the session did not start"; return; }
    local cfg="$SESSION_DIR/xdg/config/kbd-commandd"
    mkdir -p "$cfg"
    printf '[osk]\nbackend = "none"\n\n[[command]]\nid = "terminal"\nkeys = "Ctrl+Alt+T"\nrun = ["/bin/sh", "-c", "echo terminal >> %s/user/proof"]\n' "$work" > "$cfg/config.toml"
    chown -R "$KBD_USER" "$SESSION_DIR/xdg/config"
    start_agent
    # nobody: a second user at the same seat, with the same chord.
    printf '[osk]\nbackend = "none"\n\n[[command]]\nid = "other"\nkeys = "Ctrl+Alt+T"\nrun = ["/bin/sh", "-c", "echo other >> %s/nobody/proof"]\n' "$work" > "$work/nobody/config.toml"
    chown nobody "$work/nobody/config.toml"
    setpriv --reuid=nobody --regid=nogroup --clear-groups env -i HOME="$work/nobody" PATH=/usr/bin:/bin \
        "$bin/kbd-commandd-agent" --config "$work/nobody/config.toml" --socket "$work/socket" >"$work/nobody.log" 2>&1 &
    other_pid=$!
    start_service "$here/session-switch.evemu"
    check "$run: both agents register with the service" \
        wait_for 10 eval "[ \$(grep -c 'registered 1 commands' '$SESSION_DIR/agent.log' '$work/nobody.log' 2>/dev/null | awk -F: '{s+=\$2} END {print s}') -ge 2 ]"
    local away="another session is active" back="this user's session is active"
    check "$run: Ctrl+Alt+T at 4 s ran the user's command (the user's session is active)" wait_for 8 eval "[ \$(lines_in '$work/user/proof') = 1 ]"
    check "$run: and not nobody's" eval "[ \$(lines_in '$work/nobody/proof') = 0 ]"
    local user_back_before
    user_back_before=$(grep -c "$back" "$SESSION_DIR/agent.log")
    logind_switch "$service_pid" nobody
    check "$run: the user's agent hears that another session is active" wait_for 5 grep -q "$away" "$SESSION_DIR/agent.log"
    check "$run: nobody's agent hears that its session is active" wait_for 5 grep -q "$back" "$work/nobody.log"
    at 11
    check "$run: Ctrl+Alt+T at 10 s ran nobody's command" wait_for 3 eval "[ \$(lines_in '$work/nobody/proof') = 1 ]"
    check "$run: and not the user's (its session is not active)" eval "[ \$(lines_in '$work/user/proof') = 1 ]"
    logind_switch "$service_pid" "$KBD_USER"
    check "$run: the user's agent hears its session is active again" \
        wait_for 5 eval "[ \$(grep -c \"$back\" '$SESSION_DIR/agent.log') -gt $user_back_before ]"
    check "$run: nobody's agent hears another session is active" wait_for 5 grep -q "$away" "$work/nobody.log"
    at 17
    check "$run: Ctrl+Alt+T at 16 s ran the user's command again" wait_for 3 eval "[ \$(lines_in '$work/user/proof') = 2 ]"
    check "$run: and not nobody's" eval "[ \$(lines_in '$work/nobody/proof') = 1 ]"
    if [ $failed -gt 0 ]; then
        echo "--- service"; cat "$work/service.log"; echo "--- agent"; cat "$SESSION_DIR/agent.log"; echo "--- other agent"; cat "$work/nobody.log"
    fi
    cleanup
}

for s in ${SCENARIOS:-squeekboard wvkbd gnome gnome-off kwin kwin-off session-switch}; do
    if [ "$s" = session-switch ]; then switch_scenario; else scenario "$s"; fi
done
rm -rf "$work"
summary
