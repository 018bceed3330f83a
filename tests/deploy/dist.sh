#!/usr/bin/env bash
# The release archive unpacked in an empty folder, away from the source, serves the chat:
# the pages and an asset from inside the binary, /api/health, an admin's sign-in; the
# systemd unit passes `systemd-analyze verify`.
source "$(dirname "$0")/lib.sh"

unpack_release
say "unpacked $(basename "$RELEASE") in an empty folder"
for file in bor bor.service bor.env INSTALL.md; do
    [ -f "$RELEASE/$file" ] || fail "the archive has no $file"
done
if grep -Eq '^[^#]*(TOKEN|KEY|SECRET|PASSWORD)[A-Z_]*=[^/ ]' "$RELEASE/bor.env"; then
    fail "bor.env sets a secret: $(grep -E '^[^#]*(TOKEN|KEY|SECRET|PASSWORD)' "$RELEASE/bor.env")"
fi

if command -v systemd-analyze >/dev/null 2>&1; then
    # The unit as installed, its binary where the unit expects it.
    sed "s|/usr/local/bin/bor|$BOR|" "$RELEASE/bor.service" >"$WORK/bor.service"
    systemd-analyze verify "$WORK/bor.service" >"$WORK/verify.log" 2>&1 ||
        fail "systemd-analyze verify: $(cat "$WORK/verify.log")"
    [ ! -s "$WORK/verify.log" ] || fail "systemd-analyze verify warns: $(cat "$WORK/verify.log")"
    say "systemd-analyze verify: clean"
fi

# Refusals before anything starts: no sign-in on a public address, an unreadable secret.
refusal=$(run_bor BOR_AUTH=off BOR_BIND=0.0.0.0:8000 "$BOR" serve 2>&1) && fail "BOR_AUTH=off on 0.0.0.0 started"
grep -q 'BOR_AUTH=off is refused on BOR_BIND=0.0.0.0:8000' <<<"$refusal" || fail "unexpected refusal: $refusal"
refusal=$(run_bor BOR_ADMIN_TOKEN_FILE=/nonexistent/admin-token "$BOR" serve 2>&1) && fail "an unreadable secret file started"
grep -q '^BOR_ADMIN_TOKEN_FILE=/nonexistent/admin-token cannot be read' <<<"$refusal" || fail "unexpected refusal: $refusal"
say "refused: BOR_AUTH=off on 0.0.0.0, an unreadable BOR_ADMIN_TOKEN_FILE"

fresh_database main database
start_mock_llm 0
password=$(make_admin "$database")
[ -n "$password" ] || fail "bor user add printed no password"
port=$(free_port)
start_instance solo "$port" "$database"
base=http://127.0.0.1:$port

curl -fs "$base/api/health" | grep -q '"status":"ok"' || fail "/api/health is not ok"
curl -fs "$base/login" | grep -qi '<html' || fail "the sign-in page is not served"
asset=$(curl -fs "$base/login" | grep -o 'src="/static/[^"]*"' | head -n 1 | sed 's/^src="//; s/"$//')
[ -n "$asset" ] || fail "the sign-in page names no script"
curl -fs -o "$WORK/asset" "$base$asset" || fail "$asset is not served"
[ -s "$WORK/asset" ] || fail "$asset is empty"
sign_in "$base" admin "$password" "$WORK/jar"
curl -fs -b "$WORK/jar" "$base/api/auth/me" | grep -q '"role":"admin"' || fail "the admin's session does not work"
curl -fs -b "$WORK/jar" "$base/" | grep -qi '<html' || fail "the chat page is not served"
say "served from $(basename "$RELEASE"): the chat page, $asset, /api/health; the admin signed in"
say "passed"
