#!/usr/bin/env bash
# Makes sure nginx (with TLS), openssl and jq are installed for the deployment drills
# (tests/deploy/): installs Debian's nginx-light, openssl and jq (apt-get) when
# missing. Starts nothing. Idempotent; prints nothing on success and one clear message
# on failure.
set -euo pipefail

fail() {
    echo "ensure-nginx: $*" >&2
    exit 1
}

. "$(dirname "$0")/debian.sh"

missing=()
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v jq >/dev/null 2>&1 || missing+=(jq)
[ ${#missing[@]} -eq 0 ] && exit 0

command -v apt-get >/dev/null 2>&1 ||
    fail "the proxy drill needs ${missing[*]} and this is not a Debian-like system (no apt-get)"
# The package's own service is not started: the drill runs its own nginx.
policy=/usr/sbin/policy-rc.d
made_policy=false
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
    as_root chmod 755 "$policy"
    made_policy=true
fi
status=0
apt_install "${missing[@]}" || status=1
[ "$made_policy" = true ] && as_root rm -f "$policy"
[ $status -eq 0 ] || fail "apt-get install ${missing[*]} failed"
