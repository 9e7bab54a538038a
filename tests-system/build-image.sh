#!/usr/bin/env bash
# Builds the Debian 12 guest the system stage boots, with the project's packages installed
# the way the README says (`apt install ./…deb`, in a chroot of the image):
#
#   tests-system/build-image.sh OUTDIR DEB...
#
# writes OUTDIR/root.img (a raw ext4 file system, the guest's /dev/vda), OUTDIR/vmlinuz and
# OUTDIR/initrd.img (Debian's own kernel and initramfs, taken from the image). Needs root.
#
# Two steps:
#  1. The base system: debootstrap --variant=minbase of bookworm plus the packages below
#     (systemd, udev, logind, a kernel, sway and GTK for the bar). Slow (minutes), so it is
#     kept in $KBD_SYSTEM_CACHE (default /var/cache/kbd-commandd-system) under a name
#     made from the package list and this file's base recipe: a change to either builds a
#     new one. Only Debian's packages are in it, never the project's files.
#  2. Every run: a throwaway copy of the base in OUTDIR, the .debs installed into it with
#     apt, the test fixtures (tests-system/guest/: users, autologin, the control agent)
#     added, and mkfs.ext4 -d turning the folder into an image (no loop mount, no
#     partitions).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
[ $# -ge 2 ] || { echo "usage: tests-system/build-image.sh OUTDIR DEB..." >&2; exit 64; }
[ "$(id -u)" -eq 0 ] || { echo "build-image: needs root (debootstrap, chroot)" >&2; exit 1; }
out=$1; shift
debs=()
for d in "$@"; do
    [ -f "$d" ] || { echo "build-image: no such package file: $d (run scripts/build-deb)" >&2; exit 66; }
    debs+=("$(cd "$(dirname "$d")" && pwd)/$(basename "$d")")
done
mirror=${KBD_SYSTEM_MIRROR:-http://deb.debian.org/debian}
cache=${KBD_SYSTEM_CACHE:-/var/cache/kbd-commandd-system}

# The base image's packages: what the issue names (a booted Debian with systemd, udev,
# logind), what the checks run (chvt from kbd, ps, getfacl, evemu-device for a lid switch), the runtime dependencies of
# the two .debs (so installing them needs no download), and sway for the bar.
# debootstrap takes the system's packages; apt (in the chroot, which resolves alternatives
# such as dbus-session-bus that debootstrap does not) the rest.
system_packages=(systemd-sysv udev dbus libpam-systemd login acl linux-image-amd64 initramfs-tools)
packages=(
    dbus-user-session kbd procps psmisc adduser passwd less evemu-tools
    libevdev2 libxkbcommon0 xkb-data libsystemd0 libglib2.0-0
    sway libgtk-3-0 libgtk-layer-shell0 fonts-dejavu-core
)
# The recipe's version: bump when the steps of base_build change.
recipe=3
key=$(printf '%s\n' "bookworm" "$recipe" "${system_packages[@]}" "${packages[@]}" | sha256sum | cut -c1-16)
base="$cache/base-$key"

mounted=()
cleanup() {
    local m
    for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT
# chroot_mounts DIR: /proc, /sys and /dev for maintainer scripts run in the chroot.
chroot_mounts() {
    mount -t proc proc "$1/proc"; mounted+=("$1/proc")
    mount -t sysfs sys "$1/sys"; mounted+=("$1/sys")
    mount --bind /dev "$1/dev"; mounted+=("$1/dev")
    mount -t devpts -o newinstance devpts "$1/dev/pts" 2>/dev/null && mounted=("$1/dev/pts" "${mounted[@]}")
}
chroot_unmount() {
    cleanup
    mounted=()
}

base_build() {
    local tmp="$1"
    local list
    list=$(IFS=,; echo "${system_packages[*]}")
    echo "build-image: debootstrap bookworm (minbase, ${system_packages[*]}) into $tmp" >&2
    debootstrap --variant=minbase --include="$list" bookworm "$tmp" "$mirror" >"$tmp.log" 2>&1 || {
        tail -n 30 "$tmp.log" >&2
        echo "build-image: debootstrap failed (log above, and $tmp/debootstrap/debootstrap.log; is $mirror reachable?)" >&2
        return 1; }
    echo "build-image: apt-get install ${packages[*]}" >&2
    chroot_mounts "$tmp"
    if ! chroot "$tmp" apt-get update -qq >>"$tmp.log" 2>&1 ||
       ! chroot "$tmp" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}" >>"$tmp.log" 2>&1; then
        tail -n 30 "$tmp.log" >&2
        echo "build-image: apt-get install in the base image failed (log above)" >&2
        return 1
    fi
    chroot "$tmp" apt-get clean
    chroot_unmount
    # The kernel's initramfs must find the root on virtio-blk: MODULES=most has it.
    # Nothing else is configured here: the per-run step does the rest.
    echo "root.img" >"$tmp/etc/hostname"
}

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9
if [ ! -d "$base" ]; then
    # Old bases (another package list) are removed: one is kept per machine.
    rm -rf "$cache"/base-* "$cache"/tmp-*
    t0=$(date +%s)
    base_build "$cache/tmp-$key"
    rm -f "$cache/tmp-$key.log"
    mv "$cache/tmp-$key" "$base"
    echo "build-image: base built in $(( $(date +%s) - t0 )) s: $base" >&2
else
    echo "build-image: base cached: $base" >&2
fi

rm -rf "$out"
mkdir -p "$out"
root="$out/root"
t0=$(date +%s)
cp -a --reflink=auto "$base" "$root"
flock -u 9
exec 9>&-

# The packages, as the README says: apt install ./….deb (their dependencies are in the base).
mkdir -p "$root/tmp/debs"
cp "${debs[@]}" "$root/tmp/debs/"
chroot_mounts "$root"
names=()
for d in "${debs[@]}"; do names+=("./$(basename "$d")"); done
# Nothing is downloaded: every dependency is in the base. In a chroot the postinst
# enables the unit but does not start it (policy), and the udev rule is applied at boot.
if ! chroot "$root" sh -c 'cd /tmp/debs && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"' sh "${names[@]}" >"$out/apt-install.log" 2>&1; then
    tail -n 30 "$out/apt-install.log" >&2
    echo "build-image: apt install of the packages failed in the image (log above, $out/apt-install.log)" >&2
    exit 1
fi
rm -rf "$root/tmp/debs"
"$here/guest/setup.sh" "$root"
chroot_unmount

cp "$root/boot/vmlinuz-"* "$out/vmlinuz"
cp "$root/boot/initrd.img-"* "$out/initrd.img"
# A raw ext4 image of the folder: the guest's /dev/vda. 4 GiB, sparse.
mkfs.ext4 -q -F -L kbdroot -d "$root" "$out/root.img" 4G
rm -rf --one-file-system "$root"
echo "build-image: $out/root.img in $(( $(date +%s) - t0 )) s" >&2
