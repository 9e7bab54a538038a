#!/usr/bin/python3
"""spoof-focus.py: a client of the accessibility bus that is not the focused window and
claims the focus anyway, for the text-input tests (tests-desktop/text-input-e2e.sh, run
"spoof"). It exports one object, /org/a11y/atspi/accessible/spoof, that says it is a push
button (ATSPI_ROLE_PUSH_BUTTON, 43) with the FOCUSED, FOCUSABLE, SHOWING and VISIBLE
states, and on each signal emits `object:state-changed:focused` (detail1 = 1) for it, as a
toolkit does when one of its widgets gains the focus. Believed, it would turn text input
off while the user types into another application's text field.
  SIGUSR1  a claim whose object answers GetState and GetRole at once
  SIGUSR2  a claim whose object answers after 3 s (later than any watch waits)
  SIGHUP   a claim whose object never answers
Prints READY, then CLAIM fast|slow|never on each claim and ASKED GetState|GetRole on each
question it was asked. Needs python3-gi (Gio); talks to the accessibility bus whose address
org.a11y.Bus gives on the session bus."""
import signal
import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib

PATH = "/org/a11y/atspi/accessible/spoof"
XML = """<node>
  <interface name="org.a11y.atspi.Accessible">
    <method name="GetState"><arg type="au" direction="out"/></method>
    <method name="GetRole"><arg type="u" direction="out"/></method>
  </interface>
</node>"""
FOCUSED, FOCUSABLE, SHOWING, VISIBLE, SENSITIVE, ENABLED = 12, 11, 25, 30, 24, 8
ROLE_PUSH_BUTTON = 43

session = Gio.bus_get_sync(Gio.BusType.SESSION, None)
address = session.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
                            GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 5000, None).unpack()[0]
bus = Gio.DBusConnection.new_for_address_sync(
    address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)

mode = "fast"
word0 = 0
for s in (FOCUSED, FOCUSABLE, SHOWING, VISIBLE, SENSITIVE, ENABLED):
    word0 |= 1 << s


def answer(invocation, method):
    if method == "GetState":
        invocation.return_value(GLib.Variant("(au)", ([word0, 0],)))
    else:
        invocation.return_value(GLib.Variant("(u)", (ROLE_PUSH_BUTTON,)))
    return False


def on_call(connection, sender, path, interface, method, params, invocation):
    print("ASKED", method, flush=True)
    if mode == "fast":
        answer(invocation, method)
    elif mode == "slow":
        GLib.timeout_add(3000, answer, invocation, method)
    else:
        pending.append(invocation)  # never answered


pending = []
node = Gio.DBusNodeInfo.new_for_xml(XML)
bus.register_object(PATH, node.interfaces[0], on_call, None, None)


def claim(which):
    global mode
    mode = which
    bus.emit_signal(None, PATH, "org.a11y.atspi.Event.Object", "StateChanged",
                    GLib.Variant("(siiva{sv})", ("focused", 1, 0, GLib.Variant("i", 0), {})))
    bus.flush_sync(None)
    print("CLAIM", which, flush=True)
    return True


loop = GLib.MainLoop()
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, claim, "fast")
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR2, claim, "slow")
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGHUP, claim, "never")
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
print("READY", flush=True)
loop.run()
