#!/usr/bin/python3
"""Probes of the bar's desktop test (bar-e2e.sh): test tooling, not the product.

    bar-probe.py height APP_ID      < swaymsg -t get_tree    the app's window height
    bar-probe.py focused            < swaymsg -t get_tree    the focused window's app_id
    bar-probe.py diff A.ppm B.ppm X Y W H                    pixels that differ in the region
"""
import json, sys

def nodes(n):
    yield n
    for c in n.get("nodes", []) + n.get("floating_nodes", []):
        yield from nodes(c)

def ppm(path):
    data = open(path, "rb").read()
    fields, i = [], 0
    while len(fields) < 4:
        while data[i:i + 1].isspace(): i += 1
        j = i
        while not data[j:j + 1].isspace(): j += 1
        fields.append(data[i:j]); i = j
    assert fields[0] == b"P6" and fields[3] == b"255", "binary PPM, 8 bits"
    return int(fields[1]), int(fields[2]), data[i + 1:]

cmd = sys.argv[1]
if cmd == "height":
    tree = json.load(sys.stdin)
    print(next(n["rect"]["height"] for n in nodes(tree) if n.get("app_id") == sys.argv[2]))
elif cmd == "focused":
    tree = json.load(sys.stdin)
    print(next((n.get("app_id") or n.get("name") or "") for n in nodes(tree) if n.get("focused")))
elif cmd == "diff":
    (wa, ha, a), (wb, hb, b) = ppm(sys.argv[2]), ppm(sys.argv[3])
    assert (wa, ha) == (wb, hb)
    x, y, w, h = map(int, sys.argv[4:8])
    count = 0
    for row in range(y, min(y + h, ha)):
        s = (row * wa + x) * 3
        e = (row * wa + min(x + w, wa)) * 3
        ra, rb = a[s:e], b[s:e]
        if ra != rb:
            count += sum(1 for k in range(0, len(ra), 3) if ra[k:k + 3] != rb[k:k + 3])
    print(count)
