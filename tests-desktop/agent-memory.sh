#!/bin/bash
# The session agent's resident memory with each on-screen-keyboard backend in a real
# session (a benchmark: it prints numbers, it does not judge them). For each backend:
# a fresh session (sway, or KWin for kwin), the agent as the session's user, then the
# service replaying a keyboard that attaches, types Ctrl+Alt+T and detaches
# (ctrl-alt-t.evemu). VmRSS of the agent: connected and registered before any keyboard,
# 2.5 s after the attach (the keyboard switched off, the bound command run), and 3 s
# after the detach (the keyboard back). Also whether the agent maps libsystemd or GIO
# (its bus and GSettings calls run in child processes, so it should map neither), and the
# text-input watch, the agent's one long-lived child ([text_input] source = "auto": KWin's
# property in the KWin session, the accessibility bus elsewhere): its VmRSS and its PSS
# (its pages shared with the agent, copy-on-write after the fork, count once), after the
# keyboard left.
#
#   tests-desktop/agent-memory.sh [BUILD_DIR]     (root; setup-host.sh first; a release
#                                                  build measures what users run)
#   BACKENDS="none gnome" tests-desktop/agent-memory.sh …
#   TEXT_INPUT=none tests-desktop/agent-memory.sh …   ([text_input] source; default auto)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run agent-memory "${1:-$here/../.build/release}" kbd-commandd-daemon kbd-commandd-agent

agent= service=
cleanup() {
    [ -n "$service" ] && kill "$service" 2>/dev/null && wait "$service" 2>/dev/null
    [ -n "$agent" ] && kill "$agent" 2>/dev/null
    agent= service=
    "$here/session.sh" stop >/dev/null 2>&1 || true
}
# Each run stops what it started (cleanup); the run's folders go at the end.
trap 'cleanup; remove_throwaway' EXIT
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo "?"; }

pss() { awk '/^Pss:/ { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo "?"; }
echo "| backend | before a keyboard | keyboard present | after it left | libsystemd / GIO mapped | text-input watch RSS / PSS |"
echo "|---|---|---|---|---|---|"
for backend in ${BACKENDS:-none wvkbd squeekboard kwin gnome}; do
    rm -rf "$work"; mkdir -p "$work"; chmod 755 "$work"; printf '' > "$work/system.toml"
    case $backend in
        squeekboard) opts=(--squeekboard) ;;
        wvkbd) opts=(--wvkbd) ;;
        kwin) opts=(--kwin) ;;
        *) opts=() ;;
    esac
    "$here/session.sh" start "${opts[@]}" >/dev/null 2>&1 || { echo "| $backend | the session did not start | | | |"; continue; }
    case $backend in
        gnome) as_user gsettings set org.gnome.desktop.a11y.applications screen-keyboard-enabled true ;;
        squeekboard) "$here/osk-state" squeekboard set true >/dev/null ;;
    esac
    cfg="$SESSION_DIR/xdg/config/kbd-commandd"
    mkdir -p "$cfg"
    printf '[osk]\nbackend = "%s"\n\n[text_input]\nsource = "%s"\n\n[[command]]\nid = "terminal"\nkeys = "Ctrl+Alt+T"\nrun = ["true"]\n' "$backend" "${TEXT_INPUT:-auto}" > "$cfg/config.toml"
    chown -R "$KBD_USER" "$SESSION_DIR/xdg/config"
    start_agent
    agent=$agent_pid
    wait_for 10 grep -q "waiting for the service" "$SESSION_DIR/agent.log"
    start_service "$here/ctrl-alt-t.evemu"
    service=$service_pid
    wait_for 10 grep -q "registered 1 commands" "$SESSION_DIR/agent.log"
    before=$(rss "$agent")
    # The recording attaches at once and types the chord 4 s later.
    wait_for 10 grep -q "hardware keyboard present" "$work/service.log"
    sleep 4.3
    present=$(rss "$agent")
    wait_for 10 grep -q "hardware keyboard absent" "$work/service.log"
    sleep 3
    after=$(rss "$agent")
    mapped=$(grep -c 'libsystemd\|libgio' "/proc/$agent/maps" 2>/dev/null)
    watch=$(pgrep -P "$agent" | sed -n 1p)
    watch_mem="none"
    [ -n "$watch" ] && watch_mem="$(rss "$watch") / $(pss "$watch") KiB"
    echo "| $backend | $before KiB | $present KiB | $after KiB | $([ "${mapped:-0}" = 0 ] && echo no || echo "yes ($mapped mappings)") | $watch_mem |"
    cleanup
done
rm -rf "$work"
