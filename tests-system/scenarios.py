#!/usr/bin/env python3
"""The system stage's checks: the packaged service on a booted Debian 12 (systemd, udev,
logind), each check read from the real system (journal, loginctl, getfacl, systemctl).

    tests-system/scenarios.py IMAGE_DIR [--only NAME[,NAME…]] [--list]

Scenarios run in the order of the table below, grouped by boot: every scenario of boot "a"
in one guest, then those of boot "b" in a second one (a broken config at boot, sway).
A scenario whose guest could not boot fails. The last line is "N passed, N failed".
Nothing typed is logged: the users' commands write fixed lines ("fired NAME").
"""
import argparse
import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vm import VM, VMError, region_stats  # noqa: E402

UNIT = "kbd-commandd"
FAILS = []


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def cursor(vm):
    return vm.out("journalctl -q -n 0 --show-cursor | sed -n 's/^-- cursor: //p'").strip()


def journal(vm, cur, ident="kbdtest", unit=None):
    """The messages logged since the cursor, by SYSLOG_IDENTIFIER ident or by unit.
    (journalctl's own -t/-u with --after-cursor skip entries when the cursor's entry is in
    another journal file, a user's, on systemd 252: so every entry is read and filtered here.)"""
    raw = vm.out("journalctl -q --no-pager -o json --output-fields=SYSLOG_IDENTIFIER,_SYSTEMD_UNIT,MESSAGE "
                 "--after-cursor='%s' || true" % cur)
    lines = []
    for line in raw.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        msg = e.get("MESSAGE")
        if not isinstance(msg, str):
            continue
        if unit and e.get("_SYSTEMD_UNIT") == unit + ".service" or not unit and e.get("SYSLOG_IDENTIFIER") == ident:
            lines.append(msg)
    return "\n".join(lines)


def service_log(vm, cur):
    return journal(vm, cur, unit=UNIT)


def wait_log(vm, cur, regex, timeout=20, last=False):
    """Waits for a line of the service's log since the cursor matching regex (with last:
    the last line of those starting like regex's first word must match it)."""
    end = time.monotonic() + timeout
    while True:
        lines = service_log(vm, cur).splitlines()
        if last:
            first = regex.split()[0]
            lines = [line for line in lines if re.match(first, line)][-1:]
        if any(re.search(regex, line) for line in lines):
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.5)


def fired(vm, cur):
    """The ids of the commands that ran since the cursor (the fixtures log "fired ID")."""
    return re.findall(r"^fired (\S+)$", journal(vm, cur), re.M)


def wait_fired(vm, cur, want, timeout=15):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = fired(vm, cur)
        if want in got:
            return got
        time.sleep(0.5)
    return fired(vm, cur)


def settle(vm, cur, seconds=3):
    time.sleep(seconds)
    return fired(vm, cur)


def main_pid(vm):
    return vm.out("systemctl show -p MainPID --value %s" % UNIT).strip()


# ------------------------------------------------------------------ boot a

def s_service_unit(vm):
    """active under the shipped unit, as its system user, with no capabilities"""
    check(vm.wait_until("systemctl is-active -q %s" % UNIT, 60), "the service is not active: %s" %
          vm.sh("systemctl status --no-pager %s" % UNIT)[1][-1500:])
    frag = vm.out("systemctl show -p FragmentPath --value %s" % UNIT).strip()
    check(frag in ("/lib/systemd/system/kbd-commandd.service", "/usr/lib/systemd/system/kbd-commandd.service"),
          "unit file is %r, not the package's" % frag)
    drop = vm.out("systemctl show -p DropInPaths --value %s" % UNIT).strip()
    check(drop == "", "unit has drop-ins: %s" % drop)
    pid = main_pid(vm)
    user = vm.out("ps -o user= -p %s" % pid).strip()
    check(user == "kbd-commandd", "the service runs as %r" % user)
    groups = vm.out("ps -o supgrp= -p %s" % pid).strip()
    check("input" not in groups.split(","), "the service is in group input: %s" % groups)
    caps = dict(re.findall(r"^(Cap\w+):\s+(\w+)$", vm.out("cat /proc/%s/status" % pid), re.M))
    for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        check(int(caps.get(k, "1"), 16) == 0, "%s is %s, not 0" % (k, caps.get(k)))


def s_acl_nodes(vm):
    """the read ACL is on the keyboard and switch nodes and on nothing else"""
    # A lid switch (uinput, from an evemu description): QEMU's PC has none.
    cur = cursor(vm)
    vm.out("setsid evemu-device /usr/local/share/kbdtest/lid-switch.evemu >/tmp/lid.log 2>&1 </dev/null & echo $! >/tmp/lid.pid")
    try:
        check(wait_log(vm, cur, r'^switch attached: .*"kbdtest Lid Switch"'), "the service did not open the lid switch: %s"
              % vm.sh("cat /tmp/lid.log; getfacl -p $(grep -o '/dev/input/event[0-9]*' /tmp/lid.log)")[1])
        acl_rows(vm)
    finally:
        vm.sh("kill $(cat /tmp/lid.pid) 2>/dev/null; true")


def acl_rows(vm):
    script = r'''
for n in /dev/input/event*; do
  props=$(udevadm info -q property -n "$n")
  kind=other
  case "$props" in *ID_INPUT_KEY=1*|*ID_INPUT_SWITCH=1*) kind=key ;; esac
  acl=no; getfacl -p -c "$n" 2>/dev/null | grep -qx 'user:kbd-commandd:r--' && acl=yes
  name=$(cat /sys/class/input/$(basename "$n")/device/name)
  echo "$n|$kind|$acl|$name"
done
echo "--- elsewhere"
getfacl -R -p -s /dev /run /tmp /var/tmp /etc 2>/dev/null |
  awk '/^# file: /{f=substr($0, 9)} /^user:kbd-commandd:/{print f}' | grep -v '^/dev/input/event' || true'''
    out = vm.out(script)
    nodes, elsewhere = out.split("--- elsewhere")
    rows = [line.split("|", 3) for line in nodes.strip().splitlines()]
    check(any(r[1] == "key" and "Keyboard" in r[3] for r in rows), "no keyboard node at all: %s" % rows)
    check(any(r[1] == "key" and r[3] == "kbdtest Lid Switch" for r in rows), "no switch node: %s" % rows)
    check(any(r[1] == "other" for r in rows), "no non-keyboard node (the USB mouse) to check: %s" % rows)
    for n, kind, acl, name in rows:
        if kind == "key":
            check(acl == "yes", "%s (%s, a keyboard or switch) has no ACL entry for kbd-commandd" % (n, name))
        else:
            check(acl == "no", "%s (%s, not a keyboard) has the ACL entry" % (n, name))
    check(elsewhere.strip() == "", "ACL entries for kbd-commandd outside the keyboard nodes: %s" % elsewhere.strip())


def s_boot_no_warning(vm):
    """no warning from the service at boot (the mouse and the PC speaker, which the rule rightly leaves alone, are no reason for one)"""
    warn = vm.out("journalctl -b -q --no-pager -o cat -u %s -p warning" % UNIT).strip()
    check(warn == "", "the service warned at boot: %s" % warn[:600])
    ready = vm.out("journalctl -b -q --no-pager -o cat -u %s | grep '^ready:' || true" % UNIT).strip()
    check(ready != "", "no 'ready:' line in the journal")


def s_system_chord(vm):
    """a typed system chord runs its command"""
    cur = cursor(vm)
    vm.chord("Ctrl+Alt+M")
    got = wait_fired(vm, cur, "system-mark")
    check(got.count("system-mark") == 1, "Ctrl+Alt+M ran system-mark %d times (want 1): %s" % (got.count("system-mark"), got))
    log = service_log(vm, cur)
    check(re.search(r"^command mark ", log, re.M), "no 'command mark' line from the service: %s" % log[-500:])


def s_hotplug(vm):
    """hot-plug and unplug of a second usb-kbd: attach, detach, presence, no stuck modifier"""
    cur = cursor(vm)
    vm.plug("kbd2")
    check(wait_log(vm, cur, r"^keyboard attached: .*QEMU USB Keyboard"), "no 'keyboard attached' for the plugged keyboard")
    time.sleep(1)
    # Only kbd2 left: its chord still fires.
    vm.unplug("kbd1")
    vm.chord("Ctrl+Alt+M", kbd="kbd2")
    got = wait_fired(vm, cur, "system-mark")
    check("system-mark" in got, "Ctrl+Alt+M on the plugged keyboard ran nothing")
    # Ctrl held on kbd2 while it is unplugged.
    vm.key("ctrl", True, "kbd2")
    time.sleep(0.3)
    vm.unplug("kbd2")
    check(wait_log(vm, cur, r"^hardware keyboard absent"), "no 'hardware keyboard absent' after both keyboards left")
    vm.plug_again("kbd1")
    check(wait_log(vm, cur, r"^hardware keyboard present", last=True), "no 'hardware keyboard present' after the keyboard came back")
    time.sleep(1)
    log = service_log(vm, cur)
    check(len(re.findall(r"^keyboard detached: ", log, re.M)) >= 2, "want 2 'keyboard detached' lines: %s" % log[-800:])
    cur2 = cursor(vm)
    vm.chord("Alt+M")  # Ctrl+Alt+M only if the Ctrl of the unplugged keyboard were stuck
    got = settle(vm, cur2)
    check("system-mark" not in got, "Alt+M ran Ctrl+Alt+M's command: the unplugged keyboard's Ctrl is stuck")


def sessions(vm):
    out = vm.out("loginctl list-sessions --no-legend | while read -r s uid user seat tty rest; do "
                 "echo \"$s $user $(loginctl show-session -p TTY --value $s) $(loginctl show-session -p State --value $s) $(loginctl show-session -p Active --value $s)\"; done")
    return [line.split() for line in out.strip().splitlines() if line.strip()]


def active_user(vm):
    for s in sessions(vm):
        if len(s) >= 5 and s[4] == "yes" and s[2].startswith("tty") and s[2] != "ttyS0":
            return s[1]
    return None


def switch_to(vm, n, user):
    vm.out("chvt %d" % n)
    check(vm.wait_until("loginctl show-seat seat0 -p ActiveSession --value | xargs -r loginctl show-session -p Name --value | grep -qx %s" % user, 15),
          "after chvt %d the seat's active session is not %s's" % (n, user))
    time.sleep(1)


def s_two_users(vm):
    """alice on tty1, bob on tty2, agents from ~/.profile: a chord runs the active user's command only, across chvt"""
    for u in ("alice", "bob"):
        check(vm.wait_until("loginctl list-sessions --no-legend | grep -q ' %s '" % u, 90), "%s is not logged in" % u)
        check(vm.wait_until("pgrep -u %s -f kbd-commandd-agent >/dev/null" % u, 30), "%s's agent is not running" % u)
    uids = {u: vm.out("id -u %s" % u).strip() for u in ("alice", "bob")}
    for u, uid in uids.items():
        check(vm.wait_until("journalctl -b -q -o cat -u %s | grep -q 'control: uid %s registered'" % (UNIT, uid), 30),
              "%s's agent never registered its commands" % u)
    for n, me, other in ((1, "alice", "bob"), (2, "bob", "alice"), (1, "alice", "bob")):
        switch_to(vm, n, me)
        cur = cursor(vm)
        vm.chord("Super+M")
        wait_fired(vm, cur, me + "-chord")
        got = settle(vm, cur, 2)
        check(me + "-chord" in got, "tty%d (%s active): Super+M did not run %s's command" % (n, me, me))
        check(other + "-chord" not in got, "tty%d (%s active): Super+M ran %s's command too" % (n, me, other))
        check(got.count(me + "-chord") == 1, "Super+M ran %s's command %d times" % (me, got.count(me + "-chord")))
        cur = cursor(vm)
        vm.type("q")
        wait_fired(vm, cur, me + "-letter")
        got = settle(vm, cur, 2)
        check(other + "-letter" not in got, "tty%d (%s active): a letter typed reached %s's agent" % (n, me, other))
        check(got.count(me + "-letter") <= 1, "a letter ran %s's command %d times" % (me, got.count(me + "-letter")))
        vm.chord("Ctrl+U")


def s_second_agent(vm):
    """a second agent of the same user (README: `kbd-commandd agent &` in the session) runs no command twice"""
    switch_to(vm, 1, "alice")
    uid = vm.out("id -u alice").strip()
    cur = cursor(vm)
    pid = vm.out("runuser -u alice -- env XDG_RUNTIME_DIR=/run/user/%s HOME=/home/alice "
                 "setsid kbd-commandd agent >/dev/null 2>&1 </dev/null & echo $!" % uid).strip()
    try:
        time.sleep(4)
        vm.chord("Super+M")
        wait_fired(vm, cur, "alice-chord")
        got = settle(vm, cur, 2)
        check(got.count("alice-chord") == 1, "with a second agent of alice, Super+M ran her command %d times" % got.count("alice-chord"))
        regs = len(re.findall(r"^control: uid %s registered" % uid, service_log(vm, cur), re.M))
        check(regs == 0, "the second agent registered alice's commands again (%d registrations)" % regs)
    finally:
        vm.sh("kill %s 2>/dev/null; true" % pid)


def s_rss_two_agents(vm):
    """the service's memory with two agents connected (reported, not judged)"""
    pid = main_pid(vm)
    st = vm.out("grep -E '^(VmRSS|VmHWM)' /proc/%s/status; grep -E '^(Pss|Rss):' /proc/%s/smaps_rollup" % (pid, pid))
    conns = vm.out("journalctl -b -q -o cat -u %s | grep -c 'registered' || true" % UNIT).strip()
    print("    service memory with the agents of alice and bob connected (%s registrations this boot): %s"
          % (conns, " ".join(st.split())), flush=True)


def s_logout(vm):
    """a user who logs out leaving a process running receives nothing of the next login typed at the prompt"""
    vm.out("chvt 3")
    time.sleep(2)
    vm.type("carol\n")
    time.sleep(2)
    vm.type("kbdtest\n")
    check(vm.wait_until("loginctl list-sessions --no-legend | grep -q ' carol '", 30), "carol's typed login on tty3 did not start a session")
    uid = vm.out("id -u carol").strip()
    check(vm.wait_until("journalctl -b -q -o cat -u %s | grep -q 'control: uid %s registered'" % (UNIT, uid), 30),
          "carol's agent never registered")
    vm.type("exit\n")
    check(vm.wait_until("! loginctl list-sessions --no-legend | grep ' carol ' | xargs -r -n1 | head -n1 | "
                        "xargs -r loginctl show-session -p State --value | grep -qx active", 20),
          "carol's session is still 'active' after exit")
    check(vm.sh("pgrep -u carol -f kbd-commandd-agent >/dev/null")[0] == 0,
          "precondition: carol's agent did not outlive her logout (nothing left running to test)")
    print("    after logout: " + "; ".join(" ".join(s) for s in sessions(vm) if s[1] == "carol"), flush=True)
    time.sleep(3)  # the getty's new login prompt
    cur = cursor(vm)
    vm.type("dave\n")
    time.sleep(2)
    vm.type("kbdtest\n")
    check(vm.wait_until("loginctl list-sessions --no-legend | grep -q ' dave '", 30), "dave's typed login on tty3 did not start a session")
    got = settle(vm, cur, 2)
    carol = [g for g in got if g.startswith("carol-")]
    check(not carol, "carol's agent, logged out, got %d of the keys dave typed at the login prompt (%s)"
          % (len(carol), ", ".join(sorted(set(carol)))))


def write(vm, path, text):
    vm.out("cat > %s <<'KBDEOF'\n%s\nKBDEOF\nchmod 0644 %s" % (path, text, path))


def s_reload(vm):
    """systemctl reload: a good drop-in is taken, a bad one refused with file:line and the old table kept"""
    good = '[[command]]\nid = "good"\ntitle = "Good"\nkeys = "Ctrl+Alt+G"\nrun = ["logger", "-t", "kbdtest", "fired system-good"]'
    write(vm, "/etc/kbd-commandd/config.d/60-good.toml", good)
    pid = main_pid(vm)
    rc, out = vm.sh("systemctl reload %s" % UNIT)
    check(rc == 0, "reload with a good drop-in failed: %s" % out)
    cur = cursor(vm)
    vm.chord("Ctrl+Alt+G")
    check("system-good" in wait_fired(vm, cur, "system-good"), "after the reload Ctrl+Alt+G ran nothing")
    bad = '# a bad drop-in\n[[command]]\nid = "bad"\nkeys = "Ctrl+Alt+NoSuchKey"\nrun = ["true"]'
    write(vm, "/etc/kbd-commandd/config.d/61-bad.toml", bad)
    cur = cursor(vm)
    rc, out = vm.sh("systemctl reload %s" % UNIT)
    check(rc != 0, "reload with a bad drop-in succeeded")
    log = service_log(vm, cur)
    check(re.search(r"61-bad\.toml:\d+", log), "no file:line for the bad drop-in in the journal: %s" % log[-600:])
    check(vm.sh("systemctl is-active -q %s" % UNIT)[0] == 0, "the service is not active after the refused reload")
    check(main_pid(vm) == pid, "the service restarted (MainPID %s, was %s)" % (main_pid(vm), pid))
    cur = cursor(vm)
    vm.chord("Ctrl+Alt+G")
    check("system-good" in wait_fired(vm, cur, "system-good"), "after the refused reload the old table is gone (Ctrl+Alt+G ran nothing)")
    vm.out("rm -f /etc/kbd-commandd/config.d/61-bad.toml /etc/kbd-commandd/config.d/60-good.toml && systemctl reload %s" % UNIT)


def extended_acls(vm):
    """Every extended ACL entry (a named user or group, or a mask) left on an input node."""
    return vm.out("getfacl -R -p -s /dev/input 2>/dev/null | awk '/^# file: /{f=$3} "
                  "/^(user|group):[^:]+:|^mask::/{print f \" \" $0}'").strip().splitlines()


def s_remove_purge(vm):
    """apt remove, then apt purge, leave no user, group, ACL or file behind"""
    files = vm.out("dpkg -L kbd-commandd kbd-commandd-bar | while read -r f; do [ -d \"$f\" ] || echo \"$f\"; done").split()
    check(len(files) > 10, "dpkg -L lists too little: %s" % files)
    # The test's own drop-ins are not the package's: a person would remove them first.
    vm.out("rm -f /etc/kbd-commandd/config.d/*.toml")
    problems = []

    def soft(cond, msg):
        if not cond:
            problems.append(msg)
    rc, out = vm.sh("DEBIAN_FRONTEND=noninteractive apt-get remove -y kbd-commandd-bar kbd-commandd 2>&1")
    check(rc == 0, "apt remove failed: %s" % out[-800:])
    acl = extended_acls(vm)
    soft(not acl, "after apt remove these input nodes still have extended ACL entries: %s" % ", ".join(acl))
    soft(vm.sh("systemctl is-active -q %s" % UNIT)[0] != 0, "the service still runs after apt remove")
    left = vm.out("for f in %s; do [ -e \"$f\" ] && echo \"$f\"; done; true" % " ".join(files)).split()
    soft(all(f.startswith("/etc/") for f in left), "after apt remove, files other than conffiles left: %s" % left)
    rc, out = vm.sh("DEBIAN_FRONTEND=noninteractive apt-get purge -y kbd-commandd-bar kbd-commandd 2>&1")
    check(rc == 0, "apt purge failed: %s" % out[-800:])
    left = vm.out("for f in %s /etc/kbd-commandd /run/kbd-commandd; do [ -e \"$f\" ] && echo \"$f\"; done; true" % " ".join(files)).split()
    soft(not left, "after apt purge these are left: %s" % left)
    soft(vm.sh("getent passwd kbd-commandd")[0] != 0, "the user kbd-commandd is left after purge")
    soft(vm.sh("getent group kbd-commandd")[0] != 0, "the group kbd-commandd is left after purge")
    orphans = vm.out("find / -xdev \\( -nouser -o -nogroup \\) 2>/dev/null | head -n 20").split()
    soft(not orphans, "files of a removed user or group: %s" % orphans)
    acl = extended_acls(vm)
    soft(not acl, "after apt purge: %s" % ", ".join(acl))
    dpkg = vm.out("dpkg -l 'kbd-commandd*' 2>/dev/null | grep -E '^[a-z][a-z] ' | grep -v '^un' || true").strip()
    soft(dpkg == "", "dpkg still knows the packages: %s" % dpkg)
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------------ boot b

def s_badconfig_boot(vm):
    """a bad config at boot: the service fails once, with file:line, and does not loop"""
    time.sleep(12)
    n = vm.out("systemctl show -p NRestarts --value %s" % UNIT).strip()
    active = vm.out("systemctl show -p ActiveState --value %s" % UNIT).strip()
    state = "%s (%s)" % (active, vm.out("systemctl show -p SubState,Result %s | xargs" % UNIT).strip())
    log = vm.out("journalctl -b -q --no-pager -o cat -u %s" % UNIT)
    check(re.search(r"90-bad\.toml:\d+", log), "no file:line for the bad drop-in in the journal: %s" % log[-600:])
    check(n == "0", "the unit restarted %s times in 12 s (%s): a bad config must not loop" % (n, state))
    check(active in ("failed", "inactive"), "the unit is %s" % state)


def restore_service(vm):
    """The bad drop-in removed and the service started, as a person would."""
    vm.out("rm -f /etc/kbd-commandd/config.d/90-bad.toml")
    check(vm.wait_until("systemctl is-active -q %s || { systemctl reset-failed %s; systemctl restart %s; false; }"
                        % (UNIT, UNIT, UNIT), 40, every=3),
          "the service does not start with the bad drop-in removed: %s" % vm.sh("systemctl status --no-pager %s" % UNIT)[1][-800:])


def s_agent_after_service(vm):
    """agents started while the service was down (bob's text console, alice's sway) connect once it runs"""
    cur = cursor(vm)
    restore_service(vm)
    for u in ("alice", "bob"):
        check(vm.wait_until("pgrep -u %s -f kbd-commandd-agent >/dev/null" % u, 60), "%s's agent is not running" % u)
    time.sleep(1)
    missing = []
    for u in ("alice", "bob"):
        uid = vm.out("id -u %s" % u).strip()
        if not wait_log(vm, cur, r"^control: uid %s registered" % uid, timeout=20):
            missing.append(u)
    if missing:
        why = vm.sh("grep -m 1 'waiting for the service' /home/alice/sway.log")[1].strip()
        raise Fail("the agents of %s never connected after the service started (alice's agent said: %s)" % (", ".join(missing), why))


def bottom_and_top(img, band):
    w, h, _ = img
    top = region_stats(img, 0, 0, w, band)
    bottom = region_stats(img, 0, h - band, w, h)
    middle = region_stats(img, w // 4, h // 4, 3 * w // 4, 3 * h // 4)
    return top, bottom, middle


def differs(a, b):
    """Whether region b does not look like the flat region a (another colour or content)."""
    return b[0] != a[0] or b[1] > 0.05


def s_sway_bar(vm):
    """sway on tty1 (alice, agent from sway's config): the bar at the bottom while a usb-kbd is attached, gone after device_del; Super held shows the HUD"""
    if vm.sh("systemctl is-active -q %s" % UNIT)[0] != 0:
        restore_service(vm)
    uid = vm.out("id -u alice").strip()
    if vm.sh("journalctl -b -q -o cat -u %s | grep -q 'control: uid %s registered'" % (UNIT, uid))[0] != 0:
        # alice's agent started before the service (the agent-after-service scenario): she
        # logs in again, as a person would, so that this scenario tests the bar.
        print("    alice's agent is not connected: her session is ended and autologin starts sway again", flush=True)
        vm.out("loginctl terminate-user alice")
        time.sleep(3)
    check(vm.wait_until("pgrep -u alice -x sway >/dev/null", 90), "sway is not running: %s" %
          vm.sh("tail -n 20 /home/alice/sway.log")[1])
    check(vm.wait_until("pgrep -u alice -f kbd-commandd-agent >/dev/null", 30), "the agent did not start from sway's config")
    check(vm.wait_until("pgrep -u alice -f kbd-commandd-bar >/dev/null", 60), "the agent did not start the bar: %s" %
          vm.sh("journalctl -b -q -o cat _UID=$(id -u alice) | tail -n 20")[1])
    shot = os.path.join(vm.dir, "shot.ppm")
    band = 50
    end = time.monotonic() + 60
    while True:
        img = vm.screendump(shot)
        top, bottom, _ = bottom_and_top(img, band)
        if differs(top, bottom) or time.monotonic() > end:
            break
        time.sleep(2)
    print("    %dx%d; with the keyboard: top %s %.3f, bottom %s %.3f" % (img[0], img[1], top[0].hex(), top[1], bottom[0].hex(), bottom[1]), flush=True)
    check(differs(top, bottom), "no bar at the bottom of the screen while the keyboard is attached")
    vm.unplug("kbd1")
    end = time.monotonic() + 30
    while True:
        time.sleep(2)
        img = vm.screendump(shot)
        top, bottom, _ = bottom_and_top(img, band)
        if not differs(top, bottom) or time.monotonic() > end:
            break
    print("    after device_del: top %s %.3f, bottom %s %.3f" % (top[0].hex(), top[1], bottom[0].hex(), bottom[1]), flush=True)
    check(not differs(top, bottom), "the bar is still at the bottom after the keyboard was unplugged")
    vm.plug_again("kbd1")
    time.sleep(4)
    vm.key("meta_l", True)
    time.sleep(2.5)
    img = vm.screendump(shot)
    vm.key("meta_l", False)
    top, _, middle = bottom_and_top(img, band)
    print("    Super held: top %s %.3f, middle %s %.3f" % (top[0].hex(), top[1], middle[0].hex(), middle[1]), flush=True)
    check(differs(top, middle), "no HUD in the middle of the screen while Super is held")
    time.sleep(1.5)
    img = vm.screendump(shot)
    top, _, middle = bottom_and_top(img, band)
    check(not differs(top, middle), "the HUD stays after Super was released")


# name, boot, function: run in this order.
SCENARIOS = [
    ("service-unit", "a", s_service_unit),
    ("acl-nodes", "a", s_acl_nodes),
    ("boot-no-warning", "a", s_boot_no_warning),
    ("system-chord", "a", s_system_chord),
    ("hotplug", "a", s_hotplug),
    ("two-users", "a", s_two_users),
    ("second-agent", "a", s_second_agent),
    ("rss-two-agents", "a", s_rss_two_agents),
    ("logout", "a", s_logout),
    ("reload", "a", s_reload),
    ("remove-purge", "a", s_remove_purge),
    ("badconfig-boot", "b", s_badconfig_boot),
    ("agent-after-service", "b", s_agent_after_service),
    ("sway-bar", "b", s_sway_bar),
]
BOOTS = {"a": dict(), "b": dict(sway=True, badconfig=True)}


def main():
    # timeout(1) sends SIGTERM: stop the guest on the way out (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("image_dir")
    p.add_argument("--only", default="", help="comma-separated scenario names")
    p.add_argument("--list", action="store_true")
    p.add_argument("--keep", action="store_true", help="keep each boot's run folder (console.log, screendumps)")
    a = p.parse_args()
    if a.list:
        for name, boot, fn in SCENARIOS:
            print("%-16s boot %s  %s" % (name, boot, fn.__doc__))
        return 0
    only = [n for n in a.only.split(",") if n]
    unknown = [n for n in only if n not in [s[0] for s in SCENARIOS]]
    if unknown:
        print("scenarios.py: no scenario %s (--list names them)" % ", ".join(unknown), file=sys.stderr)
        return 64
    chosen = [s for s in SCENARIOS if not only or s[0] in only]
    passed = failed = 0
    for boot, opts in BOOTS.items():
        mine = [s for s in chosen if s[1] == boot]
        if not mine:
            continue
        vm = VM(a.image_dir, **opts)
        try:
            t0 = time.monotonic()
            try:
                vm.start()
                print("boot %s: the guest answered after %.1f s" % (boot, vm.boot_seconds), flush=True)
            except VMError as e:
                for name, _, _ in mine:
                    print("FAIL %s: the guest did not boot: %s" % (name, e), flush=True)
                    failed += 1
                continue
            for name, _, fn in mine:
                t = time.monotonic()
                try:
                    fn(vm)
                    passed += 1
                    print("PASS %s (%.1f s): %s" % (name, time.monotonic() - t, fn.__doc__), flush=True)
                except (Fail, VMError) as e:
                    failed += 1
                    print("FAIL %s (%.1f s): %s" % (name, time.monotonic() - t, e), flush=True)
                    try:  # what the service said last (it never logs typed text)
                        tail = vm.out("journalctl -q --no-pager -o short-monotonic -u %s -n 12" % UNIT, timeout=20)
                        print("    " + tail.strip().replace("\n", "\n    "), flush=True)
                    except VMError:
                        pass
            print("boot %s: %.1f s in all" % (boot, time.monotonic() - t0), flush=True)
        finally:
            vm.stop()
            if a.keep:
                print("boot %s: run folder kept: %s" % (boot, vm.dir), flush=True)
            else:
                vm.cleanup()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
