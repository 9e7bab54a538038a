#!/bin/bash
# The desktop portal's GlobalShortcuts backend end to end (issue 36): the real
# xdg-desktop-portal (Debian 12's 1.16) on a private session bus (dbus-run-session) with
# XDG_DESKTOP_PORTAL_DIR holding the package's kbd-commandd.portal and XDG_CURRENT_DESKTOP=sway,
# the session agent as the unprivileged KBD_USER, the service (root) replaying a USB keyboard
# (portal-chords.evemu) under simulated logind, and apps written against the public interface
# org.freedesktop.portal.GlobalShortcuts (portal-app.py: python3-dbus, GLib's main loop).
#   - `[portal] approve = "always"`: app A asks CTRL+ALT+m (push-to-talk) and gets it
#     ("Ctrl+Alt+M"), ListShortcuts says so; app B asks the same trigger (refused: A has it),
#     GTK's <Control><Alt>t (refused: the user's own command has Ctrl+Alt+T) and SHIFT+F9 (bound);
#   - the bindings are commands of the user's table in the service (`kbd-commandd commands
#     --active` as the user); Ctrl+Alt+M held at 8 s gives A one Activated at the press and one
#     Deactivated at the release (key phases: run_on_release); A closes its session and
#     the binding leaves the service; Ctrl+Alt+M at 12 s reaches nobody;
#   - seat0's session goes to another user: Shift+F9 at 16 s gives B nothing; back to the
#     user: Shift+F9 at 20 s gives B one Activated; Caps Lock held at 24 s (B's push-to-talk,
#     asked as CAPS) gives B one Activated at its press and one Deactivated at its release;
#     Super tapped alone at 25 s (B's LOGO, a modifier alone) gives one Activated then one
#     Deactivated at the tap;
#   - the approvals file keeps A's and B's bindings; with `approve = "never"` a new app gets
#     nothing while A, started again, gets its approved chord without asking; `kbd-commandd
#     portal list` and `portal revoke` show and forget them.
#
#   tests-desktop/portal-e2e.sh [BUILD_DIR]      (root; setup-host.sh first)
#
# Ends with "N passed, N failed"; exit 1 when something failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run portal-e2e "${1:-$here/../.build/debug}" kbd-commandd-daemon kbd-commandd-agent kbd-commandd
[ -x /usr/libexec/xdg-desktop-portal ] || die "xdg-desktop-portal is not installed (tests-desktop/setup-host.sh)"
# Two apps without an app id (unsandboxed, as Debian 12 runs them) are named by their
# executables: each app runs its own copy of the interpreter.
for app in talk-app record-app new-app; do install -m 0755 "$(readlink -f "$PYTHON")" "$bin/$app"; done

service_pid=
driver_pid=
cleanup() {
    [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null
    [ -n "$driver_pid" ] && kill "$driver_pid" 2>/dev/null && wait "$driver_pid" 2>/dev/null
    service_pid= driver_pid=
    # What the private bus started (the portal, the agent, its children) carries the marker.
    local p
    for p in $(marked_pids); do kill "$p" 2>/dev/null; done
    return 0
}
trap 'cleanup; remove_throwaway' EXIT

fresh_work "$work"
portal_dirs "$work"
config=$SESSION_DIR/xdg/config/kbd-commandd/config.toml
approvals=$SESSION_DIR/xdg/state/kbd-commandd/portal-approvals
write_config() {
    cat > "$config" <<CONF
[osk]
backend = "none"

[portal]
approve = "$1"

[[command]]
id = "terminal"
title = "Terminal"
keys = "Ctrl+Alt+T"
run = ["/bin/true"]
CONF
    chown "$KBD_USER" "$config"
}
write_config always

# The session: a private bus with the agent, the real portal and the apps, as the user.
cat > "$work/driver.sh" <<DRIVER
"$bin/kbd-commandd-agent" --socket "$work/socket" > "$work/user/agent.log" 2>&1 &
agent=\$!
XDG_DESKTOP_PORTAL_DIR="$work/portals" XDG_CURRENT_DESKTOP=sway /usr/libexec/xdg-desktop-portal -v > "$work/user/portal.log" 2>&1 &
portal=\$!
for i in \$(seq 100); do grep -q "portal: serves" "$work/user/agent.log" && break; sleep 0.1; done
"$bin/talk-app" "$bin/portal-app.py" "$work/user/a.log" "talk=CTRL+ALT+m=Push to talk" --close-after-release --seconds 30 &
a=\$!
for i in \$(seq 100); do grep -q ready "$work/user/a.log" 2>/dev/null && break; sleep 0.1; done
"$bin/record-app" "$bin/portal-app.py" "$work/user/b.log" "talk2=CTRL+ALT+m=Talk too" "term=<Control><Alt>t=Terminal" "record=SHIFT+F9=Record" "ptt=CAPS=Talk on Caps" "menu=LOGO=App menu" --seconds 28 &
wait \$a \$!
# Later: approve = "never" (written by the test): a new app gets nothing, A its approved chord.
for i in \$(seq 100); do [ -e "$work/user/never" ] && break; sleep 0.1; done
sleep 1
"$bin/new-app" "$bin/portal-app.py" "$work/user/c.log" "new=CTRL+ALT+y=Something new" --seconds 1
"$bin/talk-app" "$bin/portal-app.py" "$work/user/a2.log" "talk=CTRL+ALT+m=Push to talk" --seconds 1
kill \$agent \$portal
wait
DRIVER
chmod 644 "$work/driver.sh"

started=$(now_us)
logind_daemon "$bin/kbd-commandd-daemon" --config "$work/system.toml" --socket "$work/socket" --user-agents \
    --replay "$here/portal-chords.evemu" >"$work/service.log" 2>&1 &
service_pid=$!
( cd / && as_user dbus-run-session -- bash "$work/driver.sh" ) </dev/null >"$work/driver.log" 2>&1 &
driver_pid=$!

at() { local until=$(( started + $1 * 1000000 )); while [ "$(now_us)" -lt "$until" ]; do sleep 0.05; done; }
listed() { as_user "$bin/kbd-commandd" commands --active --socket "$work/socket" 2>/dev/null | matches "$@"; }
count() { grep -c "$1" "$2" 2>/dev/null || true; }

check "A got its preferred trigger as Ctrl+Alt+M" wait_for 10 grep -qx "bound talk Ctrl+Alt+M" "$work/user/a.log"
check "A's ListShortcuts says Ctrl+Alt+M" grep -qx "list talk Ctrl+Alt+M" "$work/user/a.log"
check "B got SHIFT+F9 as Shift+F9" wait_for 10 grep -qx "bound record Shift+F9" "$work/user/b.log"
check "B did not get A's trigger" eval "! grep -q 'talk2' '$work/user/b.log'"
check "B did not get the user's own Ctrl+Alt+T" eval "! grep -q 'bound term' '$work/user/b.log'"
check "the service has A's binding in the user's table, titled by its description" wait_for 5 listed -E "Ctrl\+Alt\+M.*Push to talk"
check "… in A's group (the HUD and the bar show it under the app's name)" listed -E "Ctrl\+Alt\+M.*group: talk-app"
check "the service has B's binding" listed -E "Shift\+F9.*Record"
at 11
check "A: one Activated for the held Ctrl+Alt+M" eval "[ \$(count '^activated talk' '$work/user/a.log') = 1 ]"
a_on=$(awk '$1 == "activated" {print $3}' "$work/user/a.log")
a_off=$(awk '$1 == "deactivated" {print $3}' "$work/user/a.log")
check "A: one Deactivated at the release, after its Activated (0.5 to 1.5 s after the press)" \
    eval "[ \$(count '^deactivated talk' '$work/user/a.log') = 1 ] && [ -n '$a_on' ] && [ -n '$a_off' ] && [ $(( ${a_off:-0} - ${a_on:-0} )) -gt 500000 ] && [ $(( ${a_off:-0} - ${a_on:-0} )) -lt 1500000 ]"
check "A closed its session" grep -qx closed "$work/user/a.log"
check "Session.Close removed A's binding from the service" wait_for 5 eval "! listed 'Push to talk'"
at 14
logind_switch "$service_pid" nobody
at 18
logind_switch "$service_pid" "$KBD_USER"
back=$(now_us)
at 23
check "A: nothing after its session closed (Ctrl+Alt+M at 12 s)" eval "[ \$(count '^activated' '$work/user/a.log') = 1 ]"
check "B: one Activated, after the user's session was active again (none at 16 s)" \
    eval "[ \$(count '^activated record' '$work/user/b.log') = 1 ] && [ \$(awk '\$1 == \"activated\" {print \$3}' '$work/user/b.log') -gt $back ]"
check "B got CAPS as Caps_Lock" grep -qx "bound ptt Caps_Lock" "$work/user/b.log"
at 26
b_on=$(awk '$1 == "activated" && $2 == "ptt" {print $3}' "$work/user/b.log")
b_off=$(awk '$1 == "deactivated" && $2 == "ptt" {print $3}' "$work/user/b.log")
check "B: Caps Lock held gives one Activated and one Deactivated after it (0.3 to 1.2 s later)" \
    eval "[ \$(count '^activated ptt' '$work/user/b.log') = 1 ] && [ \$(count '^deactivated ptt' '$work/user/b.log') = 1 ] && [ -n '$b_on' ] && [ -n '$b_off' ] && [ $(( ${b_off:-0} - ${b_on:-0} )) -gt 300000 ] && [ $(( ${b_off:-0} - ${b_on:-0} )) -lt 1200000 ]"
check "B got LOGO as Super (a modifier alone)" grep -qx "bound menu Super" "$work/user/b.log"
check "B: Super tapped alone gives one Activated then one Deactivated" \
    eval "[ \"\$(awk '\$2 == \"menu\" && \$1 ~ /activated/ {print \$1}' '$work/user/b.log' | tr '\n' ' ')\" = 'activated deactivated ' ]"
# The bar's tap on B's Record (run_command of the binding, as the bar sends it): one more
# Activated then Deactivated at once.
record_id=$(as_user "$bin/kbd-commandd" commands --active --format json --socket "$work/socket" 2>/dev/null |
    "$PYTHON" -c '
import json, sys
def find(o):
    if isinstance(o, dict):
        if o.get("title") == "Record" and "id" in o: return o["id"]
        o = list(o.values())
    for v in o if isinstance(o, list) else []:
        if (f := find(v)): return f
print(find(json.load(sys.stdin)) or "")' 2>/dev/null)
as_user "$bin/kbd-commandd" watch --socket "$work/socket" --request "{\"request\":\"run_command\",\"id\":\"$record_id\",\"table\":\"user\"}" >"$work/run-command.out" 2>&1
check "a bar tap on B's binding (run_command $record_id) is accepted" grep -q '"ok":true' "$work/run-command.out"
check "… and gives B one more Activated then Deactivated" wait_for 3 eval \
    "[ \"\$(awk '\$2 == \"record\" && \$1 ~ /activated/ {print \$1}' '$work/user/b.log' | tr '\n' ' ')\" = 'activated deactivated activated deactivated ' ]"
check "the approvals file keeps A's and B's bindings" \
    eval "grep -q \$'\\ttalk\\tCtrl+Alt+M\\tPush to talk' '$approvals' && grep -q \$'\\trecord\\tShift+F9\\tRecord' '$approvals'"

write_config never
touch "$work/user/never"
check "approve = never: a new app gets nothing" wait_for 15 grep -qx "bound none" "$work/user/c.log"
check "approve = never: A again gets its approved Ctrl+Alt+M without asking" wait_for 10 grep -qx "bound talk Ctrl+Alt+M" "$work/user/a2.log"
wait "$driver_pid" 2>/dev/null
driver_pid=
check "portal list shows both apps" eval "as_user '$bin/kbd-commandd' portal list | matches -E 'Ctrl\\+Alt\\+M.*Push to talk'"
app_a=talk-app
check "portal list names the apps by their executables" eval "as_user '$bin/kbd-commandd' portal list | matches -E '^record-app\sShift\+F9\sRecord\srecord$'"
check "portal revoke forgets A" eval "as_user '$bin/kbd-commandd' portal revoke '$app_a' >/dev/null && ! grep -q 'Push to talk' '$approvals' && grep -q Record '$approvals'"
check "no typed key reached the apps' logs" eval "! grep -qvE '^(bound|list|ready|closed|activated|deactivated|response)( |$)' '$work/user/a.log' '$work/user/b.log'"

if [ "$failed" -gt 0 ]; then
    for f in service.log driver.log user/agent.log user/a.log user/b.log user/c.log user/a2.log; do echo "--- $f"; cat "$work/$f" 2>/dev/null; done
    echo "--- portal"; grep -i -m 30 "shortcut\|kbd" "$work/user/portal.log"
fi
summary
