#!/usr/bin/env bash
# The Debian packages as they install: builds them (scripts/build-deb: dpkg-buildpackage, then
# lintian with no error or warning), extracts both (kbd-commandd and kbd-commandd-bar) into a
# scratch root (dpkg -x) and runs the installed files from there:
#   - the split: the bar is in kbd-commandd-bar only, which depends on GTK and on
#     kbd-commandd of the same version; kbd-commandd depends on no GTK and recommends the bar;
#   - kbd-commandd --version, check of the installed config, run --help, agent --help and
#     bar --help (which execute the service, the agent and the bar from
#     usr/libexec/kbd-commandd), each with
#     an empty environment and, as root, the Swift toolchain hidden (a tmpfs over its
#     folder in a private mount namespace); ldd names no toolchain library;
#   - systemd-analyze verify of the system and user units (ExecStart and ExecReload pointed into the
#     scratch root, Documentation= man pages looked up there);
#   - the udev rule: `udevadm verify` where udev has it (v253+), else parsed by
#     `udevadm test` from /run/udev/rules.d in a private mount namespace (a parse error is
#     a line naming the file); its RUN program run on a scratch file for a real user;
#   - the man pages (tests-package/check-man), the completions (bash -n, zsh -n,
#     fish -n where installed), the maintainer scripts (sh -n), the conffile;
#   - the unit does not restart after a usage or config error (RestartPreventExitStatus);
#     postrm's drop_acl takes the rule's entry and the ACL mask it caused off a scratch file.
# Ends with 'N passed, N failed'. Needs scripts/install-deps --package.
#   tests-package/run.sh [--no-build]   (--no-build: use dist/*.deb as it is)
set -euo pipefail
cd "$(dirname "$0")/.."
pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1" >&2; fail=$((fail + 1)); }
expect() { local what="$1"; shift; if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi; }

[ "${1:-}" = "--no-build" ] || scripts/build-deb
version="$(dpkg-parsechangelog -S Version)"
deb="dist/kbd-commandd_${version}_$(dpkg-architecture -qDEB_HOST_ARCH).deb"
bar_deb="dist/kbd-commandd-bar_${version}_$(dpkg-architecture -qDEB_HOST_ARCH).deb"
[ -f "$deb" ] || { echo "tests-package: $deb is missing" >&2; exit 1; }
[ -f "$bar_deb" ] || { echo "tests-package: $bar_deb is missing" >&2; exit 1; }
R="$(mktemp -d /tmp/kbd-package-root.XXXXXX)"
trap 'rm -rf "$R"' EXIT
dpkg -x "$deb" "$R"
dpkg-deb -e "$deb" "$R/DEBIAN"

# The split: GTK only in kbd-commandd-bar.
main_files="$(dpkg-deb -c "$deb")"
bar_files="$(dpkg-deb -c "$bar_deb")"
main_depends="$(dpkg-deb -f "$deb" Depends)"
bar_depends="$(dpkg-deb -f "$bar_deb" Depends)"
case "$main_files" in *kbd-commandd-bar*) bad "kbd-commandd ships the bar: $(grep kbd-commandd-bar <<<"$main_files")" ;;
                      *) ok "kbd-commandd ships no bar (its binary and man page are in kbd-commandd-bar)" ;; esac
case "$main_depends" in *gtk*) bad "kbd-commandd depends on GTK: $main_depends" ;;
                        *) ok "kbd-commandd depends on no GTK ($main_depends)" ;; esac
expect "kbd-commandd recommends kbd-commandd-bar" grep -w kbd-commandd-bar <<<"$(dpkg-deb -f "$deb" Recommends)"
expect "kbd-commandd-bar ships the bar and its man page" \
    bash -c 'grep "usr/libexec/kbd-commandd/kbd-commandd-bar$" <<<"$0" >/dev/null && grep "man1/kbd-commandd-bar.1.gz$" <<<"$0" >/dev/null' "$bar_files"
expect "kbd-commandd-bar depends on GTK 3, gtk-layer-shell and kbd-commandd (= $version)" \
    bash -c 'grep "libgtk-3-0" <<<"$0" >/dev/null && grep "libgtk-layer-shell0" <<<"$0" >/dev/null && grep -F "kbd-commandd (= $1)" <<<"$0" >/dev/null' "$bar_depends" "$version"
dpkg -x "$bar_deb" "$R"
for f in /usr/bin/kbd-commandd /usr/libexec/kbd-commandd/kbd-commandd-daemon /usr/libexec/kbd-commandd/kbd-commandd-agent \
         /usr/libexec/kbd-commandd/kbd-commandd-bar /usr/share/man/man1/kbd-commandd-bar.1.gz \
         /usr/lib/systemd/system/kbd-commandd.service /usr/lib/systemd/user/kbd-commandd-agent.service \
         /usr/lib/udev/rules.d/60-kbd-commandd.rules /etc/kbd-commandd/config.toml \
         /usr/share/man/man1/kbd-commandd.1.gz /usr/share/man/man5/kbd-commandd.toml.5.gz \
         /usr/share/man/man8/kbd-commandd-daemon.8.gz /usr/share/bash-completion/completions/kbd-commandd \
         /usr/share/zsh/vendor-completions/_kbd-commandd /usr/share/fish/vendor_completions.d/kbd-commandd.fish \
         /usr/share/doc/kbd-commandd/copyright /usr/share/man/man1/kbd-commandd-agent.1.gz \
         /etc/xdg/autostart/kbd-commandd-agent.desktop /usr/share/doc/kbd-commandd/examples/desktop.toml \
         /usr/share/doc/kbd-commandd/examples/recordings/desktop-keys.evemu \
         /usr/share/doc/kbd-commandd/examples/recordings/service-keys.evemu \
         /usr/share/xdg-desktop-portal/portals/kbd-commandd.portal \
         /usr/share/dbus-1/services/org.freedesktop.impl.portal.desktop.kbd_commandd.service; do
    expect "package ships $f" test -s "$R$f"
done
# The licence: MIT at the top of the source, and the package's copyright file in Debian's
# machine-readable format naming it (lintian checks the format's syntax too).
expect "the source has a LICENSE (MIT)" grep -q "^MIT License" LICENSE
expect "copyright is machine-readable (DEP-5) and names the Expat licence" \
    bash -c 'sed -n 1p "$0" | grep -x "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" >/dev/null && grep -x "License: Expat" "$0" >/dev/null' \
    "$R/usr/share/doc/kbd-commandd/copyright"
expect "config.toml is a conffile" grep -qx /etc/kbd-commandd/config.toml "$R/DEBIAN/conffiles"
expect "the autostart entry is a conffile" grep -qx /etc/xdg/autostart/kbd-commandd-agent.desktop "$R/DEBIAN/conffiles"

# The desktop portal's backend: the .portal file names the D-Bus name the activation file
# starts (the agent) and the GlobalShortcuts interface, for sway and the other desktops
# without a backend, never KDE or GNOME (they have their own).
portal="$R/usr/share/xdg-desktop-portal/portals/kbd-commandd.portal"
activation="$R/usr/share/dbus-1/services/org.freedesktop.impl.portal.desktop.kbd_commandd.service"
expect "the .portal file names the agent's bus name and GlobalShortcuts" \
    bash -c 'grep -qx "DBusName=org.freedesktop.impl.portal.desktop.kbd_commandd" "$0" && grep -qx "Interfaces=org.freedesktop.impl.portal.GlobalShortcuts" "$0"' "$portal"
expect "its UseIn names sway, i3, wlroots, river, Wayfire, labwc, niri and COSMIC, never KDE or GNOME" \
    bash -c 'u=$(sed -n "s/^UseIn=//p" "$0"); for d in sway i3 wlroots river Wayfire labwc niri COSMIC; do [[ ";$u;" == *";$d;"* ]] || exit 1; done; [[ ";${u,,};" != *";kde;"* && ";${u,,};" != *";gnome;"* ]]' "$portal"
expect "the D-Bus activation file starts the installed agent for that name" \
    bash -c 'grep -qx "Name=org.freedesktop.impl.portal.desktop.kbd_commandd" "$0" && grep -qx "Exec=/usr/libexec/kbd-commandd/kbd-commandd-agent" "$0"' "$activation"

# The XDG autostart entry (GNOME, KDE, systemd-xdg-autostart-generator): valid, and the
# generator makes a unit of it that runs the agent.
desktop="$R/etc/xdg/autostart/kbd-commandd-agent.desktop"
if command -v desktop-file-validate >/dev/null; then
    out="$(desktop-file-validate "$desktop" 2>&1)" && [ -z "$out" ] && ok "desktop-file-validate kbd-commandd-agent.desktop" \
        || bad "desktop-file-validate kbd-commandd-agent.desktop: $out"
else
    bad "desktop-file-validate is missing (scripts/install-deps --package installs desktop-file-utils)"
fi
generator=/usr/lib/systemd/user-generators/systemd-xdg-autostart-generator
if [ -x "$generator" ]; then
    G="$(mktemp -d /tmp/kbd-autostart.XXXXXX)"
    sed "s|/usr/libexec/kbd-commandd/|$R/usr/libexec/kbd-commandd/|g" "$desktop" > "$G/kbd-commandd-agent.desktop"
    mkdir -p "$G/xdg/autostart" "$G/out" && mv "$G/kbd-commandd-agent.desktop" "$G/xdg/autostart/"
    XDG_CONFIG_DIRS="$G/xdg" XDG_CONFIG_HOME="$G/home" "$generator" "$G/out" "$G/out" "$G/out" 2>/dev/null || true
    expect "systemd-xdg-autostart-generator makes a unit that runs the agent" \
        grep -q "kbd-commandd-agent" "$G/out/app-kbd\\x2dcommandd\\x2dagent@autostart.service"
    rm -rf "$G"
fi

# The man pages' examples use the installed examples: each replays and fires.
ex="$R/usr/share/doc/kbd-commandd/examples"
replayed="$("$R/usr/bin/kbd-commandd" replay "$ex/recordings/desktop-keys.evemu" --config "$ex/desktop.toml" 2>&1 || true)"
case "$replayed" in
    *"command   terminal"*) ok "the installed desktop example fires on the installed recording" ;;
    *) bad "the installed desktop example does not fire on the installed recording: $replayed" ;;
esac
for s in postinst postrm prerm; do expect "$s parses (sh -n)" sh -n "$R/DEBIAN/$s"; done
expect "postinst creates the user and group" grep -q "adduser --system" "$R/DEBIAN/postinst"
expect "postinst enables the service (deb-systemd-helper)" grep -q "deb-systemd-helper enable 'kbd-commandd.service'" "$R/DEBIAN/postinst"
expect "postinst starts it only when systemd runs (not in a chroot)" grep -q "if \[ -d /run/systemd/system \]" "$R/DEBIAN/postinst"
expect "postinst reloads udev and triggers input devices" grep -q "udevadm trigger --subsystem-match=input" "$R/DEBIAN/postinst"
expect "postrm purge removes the user and group" grep -q "deluser --system" "$R/DEBIAN/postrm"
# A bad config exits 64, 66 or 78 (the exit-code table, Failure.swift): the unit does not
# restart it every RestartSec forever; the journal says why it stopped.
expect "the unit does not restart after a usage or config error (RestartPreventExitStatus=64 66 78)" \
    grep -qx "RestartPreventExitStatus=64 66 78" "$R/usr/lib/systemd/system/kbd-commandd.service"

# The installed binaries with no toolchain: an empty environment, and as root the
# toolchain's folder hidden under a tmpfs (a private mount namespace).
swift_dir=""
if command -v swift >/dev/null; then swift_dir="$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")"; fi
bare() {  # runs "$@" with an empty environment (PATH=/usr/bin:/bin), toolchain hidden when possible
    if [ "$(id -u)" -eq 0 ] && [ -n "$swift_dir" ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
        unshare -m /bin/sh -c 'mount -t tmpfs none "$0" && exec env -i PATH=/usr/bin:/bin "$@"' "$swift_dir" "$@"
    else
        env -i PATH=/usr/bin:/bin "$@"
    fi
}
for b in /usr/bin/kbd-commandd /usr/libexec/kbd-commandd/kbd-commandd-daemon /usr/libexec/kbd-commandd/kbd-commandd-agent \
         /usr/libexec/kbd-commandd/kbd-commandd-bar; do
    libs="$(ldd "$R$b")"
    if grep -Eq 'libswift|libFoundation|libdispatch|libBlocksRuntime|not found' <<<"$libs" || { [ -n "$swift_dir" ] && grep -q "$swift_dir" <<<"$libs"; }; then
        bad "$b links only system libraries: $libs"
    else
        ok "$b links only system libraries ($(awk '/=>/{print $1}' <<<"$libs" | tr '\n' ' '))"
    fi
done
# The resident processes: libstdc++ is linked statically (link/static-libstdc++: loading
# libstdc++.so.6 kept ~900 KiB resident for its symbol tables), and the standard library's
# _StringProcessing and _RegexParser are not linked at all (their code is one section each,
# which no function order can pack: ~900 KB of text). BENCHMARKS.md "Idle memory".
for b in /usr/libexec/kbd-commandd/kbd-commandd-daemon /usr/libexec/kbd-commandd/kbd-commandd-agent; do
    needed="$(readelf -d "$R$b" | awk '/NEEDED/{print $NF}' | tr -d '[]' | tr '\n' ' ')"
    case "$needed" in
    *libstdc++*) bad "$b loads libstdc++.so (NEEDED: $needed); the release link should take libstdc++.a (link/static-libstdc++)" ;;
    *) ok "$b does not load libstdc++.so (NEEDED: $needed)" ;;
    esac
done
# The packaged binary is stripped: read the symbols of the release build it was made from.
b=.build/release/kbd-commandd-daemon
syms="$(nm "$b" 2>/dev/null || true)"
n="$(grep -c '_StringProcessing\|_RegexParser' <<<"$syms" || true)"
if [ "$(wc -l <<<"$syms")" -lt 1000 ]; then bad "$b: no symbol table to check (nm found $(wc -l <<<"$syms") lines)"
elif [ "$n" = 0 ]; then ok "$b links no _StringProcessing or _RegexParser code"
else bad "$b links $n _StringProcessing/_RegexParser symbols: something in the service calls contains(String) or firstRange(of:); use KbdSystem's includes(_:)/text(after:)"; fi
if [ -n "$swift_dir" ]; then
    if bare /bin/sh -c "test ! -e '$swift_dir/usr/bin/swift'"; then ok "the toolchain ($swift_dir) is hidden for the runs below"
    elif [ "$(id -u)" -eq 0 ]; then bad "the toolchain ($swift_dir) could not be hidden"
    else echo "toolchain not hidden (needs root for a mount namespace); the runs have an empty environment" >&2; fi
fi
out="$(bare "$R/usr/bin/kbd-commandd" --version 2>&1)" && [ "$out" = "$version" ] \
    && ok "kbd-commandd --version: $out" || bad "kbd-commandd --version: $out"
out="$(bare "$R/usr/libexec/kbd-commandd/kbd-commandd-daemon" --version 2>&1)" \
    && ok "kbd-commandd-daemon --version: $out" || bad "kbd-commandd-daemon --version: $out"
out="$(bare "$R/usr/bin/kbd-commandd" check --config "$R/etc/kbd-commandd/config.toml" 2>&1)" \
    && ok "kbd-commandd check of the installed config: $out" || bad "kbd-commandd check of the installed config: $out"
out="$(bare "$R/usr/bin/kbd-commandd" run --help 2>&1)" && grep -q "USAGE: kbd-commandd run" <<<"$out" \
    && ok "kbd-commandd run executes usr/libexec/kbd-commandd/kbd-commandd-daemon" || bad "kbd-commandd run --help: $out"
out="$(bare "$R/usr/bin/kbd-commandd" agent --help 2>&1)" && grep -q "USAGE: kbd-commandd agent" <<<"$out" \
    && ok "kbd-commandd agent executes usr/libexec/kbd-commandd/kbd-commandd-agent" || bad "kbd-commandd agent --help: $out"
out="$(bare "$R/usr/bin/kbd-commandd" bar --help 2>&1)" && grep -q "USAGE: kbd-commandd bar" <<<"$out" \
    && ok "kbd-commandd bar executes usr/libexec/kbd-commandd/kbd-commandd-bar" || bad "kbd-commandd bar --help: $out"

# The units, as installed, with their programs pointed into the scratch root.
if command -v systemd-analyze >/dev/null; then
    U="$R/units"; mkdir -p "$U"
    for unit in system/kbd-commandd.service user/kbd-commandd-agent.service; do
        sed -e "s|/usr/libexec/kbd-commandd/|$R/usr/libexec/kbd-commandd/|g" -e "s|/usr/bin/kbd-commandd |$R/usr/bin/kbd-commandd |g" "$R/usr/lib/systemd/$unit" > "$U/$(basename "$unit")"
    done
    out="$(MANPATH="$R/usr/share/man" systemd-analyze verify "$U/kbd-commandd.service" 2>&1)" && [ -z "$out" ] \
        && ok "systemd-analyze verify kbd-commandd.service (and its man: documentation)" || bad "systemd-analyze verify kbd-commandd.service: $out"
    out="$(MANPATH="$R/usr/share/man" XDG_RUNTIME_DIR="$U" systemd-analyze --user verify "$U/kbd-commandd-agent.service" 2>&1)" \
        && ok "systemd-analyze --user verify kbd-commandd-agent.service" || bad "systemd-analyze --user verify kbd-commandd-agent.service: $out"
else
    bad "systemd-analyze is missing (scripts/install-deps --package)"
fi

# The udev rule.
rule="$R/usr/lib/udev/rules.d/60-kbd-commandd.rules"
if ! command -v udevadm >/dev/null; then
    bad "udevadm is missing (scripts/install-deps --package installs udev)"
elif udevadm verify --help >/dev/null 2>&1; then
    out="$(udevadm verify "$rule" 2>&1)" && ok "udevadm verify 60-kbd-commandd.rules" || bad "udevadm verify: $out"
elif [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
    out="$(unshare -m /bin/sh -c 'mount -t tmpfs none /run && mkdir -p /run/udev/rules.d && cp "$0" /run/udev/rules.d/ \
           && udevadm test --action=add /sys/class/mem/null 2>&1' "$rule" || true)"
    problems="$(grep '^/run/udev/rules.d/60-kbd-commandd.rules' <<<"$out" || true)"
    if grep -q "Reading rules file: /run/udev/rules.d/60-kbd-commandd.rules" <<<"$out" && [ -z "$problems" ]; then
        ok "udevadm test (udev $(udevadm --version)) reads 60-kbd-commandd.rules without a problem"
    else
        bad "udevadm test of 60-kbd-commandd.rules: ${problems:-the rule was not read}"
    fi
else
    echo "udev rule parse skipped: needs udevadm verify, or root for a mount namespace" >&2
fi
# Its RUN program, on a scratch file, for a user that exists here (the package's user may not).
run_line="$(sed -n 's/^RUN+="\(.*\)"$/\1/p' "$rule")"
scratch="$(mktemp)"
if command -v setfacl >/dev/null && command -v getfacl >/dev/null; then
    cmd="${run_line/user:kbd-commandd:/user:nobody:}"
    cmd="${cmd/\$devnode/$scratch}"
    chmod 0660 "$scratch"
    if $cmd && getfacl -p "$scratch" 2>/dev/null | grep -x "user:nobody:r--" >/dev/null && [ "$(stat -c %a "$scratch")" = 660 ]; then
        ok "the rule's RUN program adds user:…:r-- and leaves the mode (0660) alone"
    else
        bad "the rule's RUN program ($cmd): $(getfacl -p "$scratch" 2>&1 | tr '\n' ' ')"
    fi
    # postrm remove's drop_acl (the installed script's function, for a user that exists here):
    # the entry goes and so does the mask it caused, so the node has no ACL left (no "+" in
    # ls -l) when it had none before; an entry another program set stays, with its mask.
    eval "$(sed -n '/^drop_acl() {/,/^}/p' "$R/DEBIAN/postrm")"
    rm -f "$scratch"; scratch="$(mktemp)"; chmod 0660 "$scratch"
    setfacl --modify=user:nobody:r-- "$scratch"
    drop_acl "$scratch" nobody
    left="$(getfacl --omit-header --numeric "$scratch" 2>/dev/null | grep -v '^$' | tr '\n' ' ')"
    if [ "$left" = "user::rw- group::rw- other::--- " ] && [ "$(stat -c %a "$scratch")" = 660 ]; then
        ok "postrm's drop_acl removes the entry and the mask it caused (no ACL left)"
    else
        bad "postrm's drop_acl left: $left (mode $(stat -c %a "$scratch"))"
    fi
    setfacl --modify=user:daemon:rw- "$scratch"; setfacl --modify=user:nobody:r-- "$scratch"
    drop_acl "$scratch" nobody
    left="$(getfacl --omit-header "$scratch" 2>/dev/null | tr '\n' ' ')"
    case "$left" in
        *"user:daemon:rw-"*"mask::rw-"*) case "$left" in *nobody*) bad "postrm's drop_acl kept the entry: $left" ;; *) ok "postrm's drop_acl keeps another program's entry and its mask" ;; esac ;;
        *) bad "postrm's drop_acl took another program's entry: $left" ;;
    esac
else
    bad "setfacl is missing (the package depends on acl; scripts/install-deps installs it)"
fi
rm -f "$scratch"

# Man pages against the installed binaries.
B="$R/bin-for-man"; M="$R/man-flat"; mkdir -p "$B" "$M"
ln -s "$R/usr/bin/kbd-commandd" "$R/usr/libexec/kbd-commandd/kbd-commandd-daemon" "$R/usr/libexec/kbd-commandd/kbd-commandd-agent" \
    "$R/usr/libexec/kbd-commandd/kbd-commandd-bar" "$B/"
ln -s "$R"/usr/share/man/man*/*.gz "$M/"
if out="$(tests-package/check-man "$B" "$M" 2>&1)"; then ok "man pages: $(tail -n 1 <<<"$out")"; else echo "$out" >&2; bad "man pages (tests-package/check-man)"; fi

# Completions.
expect "bash completion parses (bash -n)" bash -n "$R/usr/share/bash-completion/completions/kbd-commandd"
if command -v zsh >/dev/null; then expect "zsh completion parses (zsh -n)" zsh -n "$R/usr/share/zsh/vendor-completions/_kbd-commandd"; fi
if command -v fish >/dev/null; then expect "fish completion parses (fish -n)" fish -n "$R/usr/share/fish/vendor_completions.d/kbd-commandd.fish"; fi
expect "bash completion completes the subcommands" bash -c "source '$R/usr/share/bash-completion/completions/kbd-commandd' && complete -p kbd-commandd >/dev/null"

# The postinst with accounts that are already there, in a private mount namespace (root):
# a throwaway copy of /etc (the accounts), tmpfs over /var/lib (its record of what it
# created), /run/udev and /run/systemd (no udev reload, no unit started), so nothing of
# this machine changes. sandbox SCRIPT runs SCRIPT there with $postinst and $postrm set,
# and prints its output and the kbd-commandd lines of group and passwd after it.
sandbox() {
    local S; S="$(mktemp -d /tmp/kbd-postinst.XXXXXX)"
    cp -a /etc "$S/etc" 2>/dev/null || true
    unshare -m /bin/bash -c '
        S="$0" postinst="$1" postrm="$2"
        mount --make-rprivate / && mount --bind "$S/etc" /etc && mount -t tmpfs none /var/lib \
            && mkdir -p /var/lib/dpkg && for d in /run/udev /run/systemd; do [ ! -d "$d" ] || mount -t tmpfs none "$d" || exit 2; done \
            || { echo "sandbox: cannot mount"; exit 2; }
        eval "$3" 2>&1
        echo "after: group $(getent group kbd-commandd || echo none)"
        echo "after: passwd $(getent passwd kbd-commandd || echo none)"
        ' "$S" "$R/DEBIAN/postinst" "$R/DEBIAN/postrm" "$1"
    rm -rf "$S"
}
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null && command -v groupadd >/dev/null; then
    # A group kbd-commandd this package did not create, with a member: its members would be
    # operators (every keystroke). Refused with the reason, non-zero; a purge after the
    # refusal leaves the group alone.
    out="$(sandbox 'groupadd --system kbd-commandd && useradd -M -N -G kbd-commandd -s /usr/sbin/nologin kbdoperator \
                    && { "$postinst" configure; echo "status $?"; } && "$postrm" purge && echo "purged"')"
    if grep -qx "status 1" <<<"$out" && grep -q "refusing to adopt the existing group kbd-commandd .*members (kbdoperator)" <<<"$out" \
       && grep -q "^after: group kbd-commandd:x:[0-9]*:kbdoperator$" <<<"$out" && grep -qx "after: passwd none" <<<"$out"; then
        ok "postinst refuses an existing group kbd-commandd with a member (exit 1, names the member), and purge leaves it"
    else
        bad "postinst with an existing group kbd-commandd with a member: $out"
    fi
    # A system account kbd-commandd with a login shell: refused.
    out="$(sandbox 'groupadd --system kbd-commandd && useradd --system -M -g kbd-commandd -s /bin/bash kbd-commandd \
                    && { "$postinst" configure; echo "status $?"; }')"
    if grep -qx "status 1" <<<"$out" && grep -q "refusing to adopt the existing account kbd-commandd .*its shell is /bin/bash" <<<"$out" \
       && grep -q "^after: passwd kbd-commandd:.*:/bin/bash$" <<<"$out"; then
        ok "postinst refuses an existing system account kbd-commandd with /bin/bash (exit 1, says why)"
    else
        bad "postinst with an existing account kbd-commandd with /bin/bash: $out"
    fi
    # What it may adopt: an empty group (a checkout's scripts/install leaves one), and its own
    # group after an upgrade, though the administrator added an operator to it.
    out="$(sandbox 'groupadd --system kbd-commandd && "$postinst" configure && echo "fresh ok" \
                    && gpasswd -a nobody kbd-commandd >/dev/null && "$postinst" configure 0.1.0 && echo "upgrade ok" \
                    && "$postrm" purge && echo "purged"')"
    if grep -qx "fresh ok" <<<"$out" && grep -qx "upgrade ok" <<<"$out" && grep -qx "purged" <<<"$out" \
       && grep -qx "after: group none" <<<"$out" && grep -qx "after: passwd none" <<<"$out"; then
        ok "postinst adopts an empty group, keeps its own group with an operator on upgrade, and purge removes both"
    else
        bad "postinst with an empty group, then an upgrade: $out"
    fi
else
    echo "postinst refusal cases skipped (need root, unshare -m and groupadd)" >&2
fi

# The maintainer scripts for real: dpkg -i, then purge, on this machine. Only as root, where
# the package, its user and its group are not there already and systemd is not running (a
# CI container: nothing is started), or when KBD_PACKAGE_INSTALL=1 asks.
if [ "$(id -u)" -eq 0 ] && ! dpkg-query -W kbd-commandd >/dev/null 2>&1 && ! getent passwd kbd-commandd >/dev/null \
   && ! getent group kbd-commandd >/dev/null && { [ ! -d /run/systemd/system ] || [ "${KBD_PACKAGE_INSTALL:-}" = 1 ]; }; then
    if out="$(dpkg -i "$deb" "$bar_deb" 2>&1)"; then
        ok "dpkg -i (kbd-commandd and kbd-commandd-bar)"
        expect "the installed kbd-commandd bar runs the installed bar" \
            bash -c 'env -i PATH=/usr/bin:/bin kbd-commandd bar --help | grep "USAGE: kbd-commandd bar" >/dev/null'
        expect "dpkg -r kbd-commandd-bar leaves the service installed" \
            bash -c 'dpkg -r kbd-commandd-bar >/dev/null && [ ! -e /usr/libexec/kbd-commandd/kbd-commandd-bar ] && [ -x /usr/libexec/kbd-commandd/kbd-commandd-daemon ]'
        out="$(env -i PATH=/usr/bin:/bin kbd-commandd bar --help 2>&1)" || true
        case "$out" in *"install the package kbd-commandd-bar"*) ok "without the bar package, kbd-commandd bar says which package to install" ;;
                       *) bad "kbd-commandd bar without the bar package: $out" ;; esac
        expect "postinst created the system user kbd-commandd (shell nologin, not in group input)" \
            bash -c 'getent passwd kbd-commandd | grep ":/usr/sbin/nologin$" >/dev/null && ! id -nG kbd-commandd | tr " " "\n" | grep -x input >/dev/null'
        expect "postinst created the group kbd-commandd" getent group kbd-commandd
        expect "postinst enabled the unit" test -L /etc/systemd/system/multi-user.target.wants/kbd-commandd.service
        expect "man finds the installed pages" man -w kbd-commandd kbd-commandd.toml kbd-commandd-daemon
        out="$(env -i PATH=/usr/bin:/bin kbd-commandd check --config /etc/kbd-commandd/config.toml 2>&1)" \
            && ok "installed kbd-commandd checks the installed config" || bad "installed check: $out"
        expect "dpkg -r" dpkg -r kbd-commandd
        expect "remove keeps the conffile" test -f /etc/kbd-commandd/config.toml
        expect "dpkg --purge" dpkg --purge kbd-commandd
        expect "purge removed the user, the group, /etc/kbd-commandd and the enablement" \
            bash -c '! getent passwd kbd-commandd && ! getent group kbd-commandd && [ ! -e /etc/kbd-commandd ] \
                     && [ ! -e /etc/systemd/system/multi-user.target.wants/kbd-commandd.service ] && [ ! -e /usr/bin/kbd-commandd ]'
    else
        bad "dpkg -i: $out"
    fi
else
    echo "real install and purge skipped (needs root, no kbd-commandd package, user or group, no running systemd)" >&2
fi

echo "package: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
