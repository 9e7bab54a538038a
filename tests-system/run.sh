#!/usr/bin/env bash
# The system stage: the Debian packages installed on a real Debian 12 that boots with
# systemd, udev and logind under QEMU, and checked from inside it (tests-system/README.md).
#
#   tests-system/run.sh [--debs DIR] [--only NAME[,NAME…]] [--keep]
#
# 1. installs what it needs (qemu-system-x86, qemu-utils, debootstrap, e2fsprogs, python3);
# 2. builds the packages (scripts/build-deb), unless --debs names a folder holding them;
# 3. builds the guest image (tests-system/build-image.sh: the cached base plus
#    `apt install ./…deb`) in a throwaway folder;
# 4. boots it and runs the scenarios (tests-system/scenarios.py; --only picks some).
# Needs root. Every qemu is killed by its PID on the way out, whatever happens; the
# throwaway folder is removed (--keep keeps it: the image and each boot's console.log).
# Bounded: the boots and checks are stopped after 12 minutes. The last line is
# "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
debs="" only="" keep=no
while [ $# -gt 0 ]; do
    case "$1" in
        --debs) debs=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --keep) keep=yes; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "tests-system/run.sh: unknown option $1 (try --help)" >&2; exit 64 ;;
    esac
done
[ "$(id -u)" -eq 0 ] || { echo "tests-system/run.sh: needs root (debootstrap, chroot, mkfs)"; echo "0 passed, 1 failed"; exit 1; }
# shellcheck source=scripts/apt-lib.sh
. scripts/apt-lib.sh
apt_install_missing qemu-system-x86 qemu-utils debootstrap e2fsprogs python3 acl

work=$(mktemp -d /var/tmp/kbd-system.XXXXXX)
finish() {
    local f
    # Every qemu a boot started, by the PID it recorded (tests-system/vm.py).
    # (Only a PID that is still a qemu: the number may have been reused once it exited.)
    local pid
    for f in "$work"/runs/*/qemu.pid.host; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        case "$(readlink "/proc/$pid/exe" 2>/dev/null)" in
            */qemu-system-*) kill -KILL "$pid" 2>/dev/null || true ;;
        esac
    done
    if [ "$keep" = yes ]; then echo "kept: $work"; else rm -rf "$work"; fi
}
trap finish EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/runs"
fail() { echo "tests-system/run.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

t0=$(date +%s)
if [ -z "$debs" ]; then
    scripts/build-deb || fail "scripts/build-deb failed"
    debs=dist
fi
version="$(dpkg-parsechangelog -S Version)"
arch="$(dpkg-architecture -qDEB_HOST_ARCH)"
pkgs=("$debs/kbd-commandd_${version}_${arch}.deb" "$debs/kbd-commandd-bar_${version}_${arch}.deb")
t1=$(date +%s)
tests-system/build-image.sh "$work/image" "${pkgs[@]}" || fail "the guest image could not be built"
t2=$(date +%s)
args=()
[ -n "$only" ] && args+=(--only "$only")
[ "$keep" = yes ] && args+=(--keep)
rc=0
KBD_SYSTEM_RUNS="$work/runs" timeout --kill-after=15 720 python3 tests-system/scenarios.py "$work/image" "${args[@]}" || rc=$?
t3=$(date +%s)
echo "system stage times: packages $((t1 - t0)) s, image $((t2 - t1)) s, boots and checks $((t3 - t2)) s, in all $((t3 - t0)) s"
if [ "$rc" -eq 124 ]; then echo "tests-system/run.sh: the boots and checks did not finish in 12 minutes"; echo "0 passed, 1 failed"; fi
exit "$rc"
