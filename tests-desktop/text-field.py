#!/usr/bin/python3
"""text-field.py APP_ID TITLE: a GTK 3 window with a text field (Gtk.Entry) and a button,
for the text-input tests (tests-desktop/text-input-e2e.sh). GTK sets the Wayland app_id from
the program name (GLib.set_prgname). The button has the focus at first; SIGUSR1 moves it to
the text field, SIGUSR2 back to the button. Prints READY, then FOCUS entry|button on each
move; never what is typed."""
import signal
import sys
import gi
gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk

app_id = sys.argv[1] if len(sys.argv) > 1 else "textfield"
GLib.set_prgname(app_id)
win = Gtk.Window(title=sys.argv[2] if len(sys.argv) > 2 else "text field")
win.set_default_size(400, 120)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
entry = Gtk.Entry()
button = Gtk.Button(label="A button")
box.add(entry)
box.add(button)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.show_all()


def focus(widget, name):
    widget.grab_focus()
    print("FOCUS", name, flush=True)
    return True


GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, focus, entry, "entry")
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR2, focus, button, "button")
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, Gtk.main_quit)
button.grab_focus()
print("READY", flush=True)
Gtk.main()
