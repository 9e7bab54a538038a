#!/usr/bin/python3
"""An app using the desktop portal's public GlobalShortcuts interface, as OBS, Discord or
Mumble do (tests-desktop/portal-e2e.sh): python3-dbus with GLib's main loop.

  portal-app.py LOG SHORTCUT…      SHORTCUT is ID=TRIGGER=DESCRIPTION
      [--close-after-release]       closes its session at the first Deactivated (or 2 s
                                    after the first Activated, when no release comes)
      [--seconds N]                 exits after N seconds (default 40)

Writes to LOG: `bound ID TRIGGER_DESCRIPTION` per shortcut the portal bound (or `bound
none`), `list ID TRIGGER_DESCRIPTION` per shortcut ListShortcuts answers, `response
METHOD N` when a call is refused, then `activated ID US NS` / `deactivated ID US NS` (when the signal
arrived: the wall clock in microseconds, CLOCK_MONOTONIC in nanoseconds) and `closed` after Session.Close.
"""
import sys
import time
import dbus
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
log_path = sys.argv[1]
args = sys.argv[2:]
close_after_release = "--close-after-release" in args
seconds = 40
if "--seconds" in args:
    seconds = int(args[args.index("--seconds") + 1])
shortcuts = [a for a in args if "=" in a and not a.startswith("--")]

log = open(log_path, "a", buffering=1)
bus = dbus.SessionBus()
portal = bus.get_object("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop")
gs = dbus.Interface(portal, "org.freedesktop.portal.GlobalShortcuts")
sender = bus.get_unique_name()[1:].replace(".", "_")
loop = GLib.MainLoop()
counter = [0]


def call(method, *args, extra=None):
    """Calls a portal method with a handle_token and waits for its Request's Response."""
    counter[0] += 1
    token = "t%d" % counter[0]
    path = "/org/freedesktop/portal/desktop/request/%s/%s" % (sender, token)
    answer = {}
    inner = GLib.MainLoop()

    def response(code, results):
        answer["code"] = int(code)
        answer["results"] = results
        inner.quit()
    match = bus.add_signal_receiver(response, "Response", "org.freedesktop.portal.Request", "org.freedesktop.portal.Desktop", path)
    options = dbus.Dictionary(dict(extra or {}, handle_token=token), signature="sv")
    getattr(gs, method)(*(list(args) + [options]))
    GLib.timeout_add_seconds(30, inner.quit)
    inner.run()
    match.remove()
    if answer.get("code") != 0:
        log.write("response %s %s\n" % (method, answer.get("code", "none")))
    return answer.get("results", {})


results = call("CreateSession", extra={"session_handle_token": "s1"})
session = results.get("session_handle")
if not session:
    log.write("no session\n")
    sys.exit(1)
wanted = dbus.Array([], signature="(sa{sv})")
for s in shortcuts:
    sid, trigger, description = s.split("=", 2)
    wanted.append(dbus.Struct((sid, dbus.Dictionary({"description": description, "preferred_trigger": trigger}, signature="sv"))))
bound = call("BindShortcuts", dbus.ObjectPath(session), wanted, "")
got = bound.get("shortcuts", [])
for sid, props in got:
    log.write("bound %s %s\n" % (sid, props.get("trigger_description", "")))
if not got:
    log.write("bound none\n")
for sid, props in call("ListShortcuts", dbus.ObjectPath(session)).get("shortcuts", []):
    log.write("list %s %s\n" % (sid, props.get("trigger_description", "")))
log.write("ready\n")


def close():
    if session:
        bus.get_object("org.freedesktop.portal.Desktop", session).Close(dbus_interface="org.freedesktop.portal.Session")
        log.write("closed\n")
    return False


closing = [False]


def signal(kind):
    def handler(handle, sid, timestamp, options):
        if handle != session:
            return
        log.write("%s %s %d %d\n" % (kind, sid, time.time_ns() // 1000, time.clock_gettime_ns(time.CLOCK_MONOTONIC)))
        if close_after_release and not closing[0]:
            closing[0] = True
            GLib.timeout_add(2000 if kind == "activated" else 10, close)
    return handler


bus.add_signal_receiver(signal("activated"), "Activated", "org.freedesktop.portal.GlobalShortcuts", "org.freedesktop.portal.Desktop")
bus.add_signal_receiver(signal("deactivated"), "Deactivated", "org.freedesktop.portal.GlobalShortcuts", "org.freedesktop.portal.Desktop")
GLib.timeout_add_seconds(seconds, loop.quit)
loop.run()
