#!/usr/bin/python3
"""A stand-in for the service, for the bar's benchmark (bar-bench.sh): test tooling, not the
product. Listens on SOCKET (as the session's user, whom the bar trusts as a server), answers
the bar's subscribe as the service does (a hardware keyboard present), sends one toolbar
event, then after IDLE seconds of silence (the bar's idle wake-ups are counted then) sends N
HUD show/hide pairs, writing the CLOCK_MONOTONIC microseconds of each show it sent to
TIMES (one per line), on the clock the bar's KBD_BAR_TRACE lines use.

    bar-standin.py SOCKET TIMES N IDLE
"""
import json, os, socket, sys, time

path, times_path, count, idle = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])

def command(i, group):
    return {"table": "system", "scope": "global", "id": f"c{i}", "title": f"Command {i}", "discoverability_title": f"Command number {i}",
            "chord": f"Ctrl+Alt+{chr(65 + i)}", "shadowed": i == 3, "text_input_filtered": False}

groups = [{"title": g, "commands": [command(i, g) for i in range(k, k + 4)]} for k, g in ((0, "File"), (4, "Edit"), (8, "View"))]
toolbar = {"event": "toolbar", "time": 1, "scopes": ["global"], "text_input": False, "groups": groups}
show = {"event": "hud", "time": 2, "show": True, "trigger": "hold", "pending": None, "scopes": ["global"], "text_input": False, "groups": groups}
hide = {"event": "hud", "time": 3, "show": False, "trigger": "hold"}

try: os.unlink(path)
except FileNotFoundError: pass
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(1)
conn, _ = server.accept()
reader = conn.makefile("r")
request = json.loads(reader.readline())
assert request["request"] == "subscribe", request
def send(obj): conn.sendall((json.dumps(obj, separators=(",", ":")) + "\n").encode())
send({"reply": "subscribe", "ok": True, "events": sorted(request["events"]), "hardware_keyboard": True, "protocol": 2, "reason": "bench"})
send(toolbar)
time.sleep(idle)
with open(times_path, "w") as out:
    for _ in range(count):
        t = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        send(show)
        out.write(f"{t}\n"); out.flush()
        time.sleep(0.3)
        send(hide)
        time.sleep(0.2)
print("done", flush=True)
time.sleep(3600)
