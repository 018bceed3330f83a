# Installing Debian's packages, for the scripts that install what they need: sourced
# (`. scripts/debian.sh`), not run.
#
#   as_root CMD...         runs CMD as root: directly, or through sudo
#   apt_install PKG...     installs the packages quietly, refreshing the package lists
#                          only when a first try fails; on failure prints apt's last
#                          lines and returns 1. `--recommends` first: with the
#                          packages they recommend.

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "root rights are needed to run: $*" >&2
        return 1
    fi
}

apt_install() {
    local recommends=--no-install-recommends
    if [ "${1:-}" = --recommends ]; then
        recommends=
        shift
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$* cannot be installed: this is not a Debian-like system (no apt-get)" >&2
        return 1
    fi
    local log
    log="$(mktemp)"
    local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $recommends "$@")
    if ! as_root "${install[@]}" >>"$log" 2>&1 &&
        ! { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
            as_root "${install[@]}"; } >>"$log" 2>&1; then
        tail -n 20 "$log" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
}
