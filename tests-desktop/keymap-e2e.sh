#!/bin/bash
# The desktop's layout reaches the service (issue 26, item 3), with the real desktops. In
# each run the session agent (as the unprivileged KBD_USER) reads the desktop's layouts and
# the active one and sends set_keymap; the service (root) replays ctrl-y-twice.evemu: Ctrl
# and the key at the US Y position at 6 s and 12 s. The user's config binds Ctrl+Z (undo)
# and Ctrl+Y (redo). Before the first key the test switches the desktop to the German
# layout: the key there types z, so undo runs; before the second it switches back: redo
# runs. When the agent stops, the service maps with its own keymap again.
#
#   sway   headless sway with squeekboard's virtual keyboard (sway lists only real
#          keyboards, and the headless session has no other) set to `xkb_layout "us,de"`;
#          the agent reads sway's IPC (get_inputs, then input events); the switch is
#          `swaymsg input type:keyboard xkb_switch_layout 1`.
#   gnome  XDG_CURRENT_DESKTOP=GNOME (no sway socket given to the agent) in the session's
#          bus, GSettings through the real dconf (dconf-service, dconf-gsettings-backend) and
#          the real schema: `gsettings set org.gnome.desktop.input-sources sources
#          "[('xkb','us'),('xkb','de+nodeadkeys')]"`; the switch is what GNOME Shell writes,
#          the active source first in mru-sources.
#   kde    KDE's KWin (Plasma 5.27's kwin_wayland --virtual): the test writes kxkbrc
#          (LayoutList=us,de, VariantList=,nodeadkeys) and sends KDE's reloadConfig signal, as
#          the keyboard settings do; KWin then serves org.kde.keyboard (/Layouts,
#          org.kde.KeyboardLayouts), and the switch is its setLayout(1) (what the layout
#          switcher calls).
#
#   tests-desktop/keymap-e2e.sh [BUILD_DIR] [sway|gnome|kde …]   (root; setup-host.sh first)
#
# Ends with "N passed, N failed"; exit 1 when something failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
build=${1:-$here/../.build/debug}
[ $# -gt 0 ] && shift
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(sway gnome kde)
throwaway_run keymap "$build" kbd-commandd-daemon kbd-commandd-agent

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

# The user's config, then the service replaying the two key presses and the agent (with
# EXTRA_ENV, when set).
start_keymap_run() {
    local cfg="$SESSION_DIR/xdg/config/kbd-commandd"
    mkdir -p "$cfg"
    cat > "$cfg/config.toml" <<TOML
[osk]
backend = "none"

[text_input]
source = "none"

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
    start_service_and_agent --debug "$here/ctrl-y-twice.evemu"
}

# The two keys, around the desktop's switches: SWITCH_TO_DE and SWITCH_TO_US are commands.
keys_follow_the_switches() {
    local name=$1 layout=$2 variant=$3
    check "$name: the desktop's switch to the German layout reaches the service (group 1)" \
        wait_for 5 service_keymap_is "layout $layout variant $variant group 1"
    check "$name: Ctrl and the key at the Y position, German layout: Ctrl+Z's command runs" wait_for 10 proof_is "undo "
    at 10
    "${switch_to_us[@]}" >/dev/null
    check "$name: switched back to the US layout: the service has group 0" wait_for 3 service_keymap_is "layout $layout variant $variant group 0"
    check "$name: the same key, US layout: Ctrl+Y's command runs" wait_for 10 proof_is "undo redo "
    kill "$agent_pid"; wait "$agent_pid" 2>/dev/null; agent_pid=
    check "$name: the agent gone, the service maps with its own keymap again" wait_for 3 service_keymap_is "the service's own again"
    check "$name: no typed text in the service's log" eval "! grep -qi 'utf8\|\"z\"' '$work/service.log'"
    end_of_run "$name" "$work"
    cleanup
}

run_sway() {
    fresh_work "$work"
    EXTRA_ENV=()
    "$here/session.sh" start >/dev/null || die "the session did not start"
    "$here/session.sh" squeekboard >/dev/null 2>&1 || die "squeekboard did not start"
    wait_for "$WAIT_SECONDS" eval "as_user swaymsg -t get_inputs | matches '\"type\": \"keyboard\"'" || die "sway lists no keyboard"
    as_user swaymsg 'input type:keyboard xkb_layout "us,de"' >/dev/null || die "sway refused the layouts"
    start_keymap_run
    check "sway: the agent reads sway's layouts and sends them (us,de, first layout active)" \
        wait_for 5 eval "grep -q 'keymap: the desktop.s, layout us,de group 0 (sway IPC)' '$SESSION_DIR/agent.log' && service_keymap_is 'layout us,de variant  group 0'"
    as_user swaymsg 'input type:keyboard xkb_switch_layout 1' >/dev/null
    switch_to_us=(as_user swaymsg 'input type:keyboard xkb_switch_layout 0')
    keys_follow_the_switches sway "us,de" ""
}

run_gnome() {
    fresh_work "$work"
    # The session's bus and dconf, without sway's socket: the agent sees a GNOME session.
    "$here/session.sh" start >/dev/null || die "the session did not start"
    EXTRA_ENV=(SWAYSOCK= I3SOCK= XDG_CURRENT_DESKTOP=GNOME)
    local gs=(as_user gsettings set org.gnome.desktop.input-sources)
    "${gs[@]}" sources "[('xkb', 'us'), ('xkb', 'de+nodeadkeys')]" || die "gsettings refused the sources"
    "${gs[@]}" mru-sources "[('xkb', 'us'), ('xkb', 'de+nodeadkeys')]"
    check "gnome: dconf keeps what gsettings wrote" eval "as_user gsettings get org.gnome.desktop.input-sources sources | matches nodeadkeys"
    start_keymap_run
    check "gnome: the agent reads GNOME's input sources and sends them (us,de(nodeadkeys), first active)" \
        wait_for 5 eval "grep -q \"keymap: the desktop's, layout us,de variant ,nodeadkeys group 0 (GNOME's input sources)\" '$SESSION_DIR/agent.log' && service_keymap_is 'layout us,de variant ,nodeadkeys group 0'"
    "${gs[@]}" mru-sources "[('xkb', 'de+nodeadkeys'), ('xkb', 'us')]"
    switch_to_us=("${gs[@]}" mru-sources "[('xkb', 'us'), ('xkb', 'de+nodeadkeys')]")
    keys_follow_the_switches gnome "us,de" ",nodeadkeys"
    EXTRA_ENV=()
}

run_kde() {
    fresh_work "$work"
    EXTRA_ENV=()
    "$here/session.sh" start --kwin >/dev/null || die "the KWin session did not start"
    start_keymap_run
    check "kde: one layout (no org.kde.keyboard, no kxkbrc): nothing reported, the service's own keymap" \
        eval "sleep 1; grep -q 'keymap: follows KDE' '$SESSION_DIR/agent.log' && ! grep -q 'keymap: the desktop' '$SESSION_DIR/agent.log'"
    printf '[Layout]\nDisplayNames=,\nLayoutList=us,de\nOptions=compose:ralt\nResetOldOptions=true\nUse=true\nVariantList=,nodeadkeys\n' \
        > "$SESSION_DIR/xdg/config/kxkbrc"
    chown "$KBD_USER" "$SESSION_DIR/xdg/config/kxkbrc"
    as_user dbus-send --session --type=signal /Layouts org.kde.keyboard.reloadConfig
    check "kde: KWin serves org.kde.keyboard with the two layouts; the agent sends them (first active)" \
        wait_for 5 eval "grep -q \"keymap: the desktop's, layout us,de variant ,nodeadkeys options compose:ralt group 0 (KDE's keyboard layouts)\" '$SESSION_DIR/agent.log' && service_keymap_is 'layout us,de variant ,nodeadkeys group 0'"
    local kb=(as_user busctl --user call org.kde.keyboard /Layouts org.kde.KeyboardLayouts setLayout u)
    "${kb[@]}" 1 >/dev/null
    switch_to_us=("${kb[@]}" 0)
    keys_follow_the_switches kde "us,de" ",nodeadkeys"
}

for run in "${runs[@]}"; do
    case $run in
        sway) run_sway ;;
        gnome) run_gnome ;;
        kde) run_kde ;;
        *) die "unknown run '$run' (sway, gnome, kde)" ;;
    esac
done
rm -rf "$work"
summary
