# Helpers of the desktop harness (tests-desktop/). Sourced, not run.
#
# Knobs (environment):
#   KBD_USER      the unprivileged user every desktop process runs as (default kbdtest;
#                 setup-host.sh creates it). sway refuses to run as root, and the session
#                 bus refuses root's connections, so the tests talk to the desktop as it.
#   SESSION_DIR   one session's folder (default /tmp/kbd-desktop; the harnesses make a
#                 throwaway one per run with throwaway_run): runtime/ is its
#                 XDG_RUNTIME_DIR (0700, KBD_USER) with session.env; xdg/ its XDG config,
#                 cache, data and state homes (so GSettings/dconf writes stay in the
#                 session); logs, pid files, the sway config, empty.ppm (the desktop
#                 before any keyboard panel) and shots/. Two SESSION_DIRs can coexist.
#   OUTPUT_MODE   the headless output (default 1024x768).
#   WAIT_SECONDS  the budget of each readiness wait (default 20).
#
# Every process started through as_user carries KBD_DESKTOP_SESSION=$SESSION_DIR in its
# environment. sway's exec (setsid and a double fork), D-Bus activation and terminals
# all inherit it, so `session.sh stop` finds every process of the session by reading
# /proc/PID/environ, whatever its process group or parent, and stops them by pid.

DESKTOP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KBD_USER=${KBD_USER:-kbdtest}
SESSION_DIR=${SESSION_DIR:-/tmp/kbd-desktop}
RUNTIME_DIR=$SESSION_DIR/runtime
ENV_FILE=$RUNTIME_DIR/session.env
OUTPUT_MODE=${OUTPUT_MODE:-1024x768}
WAIT_SECONDS=${WAIT_SECONDS:-20}
# Debian's interpreter: python3-gi is installed for it, not for a python3 earlier on PATH.
PYTHON=/usr/bin/python3

die() { echo "error: $*" >&2; exit 1; }

# matches GREP_ARGS…: grep for a pipeline's end under pipefail. Unlike `grep -q`, it reads
# its input to the end, so the writer never dies of SIGPIPE (exit 141) after a match.
matches() { grep "$@" >/dev/null; }

# Microseconds of the wall clock (bash 5).
now_us() { echo "${EPOCHREALTIME//[!0-9]/}"; }
# Seconds since a now_us value, with milliseconds.
since() { local d=$(( $(now_us) - $1 )); printf '%d.%03d' $(( d / 1000000 )) $(( d / 1000 % 1000 )); }

# wait_for SECONDS CMD...: runs CMD every 50 ms until it succeeds; fails after SECONDS.
wait_for() {
    local deadline=$(( $(now_us) + $1 * 1000000 )); shift
    until "$@" >/dev/null 2>&1; do
        [ "$(now_us)" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

# as_user CMD...: runs CMD as KBD_USER with a clean environment: the session's variables
# (session.env), per-session XDG homes, the marker, and EXTRA_ENV (an array of NAME=value).
# setpriv, not su or runuser: no PAM, no extra parent, so `as_user … &` gives CMD's own pid.
as_user() {
    local home
    home=$(getent passwd "$KBD_USER" | cut -d: -f6)
    local envs=(HOME="$home" USER="$KBD_USER" LOGNAME="$KBD_USER" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8
                XDG_RUNTIME_DIR="$RUNTIME_DIR" KBD_DESKTOP_SESSION="$SESSION_DIR"
                XDG_CONFIG_HOME="$SESSION_DIR/xdg/config" XDG_CACHE_HOME="$SESSION_DIR/xdg/cache"
                XDG_DATA_HOME="$SESSION_DIR/xdg/data" XDG_STATE_HOME="$SESSION_DIR/xdg/state")
    if [ -r "$ENV_FILE" ]; then
        local line
        while IFS= read -r line; do
            case $line in [A-Z_]*=*) envs+=("$line") ;; esac
        done < "$ENV_FILE"
    fi
    if [ -n "${EXTRA_ENV+x}" ]; then envs+=("${EXTRA_ENV[@]}"); fi
    local prefix=()
    [ "$(id -u)" = "$(id -u "$KBD_USER")" ] || prefix=(setpriv --reuid="$KBD_USER" --regid="$KBD_USER" --init-groups --)
    if [ -n "${AS_USER_EXEC:-}" ]; then exec "${prefix[@]}" env -i "${envs[@]}" "$@"; fi
    "${prefix[@]}" env -i "${envs[@]}" "$@"
}

# spawn_as_user LOG CMD...: starts CMD as KBD_USER in the background from /, stdin from
# /dev/null, output to LOG; SPAWNED_PID is CMD's own pid (the subshell execs into it).
spawn_as_user() {
    local log=$1; shift
    ( cd / && AS_USER_EXEC=1 as_user "$@" ) </dev/null >"$log" 2>&1 &
    SPAWNED_PID=$!
}

# The live processes of this session (root, or KBD_USER itself, can read their environ).
marked_pids() {
    local f p
    for f in $(grep -lszxF "KBD_DESKTOP_SESSION=$SESSION_DIR" /proc/[0-9]*/environ); do
        p=${f#/proc/}; p=${p%/environ}
        [ "$p" = "$$" ] && continue
        # A zombie waits for its (re)parent to reap it: it is not running any more.
        [ "$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)" = Z ] && continue
        [ -e "/proc/$p" ] && echo "$p"
    done
    return 0
}

# The session's live processes named NAME (/proc/PID/comm).
pids_named() {
    local p
    for p in $(marked_pids); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$1" ] && echo "$p"
    done
    return 0
}

session_alive() { [ -s "$ENV_FILE" ] && as_user swaymsg -t get_version >/dev/null 2>&1; }

# dbus_name_has_owner NAME: whether NAME is owned on the session bus.
dbus_name_has_owner() {
    as_user "$PYTHON" -c '
import sys, gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
r = bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                  GLib.Variant("(s)", (sys.argv[1],)), GLib.VariantType("(b)"), Gio.DBusCallFlags.NONE, 2000, None)
sys.exit(0 if r.unpack()[0] else 1)
' "$1"
}

# screenshot_ppm: the whole output as binary PPM on stdout.
screenshot_ppm() { as_user grim -t ppm -; }

# need_root_and_binaries DIR NAME…: the harness runs as root (the session as KBD_USER),
# with DIR/NAME built for every NAME.
need_root_and_binaries() {
    local dir=$1; shift
    [ "$(id -u)" = 0 ] || die "run as root (the session runs as $KBD_USER)"
    local b
    for b in "$@"; do [ -x "$dir/$b" ] || die "$dir/$b is not built"; done
}

# throwaway_run NAME BUILD_DIR BINARY…: this run's own folders, so two runs at once never
# collide: SESSION_DIR and work, each new from mktemp (0755: the session's user reads the
# configs and runs programs from them), and bin ($SESSION_DIR/bin), a copy of each BINARY
# of BUILD_DIR. The session's user runs those copies: it cannot enter a clone kept in a
# 0700 directory (/root, a Debian 12 home). Needs root. remove_throwaway (the EXIT trap)
# removes both folders; KBD_KEEP_RUN=1 keeps them for a look afterwards.
throwaway_run() {
    local name=$1 build=$2; shift 2
    need_root_and_binaries "$build" "$@"
    SESSION_DIR=$(mktemp -d "/tmp/kbd-desktop-$name.XXXXXX")
    work=$(mktemp -d "/tmp/kbd-$name.XXXXXX")
    chmod 755 "$SESSION_DIR" "$work"
    export SESSION_DIR
    RUNTIME_DIR=$SESSION_DIR/runtime
    ENV_FILE=$RUNTIME_DIR/session.env
    bin=$SESSION_DIR/bin
    install -d -m 0755 "$bin"
    local b
    for b in "$@"; do install -m 0755 "$build/$b" "$bin/$b"; done
    # The helper programs KBD_USER runs (text-field.py, spoof-focus.py, bar-standin.py): the
    # clone may sit in a folder that user cannot enter (a 0700 home), so they run from here.
    for b in "$here"/*.py; do install -m 0755 "$b" "$bin/"; done
}
remove_throwaway() {
    [ "${KBD_KEEP_RUN:-0}" = 1 ] && { echo "kept: $SESSION_DIR $work" >&2; return 0; }
    case $SESSION_DIR in /tmp/kbd-desktop-*.*) rm -rf "$SESSION_DIR" ;; esac
    case ${work:-} in /tmp/kbd-*.*) rm -rf "$work" ;; esac
    return 0
}

# logind_daemon CMD…: execs CMD (the service) in a mount namespace of its own, where
# /run/systemd is a tmpfs holding logind's files as sd-login reads them, with KBD_USER's
# session active on seat0: a user's table fires only for the user at the keyboard (issue
# 25), and this machine's init is not systemd. The machine's /run/systemd is not touched.
# `logind_daemon … &` gives the service's own pid (unshare and sh exec into it).
logind_daemon() {
    local uid
    uid=$(id -u "$KBD_USER")
    mkdir -p /run/systemd
    exec unshare -m --propagation private sh -c '
        set -e
        mount -t tmpfs -o mode=0755 tmpfs /run/systemd
        cd /run/systemd && mkdir -p system seats sessions users
        printf "UID=%s\nUSER=%s\nACTIVE=1\nIS_DISPLAY=1\nSTATE=active\nREMOTE=0\nTYPE=wayland\nCLASS=user\nSEAT=seat0\nVTNR=1\n" "$1" "$2" > sessions/1.tmp
        mv sessions/1.tmp sessions/1
        printf "NAME=%s\nSTATE=active\nSESSIONS=1\nSEATS=seat0\nACTIVE_SESSIONS=1\n" "$2" > users/$1.tmp
        mv users/$1.tmp users/$1
        printf "IS_SEAT0=1\nCAN_MULTI_SESSION=1\nCAN_TTY=1\nCAN_GRAPHICAL=1\nACTIVE=1\nACTIVE_UID=%s\nSESSIONS=1\nUIDS=%s\n" "$1" "$1" > seats/seat0.tmp
        mv seats/seat0.tmp seats/seat0
        shift 2
        exec "$@"' sh "$uid" "$KBD_USER" "$@"
}

# start_service REPLAY [ARG…]: the service as root in logind_daemon's namespace, on
# $work/system.toml and $work/socket with --user-agents, replaying REPLAY, with ARGs after
# (e.g. --log-level debug); its output is appended to $work/service.log. Sets service_pid
# and service_t0 (the replay's clock starts with the service).
start_service() {
    local replay=$1; shift
    service_t0=$(now_us)
    logind_daemon "$bin/kbd-commandd-daemon" --config "$work/system.toml" --socket "$work/socket" --user-agents \
        --replay "$replay" "$@" >>"$work/service.log" 2>&1 &
    service_pid=$!
}

# start_agent [ARG…]: the agent as KBD_USER on $work/socket (EXTRA_ENV applies, see as_user;
# AGENT_PREFIX, an array, goes before it, e.g. (env -u I3SOCK)), its output in
# $SESSION_DIR/agent.log. Sets agent_pid.
start_agent() {
    local prefix=()
    if [ -n "${AGENT_PREFIX+x}" ]; then prefix=("${AGENT_PREFIX[@]}"); fi
    spawn_as_user "$SESSION_DIR/agent.log" "${prefix[@]}" "$bin/kbd-commandd-agent" --socket "$work/socket" "$@"
    agent_pid=$SPAWNED_PID
}

# start_service_and_agent [--agent-first] [--debug] REPLAY: the service replaying REPLAY and
# the user's agent. By default the service first (the agent is started once the socket is
# there); --agent-first starts the agent first (it waits for the service, as at login);
# --debug gives both --log-level debug.
start_service_and_agent() {
    local agent_first=0 level=()
    while :; do
        case $1 in
            --agent-first) agent_first=1; shift ;;
            --debug) level=(--log-level debug); shift ;;
            *) break ;;
        esac
    done
    if [ "$agent_first" = 1 ]; then
        start_agent "${level[@]}"
        start_service "$1" "${level[@]}"
    else
        start_service "$1" "${level[@]}"
        wait_for 5 test -S "$work/socket"
        start_agent "${level[@]}"
    fi
}

# logind_switch PID WHO: in the mount namespace of the service logind_daemon started (its
# pid), makes WHO's session the active one on seat0, as a switch of virtual terminals does:
# WHO is KBD_USER (session 1) or nobody (session 2, uid 65534, a second user at the same
# seat). logind's files are rewritten, each by rename, as logind writes them.
logind_switch() {
    local pid=$1 who=$2 uid other
    uid=$(id -u "$KBD_USER")
    other=$(id -u nobody)
    nsenter -t "$pid" -m -r sh -c '
        set -e
        cd /run/systemd
        put() { printf "$2" > "$1.tmp"; mv "$1.tmp" "$1"; }
        a1=0 a2=0 s1=online s2=online active=1 auid=$1
        if [ "$3" = nobody ]; then a2=1 s2=active active=2 auid=$2; else a1=1 s1=active; fi
        put sessions/1 "UID=$1
USER=$4
ACTIVE=$a1
IS_DISPLAY=1
STATE=$s1
REMOTE=0
TYPE=wayland
CLASS=user
SEAT=seat0
VTNR=1
"
        put sessions/2 "UID=$2
USER=nobody
ACTIVE=$a2
IS_DISPLAY=1
STATE=$s2
REMOTE=0
TYPE=wayland
CLASS=user
SEAT=seat0
VTNR=2
"
        u1="" u2=""
        [ "$a1" = 1 ] && u1="ACTIVE_SESSIONS=1
"
        [ "$a2" = 1 ] && u2="ACTIVE_SESSIONS=2
"
        put users/$1 "NAME=$4
STATE=$s1
SESSIONS=1
SEATS=seat0
$u1"
        put users/$2 "NAME=nobody
STATE=$s2
SESSIONS=2
SEATS=seat0
$u2"
        put seats/seat0 "IS_SEAT0=1
CAN_MULTI_SESSION=1
CAN_TTY=1
CAN_GRAPHICAL=1
ACTIVE=$active
ACTIVE_UID=$auid
SESSIONS=1 2
UIDS=$1 $2
"
    ' sh "$uid" "$other" "$who" "$KBD_USER"
}

# check NAME CMD…: runs CMD; counts and prints "ok: NAME" or "FAILED: NAME".
passed=0
failed=0
check() {
    local name=$1; shift
    if "$@"; then passed=$((passed + 1)); echo "ok: $name"; else failed=$((failed + 1)); echo "FAILED: $name"; fi
}

# fresh_work DIR: an empty work folder for one run: DIR/user owned by KBD_USER (the user's
# commands write their proof there) and an empty system config DIR/system.toml (0644).
fresh_work() {
    rm -rf "$1"
    mkdir -p "$1/user"
    chown "$KBD_USER" "$1/user"
    chmod 755 "$1"
    printf '' > "$1/system.toml"
    chmod 644 "$1/system.toml"
}

# build_tap: builds tap.c (a tap of a wlr virtual pointer: the headless session has no
# pointer device) into "$bin/tap", or dies.
build_tap() {
    local xml=$here/protocols/wlr-virtual-pointer-unstable-v1.xml
    wayland-scanner client-header "$xml" "$bin/wlr-virtual-pointer-unstable-v1-client-protocol.h"
    wayland-scanner private-code "$xml" "$bin/wlr-virtual-pointer-unstable-v1-protocol.c"
    # shellcheck disable=SC2046
    cc -O2 -I"$bin" -o "$bin/tap" "$here/tap.c" "$bin/wlr-virtual-pointer-unstable-v1-protocol.c" $(pkg-config --cflags --libs wayland-client) \
        || die "cannot build tap.c"
}

# portal_dirs WORK: the package's kbd-commandd.portal in WORK/portals (the portal's
# XDG_DESKTOP_PORTAL_DIR), the user's runtime folder, and the user's config and state
# folders under SESSION_DIR/xdg (the agent's XDG_CONFIG_HOME and XDG_STATE_HOME).
portal_dirs() {
    install -d -m 0755 "$1/portals"
    install -m 0644 "$here/../udev/kbd-commandd.portal" "$1/portals/"
    install -d -m 0700 -o "$KBD_USER" -g "$KBD_USER" "$RUNTIME_DIR"
    install -d -m 0755 -o "$KBD_USER" -g "$KBD_USER" "$SESSION_DIR/xdg" "$SESSION_DIR/xdg/config" "$SESSION_DIR/xdg/state" \
        "$SESSION_DIR/xdg/config/kbd-commandd"
}

# end_of_run RUN DIR: checks that no window title (every test title starts with
# "private-title") reached the service's log (DIR/service.log) or the agent's, and prints
# the logs and the proof when something failed so far.
end_of_run() {
    check "$1: no window title reached a log" eval "! grep -q 'private-title' '$2/service.log' '$SESSION_DIR/agent.log'"
    if [ "$failed" -gt 0 ]; then
        echo "--- service"; cat "$2/service.log"; echo "--- agent"; cat "$SESSION_DIR/agent.log"; echo "--- proof"; cat "$2/user/proof" 2>/dev/null
    fi
}

# summary: the last line of every harness, and its exit status.
summary() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

# The service a harness started as root (its pid in service_pid), stopped with the session
# by stop_service_and_session (the harnesses' EXIT trap).
service_pid=
stop_service_and_session() {
    [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null
    service_pid=
    "$DESKTOP_DIR/session.sh" stop >/dev/null 2>&1 || true
}
