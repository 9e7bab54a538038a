#!/bin/bash
# Focus change -> set_scopes latency (issue 18), with the real desktop: headless sway as
# KBD_USER with two foot windows (AppA, AppB) and the session agent in the session. A
# stand-in for the service listens on the agent's control socket (answering its requests
# as the service does) and times, on one clock (CLOCK_MONOTONIC), each focus command it
# sends to sway's IPC until the agent's set_scopes for that window arrives on the socket.
# The time includes sway handling the command and writing its window event, the agent's
# wake-up, JSON parsing and the scope lookup, and the control-socket write.
#
#   tests-desktop/focus-latency.sh [BUILD_DIR] [N]     (root; setup-host.sh first; N default 500)
#   tests-desktop/focus-latency.sh [BUILD_DIR] [N] --x11 [--ewmh]
#                                                     (Xvfb and i3 with xterm windows; --ewmh:
#                                                      the agent without I3SOCK, so EWMH through libxcb)
#
# Prints: focus->set_scopes over N switches: median, p99, max (ms).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run focus-latency "${1:-$here/../.build/debug}" kbd-commandd-daemon kbd-commandd-agent
count=${2:-500}
x11=0 ewmh=0
for a in "${@:3}"; do
    case $a in --x11) x11=1 ;; --ewmh) ewmh=1; x11=1 ;; *) die "unknown option '$a'" ;; esac
done
[ "$(id -u)" = 0 ] || die "run as root (the session runs as $KBD_USER)"
[ -x "$bin/kbd-commandd-agent" ] || die "$bin/kbd-commandd-agent is not built"

cleanup() { "$here/session.sh" stop >/dev/null 2>&1 || true; }
# Each run stops what it started (cleanup); the run's folders go at the end.
trap 'cleanup; remove_throwaway' EXIT
rm -rf "$work"
install -d -m 0755 "$work"

if [ $x11 = 1 ]; then "$here/session.sh" start --x11 >/dev/null 2>&1 || die "the session did not start"
else "$here/session.sh" start >/dev/null 2>&1 || die "the session did not start"; fi
for app in AppA AppB; do
    if [ $x11 = 1 ]; then
        spawn_as_user "$SESSION_DIR/$app.log" xterm -class "$app" -e sleep 3600
        wait_for "$WAIT_SECONDS" eval "as_user i3-msg -t get_tree | matches '\"class\":\"$app\"'" || die "$app did not map"
    else
        spawn_as_user "$SESSION_DIR/$app.log" foot --app-id="$app"
        wait_for "$WAIT_SECONDS" eval "as_user swaymsg -t get_tree | matches '\"app_id\": \"$app\"'" || die "$app did not map"
    fi
done
cfg="$SESSION_DIR/xdg/config/kbd-commandd"
mkdir -p "$cfg"
printf '[osk]\nbackend = "none"\n\n[scopes]\nAppA = ["alpha"]\nAppB = ["beta"]\n' > "$cfg/config.toml"
chown -R "$KBD_USER" "$SESSION_DIR/xdg/config"

ipc=$(grep '^I3SOCK=' "$RUNTIME_DIR/session.env" | cut -d= -f2-)
agent=("$bin/kbd-commandd-agent" --socket "$work/socket")
[ $ewmh = 1 ] && agent=(env -u I3SOCK "${agent[@]}")

"$PYTHON" - "$work/socket" "$ipc" "$count" "$x11" <<'PY' &
import json, os, socket, struct, sys, time
sock_path, ipc_path, count, x11 = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sock_path)
os.chmod(sock_path, 0o666)
server.listen(1)
open(sock_path + ".ready", "w").close()
server.settimeout(20)
agent, _ = server.accept()
agent.settimeout(5)
buf = b""

def lines():
    """Answers every complete request line the way the service does; yields set_scopes lists."""
    global buf
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        r = json.loads(line)
        name = r["request"]
        reply = {"reply": name, "ok": True}
        # The typed client decodes every reply: a subscribe reply names its events, the
        # presence and its reason, and the protocol (Sources/KbdControl/Replies.swift).
        if name == "subscribe":
            reply.update(events=r.get("events", []), hardware_keyboard=False, reason="no keyboard", protocol=1)
        if name == "register": reply.update(commands=len(r["commands"]), shadowed=[])
        if name == "set_scopes": reply["scopes"] = r["scopes"]
        agent.sendall((json.dumps(reply) + "\n").encode())
        if name == "set_scopes": yield r["scopes"]

def wait_scopes(want):
    global buf
    while True:
        for s in lines():
            if s == want: return time.monotonic_ns()
        buf += agent.recv(65536) or sys.exit("the agent closed the socket")

ipc = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ipc.connect(ipc_path)
def focus(app):
    cmd = ("[class=%s] focus" if x11 else "[app_id=%s] focus") % app
    payload = cmd.encode()
    ipc.sendall(b"i3-ipc" + struct.pack("=II", len(payload), 0) + payload)
    header = ipc.recv(14, socket.MSG_WAITALL)
    length = struct.unpack("=I", header[6:10])[0]
    ipc.recv(length, socket.MSG_WAITALL)

# The agent starts with AppB focused (opened last).
wait_scopes(["beta"])
samples = []
for i in range(count + 20):
    app, want = (("AppA", ["alpha"]), ("AppB", ["beta"]))[i % 2]
    t0 = time.monotonic_ns()
    focus(app)
    t1 = wait_scopes(want)
    if i >= 20: samples.append((t1 - t0) / 1e6)   # the first 20 warm up
    time.sleep(0.005)
samples.sort()
p = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
print("focus->set_scopes over %d switches: median %.3f ms, p99 %.3f ms, max %.3f ms" % (len(samples), p(0.5), p(0.99), samples[-1]))
PY
bench=$!
wait_for 10 test -e "$work/socket.ready" || die "the stand-in service did not start"
spawn_as_user "$SESSION_DIR/agent.log" "${agent[@]}"
wait "$bench"
rc=$?
grep -q "through" "$SESSION_DIR/agent.log" && sed -n 's/.*\(scopes follow the focused window through .*\)/source: \1/p' "$SESSION_DIR/agent.log"
exit $rc
