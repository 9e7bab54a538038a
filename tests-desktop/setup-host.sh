#!/bin/bash
# One-time host setup for the desktop tests (root; safe to run again): installs the
# real desktop components the tests drive (headless sway, squeekboard, wvkbd, grim,
# a session bus, and Xvfb with i3 for X11) if missing, creates the unprivileged user
# the session runs as (sway refuses root, the session bus refuses root's connections),
# and /tmp/.X11-unix for a non-root Xvfb. .ci/run calls it under CI or as root.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || die "run as root (it installs packages and creates the user $KBD_USER)"

# dbus-run-session is in dbus-bin; fonts-dejavu-core gives the keyboards' labels a font.
# GNOME's setting: the schema, dconf (the GSettings backend and its D-Bus service) and
# the gsettings tool the tests observe it with. kwin-wayland: KDE's compositor, headless
# with --virtual (a session of its own, session.sh start --kwin). GTK with gtk-layer-shell: the
# shortcuts bar; libwayland, wayland-protocols, cairo and pango: bar-toolkits/measure.sh. wtype: a
# virtual keyboard (zwp_virtual_keyboard_v1) that types chords into the consent dialog (consent-e2e.sh).
# xdg-desktop-portal (Debian 12's 1.16, with the GlobalShortcuts frontend) and python3-dbus:
# portal-e2e.sh's real portal and its app.
packages=(sway squeekboard wvkbd grim foot dbus dbus-bin dbus-user-session xvfb xauth i3 xterm x11-utils
          at-spi2-core python3-gi gir1.2-gtk-3.0 libsystemd-dev libxcb1-dev fonts-dejavu-core
          gsettings-desktop-schemas dconf-service dconf-gsettings-backend libglib2.0-bin kwin-wayland
          libgtk-3-dev libgtk-layer-shell-dev libwayland-dev wayland-protocols libcairo2-dev libpango1.0-dev wtype
          xdg-desktop-portal python3-dbus)
. "$DESKTOP_DIR/../scripts/apt-lib.sh"
apt_install_missing "${packages[@]}"

id "$KBD_USER" >/dev/null 2>&1 || useradd -m -s /bin/bash "$KBD_USER"
install -d -m 1777 -o root -g root /tmp/.X11-unix
echo "desktop test host ready: user $KBD_USER (uid $(id -u "$KBD_USER")), $(sway --version 2>/dev/null || true)" >&2
