#!/bin/bash
# Press to Activated at the app (the desktop portal's path: service, agent, its portal child,
# xdg-desktop-portal, the app) beside the agent's argv path (service, agent, fork and exec of
# the user's command), issue 36. The service (root) replays portal-bench.evemu: 33 rounds of
# Ctrl+Alt+M (an app's binding, approve = "always") and Ctrl+Alt+T (the user's command runs
# tests-kernel/stamp.c, which reads CLOCK_MONOTONIC at its first instruction). A root subscriber
# on the control socket stamps each key press as the service publishes it (the press as the
# service sees it: both paths start there); the app (portal-app.py) stamps Activated on arrival.
# The first 3 rounds are warm-up. Prints the medians, p90 and the ratio.
#
#   tests-desktop/portal-bench.sh [BUILD_DIR]      (root; setup-host.sh first; release build for BENCHMARKS.md)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run portal-bench "${1:-$here/../.build/release}" kbd-commandd-daemon kbd-commandd-agent
cc -O2 -static -nostdlib -fno-stack-protector -o "$bin/stamp" "$here/../tests-kernel/stamp.c" || die "cannot build stamp"
install -m 0755 "$(readlink -f "$PYTHON")" "$bin/talk-app"
service_pid=
driver_pid=
cleanup() {
    [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null
    [ -n "$driver_pid" ] && kill "$driver_pid" 2>/dev/null && wait "$driver_pid" 2>/dev/null
    local p
    for p in $(marked_pids); do kill "$p" 2>/dev/null; done
    return 0
}
trap 'cleanup; remove_throwaway' EXIT
fresh_work "$work"
portal_dirs "$work"
cat > "$SESSION_DIR/xdg/config/kbd-commandd/config.toml" <<CONF
[osk]
backend = "none"

[portal]
approve = "always"

[[command]]
id = "terminal"
keys = "Ctrl+Alt+T"
run = ["$bin/stamp", "$work/user/stamps", "T"]
CONF
chown -R "$KBD_USER" "$SESSION_DIR/xdg/config"
cat > "$work/driver.sh" <<DRIVER
"$bin/kbd-commandd-agent" --socket "$work/socket" > "$work/user/agent.log" 2>&1 &
agent=\$!
XDG_DESKTOP_PORTAL_DIR="$work/portals" XDG_CURRENT_DESKTOP=sway /usr/libexec/xdg-desktop-portal > "$work/user/portal.log" 2>&1 &
portal=\$!
for i in \$(seq 100); do grep -q "portal: serves" "$work/user/agent.log" && break; sleep 0.1; done
"$bin/talk-app" "$bin/portal-app.py" "$work/user/a.log" "talk=CTRL+ALT+m=Push to talk" --seconds 32
# Idle, the portal exported and a session of the app still open (the bench measures now).
"$bin/talk-app" "$bin/portal-app.py" "$work/user/idle.log" "idle=CTRL+ALT+i=Idle" --seconds 9 &
app=\$!
echo \$agent > "$work/user/idle"
wait \$app
kill \$agent \$portal
wait
DRIVER
logind_daemon "$bin/kbd-commandd-daemon" --config "$work/system.toml" --socket "$work/socket" --user-agents \
    --allow-key-events --replay "$here/portal-bench.evemu" >"$work/service.log" 2>&1 &
service_pid=$!
( cd / && as_user dbus-run-session -- bash "$work/driver.sh" ) </dev/null >"$work/driver.log" 2>&1 &
driver_pid=$!
wait_for 10 test -S "$work/socket" || die "the service did not start"
# The root subscriber: each key press of m or t as the service publishes it, CLOCK_MONOTONIC.
"$PYTHON" - "$work/socket" "$work/presses" <<'PY' &
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b'{"request":"subscribe","events":["key"]}\n')
out = open(sys.argv[2], "w", buffering=1)
raw = open(sys.argv[2] + ".raw", "w", buffering=1)
buf = b""
end = time.monotonic() + 31
while time.monotonic() < end:
    s.settimeout(max(0.1, end - time.monotonic()))
    try:
        data = s.recv(65536)
    except socket.timeout:
        break
    if not data:
        break
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    buf += data
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        e = json.loads(line)
        if e.get("event") != "key": raw.write(line.decode()[:200] + "\n")
        if e.get("event") == "key" and e.get("state") == "press" and e.get("keysym") in ("m", "t"):
            out.write("%s %d\n" % (e["keysym"].upper(), now))
PY
sub=$!
wait "$sub"
# The agent and its portal child idle: RSS and context switches over 5 s.
wait_for 40 test -s "$work/user/idle"
sleep 2
switches() { awk '/ctxt_switches/ {s += $2} END {print s}' "/proc/$1/status"; }
agent=$(cat "$work/user/idle")
# The portal child is the agent's youngest forked child (started after the text-input watch).
child=$(pgrep -n -P "$agent")
echo "agent $agent: children $(pgrep -P "$agent" | tr "\n" " ")(the portal child $child)"
a0=$(switches "$agent"); c0=$(switches "$child"); sleep 5; a1=$(switches "$agent"); c1=$(switches "$child")
echo "idle agent: VmRSS $(awk '/VmRSS/ {print $2}' "/proc/$agent/status") KiB, $((a1 - a0)) wake-ups in 5 s"
echo "idle portal child: VmRSS $(awk '/VmRSS/ {print $2}' "/proc/$child/status") KiB, Pss $(awk '/^Pss:/ {print $2}' "/proc/$child/smaps_rollup") KiB, $((c1 - c0)) wake-ups in 5 s"
wait "$driver_pid"; driver_pid=
"$PYTHON" - "$work/presses" "$work/user/a.log" "$work/user/stamps" <<'PY'
import sys
presses = {"M": [], "T": []}
for line in open(sys.argv[1]):
    k, ns = line.split(); presses[k].append(int(ns))
act = [int(l.split()[3]) for l in open(sys.argv[2]) if l.startswith("activated ")]
stamps = [int(l.split()[1]) for l in open(sys.argv[3])]
def lat(p, got):
    out = []
    for t in p:
        after = [g for g in got if g > t]
        if after and min(after) - t < 250_000_000: out.append((min(after) - t) / 1e6)
    return sorted(out[3:])
def q(v, f): return v[min(len(v) - 1, int(f * len(v)))]
a, s = lat(presses["M"], act), lat(presses["T"], stamps)
if not a or not s:
    print("no samples: presses %d/%d, activated %d, stamps %d" % (len(presses["M"]), len(presses["T"]), len(act), len(stamps))); sys.exit(1)
print("portal Activated: n=%d median %.2f ms p90 %.2f ms max %.2f ms" % (len(a), q(a, .5), q(a, .9), a[-1]))
print("agent argv:       n=%d median %.2f ms p90 %.2f ms max %.2f ms" % (len(s), q(s, .5), q(s, .9), s[-1]))
print("portal / argv median %.2f, p90 %.2f" % (q(a, .5) / q(s, .5), q(a, .9) / q(s, .9)))
PY
