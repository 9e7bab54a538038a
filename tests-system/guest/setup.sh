#!/usr/bin/env bash
# Adds the system test's fixtures to a guest root folder (run by build-image.sh, as root):
#   tests-system/guest/setup.sh ROOT
# - the control agent (kbdtest-ctl) and the per-boot setup (kbdtest-boot), enabled;
# - root logged in on the serial console (ttyS0), for a person who boots the image;
# - users alice, bob, carol and dave (password kbdtest); alice autologin on tty1, bob
#   on tty2; carol and dave log in by typing at a login prompt;
# - each user's agent table (commands that write "fired NAME" to the journal) and the
#   agent started from ~/.profile (a text console: alice and bob as a transient user unit,
#   carol as a background process that outlives her logout) or from sway's config (alice,
#   sway);
# - a system drop-in binding Ctrl+Alt+M for the service.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root=$1
install -m 0755 "$here/kbdtest-ctl" "$root/usr/local/sbin/kbdtest-ctl"
install -m 0755 "$here/kbdtest-boot" "$root/usr/local/sbin/kbdtest-boot"
mkdir -p "$root/usr/local/share/kbdtest"
install -m 0644 "$here/lid-switch.evemu" "$root/usr/local/share/kbdtest/"
install -m 0644 "$here/kbdtest-ctl.service" "$here/kbdtest-boot.service" "$root/etc/systemd/system/"
mkdir -p "$root/etc/systemd/system/multi-user.target.wants" "$root/etc/systemd/system/getty.target.wants"
ln -sf /etc/systemd/system/kbdtest-ctl.service "$root/etc/systemd/system/multi-user.target.wants/"
ln -sf /etc/systemd/system/kbdtest-boot.service "$root/etc/systemd/system/multi-user.target.wants/"
# tty2's getty at boot (logind would start it only when tty2 is switched to).
ln -sf /lib/systemd/system/getty@.service "$root/etc/systemd/system/getty.target.wants/getty@tty2.service"
ln -sf /lib/systemd/system/getty@.service "$root/etc/systemd/system/getty.target.wants/getty@tty3.service"
autologin() { # UNIT USER
    mkdir -p "$root/etc/systemd/system/$1.d"
    printf '[Service]\nExecStart=\nExecStart=-/sbin/agetty --autologin %s --noclear %%I $TERM\n' "$2" \
        >"$root/etc/systemd/system/$1.d/autologin.conf"
}
autologin serial-getty@ttyS0.service root
autologin getty@tty1.service alice
autologin getty@tty2.service bob
# Nothing that wakes up on a timer during the test.
for t in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer; do
    ln -sf /dev/null "$root/etc/systemd/system/$t"
done
printf '/dev/vda / ext4 defaults 0 1\n' >"$root/etc/fstab"
echo kbdtest >"$root/etc/hostname"

for u in alice bob carol dave; do
    chroot "$root" useradd --create-home --shell /bin/bash "$u"
done
printf '%s\n' alice:kbdtest bob:kbdtest carol:kbdtest dave:kbdtest | chroot "$root" chpasswd
# user_table USER 'KEYS ID'...: the agent's table, each command logging "fired ID".
user_table() {
    local u=$1 k id dir="$root/home/$1/.config/kbd-commandd"
    shift
    mkdir -p "$dir"
    for entry in "$@"; do
        k=${entry% *}; id=${entry##* }
        printf '[[command]]\nid = "%s"\ntitle = "%s"\nkeys = "%s"\nrun = ["logger", "-t", "kbdtest", "fired %s"]\n\n' \
            "$id" "$id" "$k" "$id"
    done >"$dir/config.toml"
}
user_table alice "Super+M alice-chord" "q alice-letter"
user_table bob "Super+M bob-chord" "q bob-letter"
# carol binds every letter of what the next user types at the login prompt ("dave",
# "kbdtest"): after she logs out, none may fire.
user_table carol "d carol-d" "a carol-a" "v carol-v" "e carol-e" "k carol-k" "b carol-b" "t carol-t" "s carol-s"
for u in alice bob; do
    cat "$here/profile-agent" >>"$root/home/$u/.profile"
done
cat "$here/profile-agent-plain" >>"$root/home/carol/.profile"
mkdir -p "$root/home/alice/.config/sway"
cp "$here/sway-config" "$root/home/alice/.config/sway/config"
for u in alice bob carol dave; do
    chroot "$root" chown -R "$u:$u" "/home/$u"
done
chmod -R go-w "$root"/home/*/.config

mkdir -p "$root/etc/kbd-commandd/config.d"
cat >"$root/etc/kbd-commandd/config.d/50-systemtest.toml" <<'TOML'
# The system test's command for the service itself (README: "For the whole machine").
[[command]]
id = "mark"
title = "Mark the journal"
keys = "Ctrl+Alt+M"
run = ["logger", "-t", "kbdtest", "fired system-mark"]
TOML
chmod 0644 "$root/etc/kbd-commandd/config.d/50-systemtest.toml"
