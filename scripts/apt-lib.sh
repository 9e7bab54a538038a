# Helpers to install missing Debian packages. Sourced by scripts/install-deps and
# tests-desktop/setup-host.sh, not run. Written for `set -euo pipefail`: no pipeline
# here ends in a reader that may stop early (grep -q, head), since the writer then dies
# of SIGPIPE (exit 141) and pipefail turns a match into a failure.

# apt_is_installed PACKAGE: whether dpkg has PACKAGE installed.
apt_is_installed() {
    local status
    status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
    [ "$status" = "install ok installed" ]
}

# apt_has_candidate PACKAGE: whether apt can install PACKAGE (a version other than "(none)").
apt_has_candidate() {
    local policy line
    policy=$(apt-cache policy "$1" 2>/dev/null) || return 1
    while IFS= read -r line; do
        line=${line#"${line%%[![:space:]]*}"}
        case $line in
            "Candidate: (none)") return 1 ;;
            "Candidate: "?*) return 0 ;;
        esac
    done <<<"$policy"
    return 1
}

# apt_install_missing [--recommends] PACKAGE...: installs those not installed yet
# (apt-get update first); refuses, naming them, packages apt has no candidate for.
# Needs root, or sudo on PATH.
apt_install_missing() {
    local recommends=(--no-install-recommends)
    if [ "${1:-}" = --recommends ]; then recommends=(); shift; fi
    local p missing=() unknown=() sudo=()
    for p in "$@"; do apt_is_installed "$p" || missing+=("$p"); done
    [ ${#missing[@]} -gt 0 ] || return 0
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    echo "installing: ${missing[*]}" >&2
    "${sudo[@]}" apt-get update -qq
    for p in "${missing[@]}"; do apt_has_candidate "$p" || unknown+=("$p"); done
    if [ ${#unknown[@]} -gt 0 ]; then
        echo "error: apt has no installation candidate for: ${unknown[*]} (Debian 12 bookworm has them all: check /etc/apt/sources.list)" >&2
        return 1
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${recommends[@]}" "${missing[@]}" >/dev/null
}
