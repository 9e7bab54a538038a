#!/bin/bash
# A headless desktop session for tests, run as the unprivileged KBD_USER (see lib.sh):
# sway (WLR_BACKENDS=headless, pixman, no libinput devices) inside dbus-run-session with
# a private XDG_RUNTIME_DIR, and optionally squeekboard and wvkbd-mobintl. Run as root
# (setup-host.sh first).
#
#   session.sh start [--squeekboard] [--wvkbd | --wvkbd-hidden]
#                        starts a fresh session (stopping what is left of an earlier one
#                        in this SESSION_DIR) and prints the path of session.env
#                        (WAYLAND_DISPLAY, SWAYSOCK, I3SOCK, DBUS_SESSION_BUS_ADDRESS,
#                        XDG_RUNTIME_DIR, KBD_DESKTOP_SESSION as KEY=value lines)
#   session.sh start --kwin
#                        the same with KDE's KWin (kwin_wayland --virtual) instead of
#                        sway; returns once KWin owns org.kde.KWin on the session bus
#                        (no SWAYSOCK, no reference screenshot: grim needs wlroots)
#   session.sh start --x11
#                        the same with X11: Xvfb (a free display, -displayfd) and i3 inside
#                        dbus-run-session; session.env has DISPLAY and I3SOCK instead
#   session.sh squeekboard
#                        starts squeekboard; returns once it owns sm.puri.OSK0
#   session.sh wvkbd [--hidden]
#                        starts wvkbd-mobintl; returns (printing its pid) once it takes
#                        SIGUSR1/SIGUSR2 (before that they would kill it)
#   session.sh env       prints session.env
#   session.sh run CMD…  runs CMD as KBD_USER inside the session (its environment,
#                        XDG_CONFIG_HOME=$SESSION_DIR/xdg/config), in the foreground
#   session.sh stop      stops every process of the session, however it was started;
#                        exit 1 if one is left
#
# Each readiness wait has WAIT_SECONDS (20). Timings go to stderr.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

require_root() { [ "$(id -u)" = 0 ] || die "run as root (the session runs as $KBD_USER)"; }
require_session() { [ -s "$ENV_FILE" ] || die "no session in $SESSION_DIR: run '$0 start' first"; }

start_squeekboard() {
    require_session
    if dbus_name_has_owner sm.puri.OSK0; then echo "squeekboard is already running" >&2; return 0; fi
    local t0; t0=$(now_us)
    spawn_as_user "$SESSION_DIR/squeekboard.log" squeekboard
    echo "$SPAWNED_PID" > "$SESSION_DIR/squeekboard.pid"
    wait_for "$WAIT_SECONDS" dbus_name_has_owner sm.puri.OSK0 \
        || { cat "$SESSION_DIR/squeekboard.log" >&2; die "squeekboard did not own sm.puri.OSK0 within ${WAIT_SECONDS}s"; }
    echo "squeekboard (pid $SPAWNED_PID) owns sm.puri.OSK0 after $(since "$t0")s" >&2
}

start_wvkbd() {
    require_session
    local existing
    existing=$(pids_named wvkbd-mobintl)
    if [ -n "$existing" ]; then echo "wvkbd is already running" >&2; echo "$existing"; return 0; fi
    local t0; t0=$(now_us)
    spawn_as_user "$SESSION_DIR/wvkbd.log" wvkbd-mobintl "$@"
    local pid=$SPAWNED_PID
    echo "$pid" > "$SESSION_DIR/wvkbd.pid"
    # It reads its signals through a signalfd: ready once SIGUSR1 (bit 10) and SIGUSR2
    # (bit 12) are blocked (SigBlk mask 0xa00).
    signals_ready() {
        local mask
        mask=$(awk '/^SigBlk:/ { print $2 }' "/proc/$pid/status") || return 1
        [ $(( 0x$mask & 0xa00 )) = $(( 0xa00 )) ]
    }
    wait_for "$WAIT_SECONDS" signals_ready \
        || { cat "$SESSION_DIR/wvkbd.log" >&2; die "wvkbd did not get ready for its signals within ${WAIT_SECONDS}s"; }
    case " $* " in
        *" --hidden "*) ;;
        # Shown: wait until its panel was configured.
        *) wait_for "$WAIT_SECONDS" grep -q '^Resize' "$SESSION_DIR/wvkbd.log" \
               || { cat "$SESSION_DIR/wvkbd.log" >&2; die "wvkbd did not show its panel within ${WAIT_SECONDS}s"; } ;;
    esac
    echo "wvkbd-mobintl (pid $pid) ready after $(since "$t0")s" >&2
    echo "$pid"
}

start() {
    require_root
    local squeekboard=0 wvkbd=() kwin=0 x11=0
    while [ $# -gt 0 ]; do
        case $1 in
            --x11) x11=1 ;;
            --squeekboard) squeekboard=1 ;;
            --wvkbd) wvkbd=(--shown) ;;
            --wvkbd-hidden) wvkbd=(--hidden) ;;
            --kwin) kwin=1 ;;
            *) die "unknown option '$1' (start [--squeekboard] [--wvkbd | --wvkbd-hidden] | start --kwin | start --x11)" ;;
        esac
        shift
    done
    [ "$kwin" = 0 ] || [ "$squeekboard$((${#wvkbd[@]}))" = 00 ] || die "--kwin is a session of its own (KWin has its virtual keyboard)"
    id "$KBD_USER" >/dev/null 2>&1 || die "no user $KBD_USER: run tests-desktop/setup-host.sh first"
    local t0; t0=$(now_us)
    [ -z "$(marked_pids)" ] || stop >/dev/null 2>&1 || true

    install -d -m 0755 "$SESSION_DIR" "$SESSION_DIR/shots"
    rm -f "$SESSION_DIR/kind" "$SESSION_DIR/compositor"   # what stop() reads: this session's, not the last one's
    rm -rf "$RUNTIME_DIR" "$SESSION_DIR/xdg"
    install -d -m 0700 -o "$KBD_USER" -g "$KBD_USER" "$RUNTIME_DIR" "$SESSION_DIR/xdg" \
        "$SESSION_DIR/xdg/config" "$SESSION_DIR/xdg/cache" "$SESSION_DIR/xdg/data" "$SESSION_DIR/xdg/state"
    # sway runs this once it is up: its environment (WAYLAND_DISPLAY, SWAYSOCK, the bus)
    # written atomically, so a reader never sees half a file.
    cat > "$SESSION_DIR/write-env.sh" <<'SH'
#!/bin/sh
f=$XDG_RUNTIME_DIR/session.env
for v in WAYLAND_DISPLAY DISPLAY SWAYSOCK I3SOCK DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR XDG_CURRENT_DESKTOP KBD_DESKTOP_SESSION; do
    eval "value=\${$v-}"
    [ -n "$value" ] && printf '%s=%s\n' "$v" "$value"
done > "$f.tmp" && mv "$f.tmp" "$f"
SH
    chmod 0755 "$SESSION_DIR/write-env.sh"
    if [ "$x11" = 1 ]; then start_x11 "$t0"; return; fi
    echo sway > "$SESSION_DIR/kind"
    cat > "$SESSION_DIR/sway.conf" <<CONF
xwayland disable
output HEADLESS-1 mode $OUTPUT_MODE position 0 0
exec $SESSION_DIR/write-env.sh
CONF
    chmod 0644 "$SESSION_DIR/sway.conf"

    if [ "$kwin" = 1 ]; then start_kwin "$t0"; return; fi
    echo sway > "$SESSION_DIR/compositor"

    # dbus-run-session starts a bus, runs sway on it, and ends the bus when sway exits.
    EXTRA_ENV=(WLR_BACKENDS=headless WLR_RENDERER=pixman WLR_LIBINPUT_NO_DEVICES=1 XDG_CURRENT_DESKTOP=sway XDG_SESSION_TYPE=wayland)
    spawn_as_user "$SESSION_DIR/sway.log" setsid dbus-run-session -- sway -c "$SESSION_DIR/sway.conf"
    unset EXTRA_ENV
    echo "$SPAWNED_PID" > "$SESSION_DIR/session.pid"
    wait_for "$WAIT_SECONDS" test -s "$ENV_FILE" \
        || { tail -20 "$SESSION_DIR/sway.log" >&2; die "sway did not write $ENV_FILE within ${WAIT_SECONDS}s"; }
    wait_for "$WAIT_SECONDS" as_user swaymsg -t get_version \
        || { tail -20 "$SESSION_DIR/sway.log" >&2; die "sway's IPC did not answer within ${WAIT_SECONDS}s"; }
    # The desktop before any keyboard panel: what osk-state compares the bottom band with.
    screenshot_ppm > "$SESSION_DIR/empty.ppm"
    echo "sway ready after $(since "$t0")s" >&2

    [ "$squeekboard" = 0 ] || start_squeekboard
    if [ ${#wvkbd[@]} -gt 0 ]; then
        if [ "${wvkbd[0]}" = --hidden ]; then start_wvkbd --hidden >/dev/null; else start_wvkbd >/dev/null; fi
    fi
    echo "session ready after $(since "$t0")s" >&2
    echo "$ENV_FILE"
}

# KWin (Plasma 5.27's kwin_wayland) headless: --virtual renders to memory (llvmpipe);
# the programs after its options start once it is up, with its WAYLAND_DISPLAY.
# It runs from a copy in SESSION_DIR: Debian gives /usr/bin/kwin_wayland the file
# capability cap_sys_resource, and exec fails (EPERM) wherever that capability is not in
# the bounding set, as in containers; a copy has none. The copy keeps the name: KWin's
# own Qt platform plugin refuses to load into a binary not named kwin_wayland.
start_kwin() {
    local t0=$1
    command -v kwin_wayland >/dev/null || die "kwin_wayland is not installed: run tests-desktop/setup-host.sh"
    echo kwin > "$SESSION_DIR/compositor"
    rm -f "$SESSION_DIR/empty.ppm"
    install -d -m 0755 "$SESSION_DIR/bin"
    cp "$(command -v kwin_wayland)" "$SESSION_DIR/bin/kwin_wayland"
    local width=${OUTPUT_MODE%x*} height=${OUTPUT_MODE#*x}
    EXTRA_ENV=(XDG_CURRENT_DESKTOP=KDE XDG_SESSION_TYPE=wayland)
    spawn_as_user "$SESSION_DIR/kwin.log" setsid dbus-run-session -- "$SESSION_DIR/bin/kwin_wayland" --virtual --no-lockscreen \
        --width "$width" --height "$height" --socket wayland-1 "$SESSION_DIR/write-env.sh"
    unset EXTRA_ENV
    echo "$SPAWNED_PID" > "$SESSION_DIR/session.pid"
    wait_for "$WAIT_SECONDS" test -s "$ENV_FILE" \
        || { tail -20 "$SESSION_DIR/kwin.log" >&2; die "KWin did not write $ENV_FILE within ${WAIT_SECONDS}s"; }
    wait_for "$WAIT_SECONDS" dbus_name_has_owner org.kde.KWin \
        || { tail -20 "$SESSION_DIR/kwin.log" >&2; die "KWin did not own org.kde.KWin within ${WAIT_SECONDS}s"; }
    echo "KWin ready after $(since "$t0")s" >&2
    echo "$ENV_FILE"
}

# Xvfb on a display it picks (-displayfd) and i3 on it, inside dbus-run-session.
start_x11() {
    local t0=$1
    [ -d /tmp/.X11-unix ] || die "/tmp/.X11-unix is missing: run tests-desktop/setup-host.sh"
    echo x11 > "$SESSION_DIR/kind"
    rm -f "$SESSION_DIR/display"
    ( cd / && AS_USER_EXEC=1 as_user setsid Xvfb -displayfd 3 -screen 0 "${OUTPUT_MODE}x24" -nolisten tcp -noreset ) \
        3>"$SESSION_DIR/display" </dev/null >"$SESSION_DIR/xvfb.log" 2>&1 &
    wait_for "$WAIT_SECONDS" grep -q . "$SESSION_DIR/display" \
        || { cat "$SESSION_DIR/xvfb.log" >&2; die "Xvfb did not accept clients within ${WAIT_SECONDS}s"; }
    local display=:$(tr -dc 0-9 < "$SESSION_DIR/display")
    # The first line matters: without it i3 4.22 converts the file as a v3 config (and adds a bar).
    cat > "$SESSION_DIR/i3.conf" <<CONF
# i3 config file (v4)
font pango:DejaVu Sans Mono 8
ipc-socket $RUNTIME_DIR/i3-ipc.sock
focus_follows_mouse no
exec --no-startup-id $SESSION_DIR/write-env.sh
CONF
    chmod 0644 "$SESSION_DIR/i3.conf"
    EXTRA_ENV=(DISPLAY="$display" XDG_CURRENT_DESKTOP=i3 XDG_SESSION_TYPE=x11)
    spawn_as_user "$SESSION_DIR/i3.log" setsid dbus-run-session -- i3 -c "$SESSION_DIR/i3.conf"
    unset EXTRA_ENV
    echo "$SPAWNED_PID" > "$SESSION_DIR/session.pid"
    wait_for "$WAIT_SECONDS" test -s "$ENV_FILE" \
        || { tail -20 "$SESSION_DIR/i3.log" >&2; die "i3 did not write $ENV_FILE within ${WAIT_SECONDS}s"; }
    wait_for "$WAIT_SECONDS" as_user i3-msg -t get_version \
        || { tail -20 "$SESSION_DIR/i3.log" >&2; die "i3's IPC did not answer within ${WAIT_SECONDS}s"; }
    echo "Xvfb $display and i3 ready after $(since "$t0")s" >&2
    echo "$ENV_FILE"
}

stop() {
    local t0; t0=$(now_us)
    local seen
    seen=$(marked_pids)
    # wvkbd 0.12 does not exit when its compositor goes away, it spins: it goes first.
    local p
    for p in $(pids_named wvkbd-mobintl); do kill -TERM "$p" 2>/dev/null || true; done
    # Then the compositor: its clients exit when it does, and dbus-run-session ends the bus.
    if [ "$(cat "$SESSION_DIR/compositor" 2>/dev/null)" = kwin ]; then
        for p in $(pids_named kwin_wayland); do kill -TERM "$p" 2>/dev/null || true; done
    elif [ "$(cat "$SESSION_DIR/kind" 2>/dev/null)" = x11 ]; then
        if [ -s "$ENV_FILE" ]; then timeout 3 bash -c '. "$0"; as_user i3-msg exit' "$DESKTOP_DIR/lib.sh" >/dev/null 2>&1 || true; fi
        # X clients outlive i3 but not the X server.
        for p in $(pids_named Xvfb); do kill -TERM "$p" 2>/dev/null || true; done
    elif [ -s "$ENV_FILE" ]; then
        timeout 3 bash -c '. "$0"; as_user swaymsg exit' "$DESKTOP_DIR/lib.sh" >/dev/null 2>&1 || true
    fi
    wait_for 3 test -z "$(marked_pids)" || true
    local left signal
    for signal in TERM KILL; do
        left=$(marked_pids)
        [ -n "$left" ] || break
        echo "SIG$signal to: $(for p in $left; do printf '%s(%s) ' "$p" "$(cat "/proc/$p/comm" 2>/dev/null)"; done)" >&2
        # shellcheck disable=SC2086
        kill -"$signal" $left 2>/dev/null || true
        wait_for 3 test -z "$(marked_pids)" || true
    done
    left=$(marked_pids)
    rm -f "$ENV_FILE"
    # Orphans belong to PID 1, which may reap them late: until then they are zombies that
    # `ps -u` still lists. Wait for them to be gone too.
    all_gone() { local q; for q in $seen; do [ ! -e "/proc/$q" ] || return 1; done; }
    wait_for 5 all_gone || echo "not reaped yet: $(for q in $seen; do [ -e "/proc/$q" ] && printf '%s ' "$q"; done)" >&2
    if [ -n "$left" ]; then echo "still running: $left" >&2; return 1; fi
    echo "session stopped after $(since "$t0")s" >&2
}

case ${1:-} in
    start) shift; start "$@" ;;
    stop) require_root; stop ;;
    squeekboard) require_root; start_squeekboard ;;
    wvkbd) require_root; shift; start_wvkbd "$@" ;;
    env) require_session; cat "$ENV_FILE" ;;
    run) shift; require_session; [ $# -gt 0 ] || die "run CMD…"; cd /; as_user "$@" ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64 ;;
esac
