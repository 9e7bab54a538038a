#!/bin/bash
# Phosh's on-screen keyboard follows the service's presence (issue 26, item 5), against its
# interface: Debian 12's Phosh (0.24) ships neither Stevia nor phosh-osk-stub, so the real
# schema is not installable here. The test installs a stand-in schema with Stevia's id,
# path and key (mobi.phosh.osk, /mobi/phosh/osk/, ignore-hw-keyboards: b, default false,
# as Stevia's data/mobi.phosh.osk.gschema.xml declares them) in the session's
# XDG_DATA_DIRS, and squeekboard plays sm.puri.OSK0. Headless sway as KBD_USER with
# XDG_CURRENT_DESKTOP=Phosh:GNOME and `[osk] backend = "auto"` (Phosh picked by the
# desktop's name); the service (root) replays ctrl-alt-t.evemu: a USB keyboard present at
# once, gone after 8 s. The key must be false while the keyboard is there (Stevia obeys
# phoc, which sees it) with the keyboard folded, true once the service says absent, and
# back to what it was (false) when the agent stops.
#
#   tests-desktop/phosh-e2e.sh [BUILD_DIR]   (root; setup-host.sh first)
#
# Ends with "N passed, N failed"; exit 1 when something failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run phosh "${1:-$here/../.build/debug}" kbd-commandd-daemon kbd-commandd-agent

agent_pid=
cleanup() {
    [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
    agent_pid=
    stop_service_and_session
}
trap 'cleanup; remove_throwaway' EXIT

fresh_work "$work"
"$here/session.sh" start >/dev/null || die "the session did not start"
"$here/session.sh" squeekboard >/dev/null 2>&1 || die "squeekboard did not start"

schemas="$SESSION_DIR/xdg/data/glib-2.0/schemas"
mkdir -p "$schemas"
cat > "$schemas/mobi.phosh.osk.gschema.xml" <<'XML'
<schemalist>
  <schema id="mobi.phosh.osk" path="/mobi/phosh/osk/">
    <key name="ignore-hw-keyboards" type="b">
      <default>false</default>
      <summary>Stand-in for Stevia's key of the same name (tests-desktop/phosh-e2e.sh)</summary>
    </key>
  </schema>
</schemalist>
XML
glib-compile-schemas "$schemas" || die "glib-compile-schemas failed"
chown -R "$KBD_USER" "$SESSION_DIR/xdg/data"
EXTRA_ENV=(XDG_DATA_DIRS="$SESSION_DIR/xdg/data:/usr/local/share:/usr/share" XDG_CURRENT_DESKTOP=Phosh:GNOME)
setting() { as_user gsettings get mobi.phosh.osk ignore-hw-keyboards; }
setting_is() { [ "$(setting)" = "$1" ]; }
check "the stand-in schema answers (default false)" setting_is false

cfg="$SESSION_DIR/xdg/config/kbd-commandd"
mkdir -p "$cfg"
printf '[osk]\nbackend = "auto"\n' > "$cfg/config.toml"
chown -R "$KBD_USER" "$SESSION_DIR/xdg/config"
# squeekboard shown, as Phosh would unfold it on a text field.
as_user busctl --user call sm.puri.OSK0 /sm/puri/OSK0 sm.puri.OSK0 SetVisible b true
visible() { as_user busctl --user get-property sm.puri.OSK0 /sm/puri/OSK0 sm.puri.OSK0 Visible; }

start_service_and_agent --debug "$here/ctrl-alt-t.evemu"

check "auto picks Phosh's keyboard; present: the key stays false (phoc's rule hides it)" \
    wait_for 5 eval "grep -q 'follows presence (hardware keyboard present)' '$SESSION_DIR/agent.log' && setting_is false"
check "present: the shown keyboard is folded through sm.puri.OSK0" wait_for 3 eval "visible | matches 'b false'"
check "the keyboard gone (the service says absent): ignore-hw-keyboards true" wait_for 15 setting_is true
kill "$agent_pid"; wait "$agent_pid" 2>/dev/null; agent_pid=
check "the agent stopped: the key is back to what it was (false)" setting_is false
check "the agent said it put it back" grep -q "put back" "$SESSION_DIR/agent.log"
end_of_run phosh "$work"
cleanup
rm -rf "$work"
summary
