#!/usr/bin/env bash
# An upgrade from the previous release to this one, with the instances serving: a team's
# data made by the previous release's binary on its own schema; `bor migrate` of this
# release while an instance of the previous release serves, which answers every read
# before, during and after it; this release's instances started one after the other
# while the old one still serves, then the old one stopped; each new instance serves
# everything that was there, the sessions included; the previous release then refuses
# to start on the migrated database, naming the newer migration.
#
# The previous release: scripts/previous-release.sh builds it (main just before the
# newest change to migrations/; PREVIOUS_RELEASE=<commit> for another), or
# UPGRADE_PREVIOUS_BOR=<its bor binary> with PREVIOUS_RELEASE=<its commit>. Its
# migrations are those of its commit's tree; this release's new ones, the rest.
source "$(dirname "$0")/lib.sh"

unpack_release
fresh_database main database
start_mock_llm 0

if [ -n "${UPGRADE_PREVIOUS_BOR:-}" ]; then
    previous_bor=$UPGRADE_PREVIOUS_BOR
    previous_commit=$(git -C "$ROOT" rev-parse --verify "${PREVIOUS_RELEASE:?name the commit of UPGRADE_PREVIOUS_BOR}^{commit}")
else
    say "building the previous release (scripts/previous-release.sh)"
    mapfile -t built < <("$ROOT/scripts/previous-release.sh") || fail "the previous release could not be built"
    previous_bor=${built[0]:-}
    previous_commit=${built[1]:-}
fi
[ -x "$previous_bor" ] && [ -n "$previous_commit" ] || fail "no binary of the previous release"
mapfile -t previous_migrations < <(git -C "$ROOT" ls-tree --name-only "$previous_commit" migrations/ | sed 's|^migrations/||' | grep -v '^\.')
mapfile -t all < <(ls "$ROOT/migrations")
for migration in "${previous_migrations[@]}"; do
    [ -d "$ROOT/migrations/$migration" ] ||
        fail "migration $migration of the previous release is gone from this one: databases of the previous release would be refused"
done
new=()
for migration in "${all[@]}"; do
    printf '%s\n' "${previous_migrations[@]}" | grep -qx "$migration" || new+=("$migration")
done
say "previous release $(git -C "$ROOT" rev-parse --short "$previous_commit"): ${#previous_migrations[@]} migrations; this release adds ${#new[@]}: ${new[*]:-none}"

# The team's data, made by the previous release on its schema.
password=$(run_bor BOR_DATABASE_URL="$database" BOR_OCR=off "$previous_bor" user add admin --admin | sed -n 's/^password: //p')
run_bor BOR_DATABASE_URL="$database" BOR_OCR=off "$previous_bor" user add bob >/dev/null
port_old=$(free_port)
port_a=$(free_port)
port_b=$(free_port)
INSTANCE_BOR=$previous_bor start_instance old "$port_old" "$database" BOR_INSTANCE_URL="http://127.0.0.1:$port_old"
base_old=http://127.0.0.1:$port_old
sign_in "$base_old" admin "$password" "$WORK/jar"
api() { curl -fsS -b "$WORK/jar" -H "Origin: $base_old" -H 'Content-Type: application/json' "$@"; }
api -d '{"name":"ops"}' "$base_old/api/admin/collections" >/dev/null
api -X PUT -d '[{"user":"bob","access":"read"}]' "$base_old/api/admin/collections/ops/grants" >/dev/null
for n in 1 2 3; do
    api -d "{\"title\":\"Runbook $n\",\"content\":\"Restart pump $n after the alarm.\",\"collection\":\"ops\"}" \
        "$base_old/api/admin/documents" >/dev/null
done
api -N -d '{"message":"When is pump 2 restarted?"}' "$base_old/api/chat" | grep -q '^event: done' ||
    fail "the turn before the upgrade did not end with done"
# The turn's conversation is stored once its rows are written, a moment after its end.
tries=0
until conversation=$(api "$base_old/api/conversations" | jq -er '.[0].id'); do
    tries=$((tries + 1))
    [ $tries -lt 100 ] || fail "the conversation of the turn is not listed"
    sleep 0.1
done
count() { psql "$database" -qAtc "SELECT count(*) FROM $1"; }
before="documents $(count documents), conversations $(count conversations), users $(count users), grants $(count collection_grants), sessions $(count sessions)"
say "the previous release serves $before"

# What the old instance is asked while the upgrade runs: each read, its status.
reads=(/api/health /api/auth/me /api/documents /api/conversations "/api/conversations/$conversation"
    /api/admin/collections /api/admin/users /api/keys)
read_all() {
    local path
    for path in "${reads[@]}"; do
        echo "$1 $(curl -sS -o /dev/null -w '%{http_code}' -b "$WORK/jar" "$base_old$path") $path"
    done
}
read_all before >"$WORK/reads"
touch "$WORK/reading"
(while [ -e "$WORK/reading" ]; do read_all during; done >>"$WORK/reads") &
reader=$!
STARTED+=($reader)

# The upgrade: one `bor migrate` of this release while the old instance serves.
migrated=$(run_bor BOR_DATABASE_URL="$database" BOR_OCR=off "$BOR" migrate) || fail "bor migrate failed: $migrated"
rm "$WORK/reading"
wait "$reader" || true
for migration in "${new[@]}"; do
    grep -qx "applied $migration" <<<"$migrated" || fail "bor migrate did not apply $migration: $migrated"
done
say "bor migrate: $(tr '\n' ';' <<<"$migrated")"
read_all after >>"$WORK/reads"
failed=$(awk '$2 != 200' "$WORK/reads")
[ -z "$failed" ] || fail "the old instance did not answer every read around the upgrade: $(head -n 5 <<<"$failed")"
say "the old instance answered all $(wc -l <"$WORK/reads") reads before, during and after bor migrate with 200 ($(grep -c '^during' "$WORK/reads") during it)"
# A turn and a document on the old instance after the upgrade: answered, or refused
# cleanly; never a 500.
turn=$(curl -sS -N -b "$WORK/jar" -H "Origin: $base_old" -H 'Content-Type: application/json' -w '\nstatus %{http_code}' \
    -d "{\"message\":\"And pump 1?\",\"conversation_id\":\"$conversation\"}" "$base_old/api/chat")
document=$(curl -sS -b "$WORK/jar" -H "Origin: $base_old" -H 'Content-Type: application/json' -o /dev/null -w '%{http_code}' \
    -d '{"title":"Runbook 4","content":"Restart pump 4 after the alarm.","collection":"ops"}' "$base_old/api/admin/documents")
grep -q '^status 200$' <<<"$turn" && grep -q '^event: done' <<<"$turn" ||
    fail "a turn on the old instance after bor migrate: $(tail -n 3 <<<"$turn")"
[ "$document" = 201 ] || fail "adding a document on the old instance after bor migrate answered $document"
say "after bor migrate the old instance still answers a turn (done) and adds a document ($document)"

# This release's instances, one after the other, while the old one serves; then it stops.
start_instance a "$port_a" "$database" BOR_INSTANCE_URL="http://127.0.0.1:$port_a"
curl -fsS -b "$WORK/jar" "$base_old/api/documents" >/dev/null || fail "the old instance stopped serving when a started"
kill "$PID_old"
wait "$PID_old" 2>/dev/null || true
start_instance b "$port_b" "$database" BOR_INSTANCE_URL="http://127.0.0.1:$port_b"
for log in a b; do
    grep -q 'migration applied' "$WORK/$log.log" && fail "instance $log applied a migration after bor migrate"
done
after="documents $(($(count documents) - 1)), conversations $(count conversations), users $(count users), grants $(count collection_grants), sessions $(count sessions)"
[ "$before" = "$after" ] || fail "the upgrade changed the rows: $before, then $after (the document added after it left out)"
for port in "$port_a" "$port_b"; do
    base=http://127.0.0.1:$port
    # The session from before the upgrade is still good.
    curl -fsS -b "$WORK/jar" "$base/api/auth/me" | grep -q '"role":"admin"' || fail "the old session does not work on :$port"
    [ "$(curl -fsS -b "$WORK/jar" "$base/api/documents" | jq length)" -eq "$(count documents)" ] ||
        fail ":$port does not serve every document"
    curl -fsS -N -b "$WORK/jar" -H "Origin: $base" -H 'Content-Type: application/json' \
        -d "{\"message\":\"And pump 3?\",\"conversation_id\":\"$conversation\"}" "$base/api/chat" |
        grep -q '^event: done' || fail "continuing the conversation on :$port failed"
    curl -fsS -b "$WORK/jar" "$base/api/admin/collections" |
        jq -e '.collections[] | select(.name == "ops") | .grants == [{"user":"bob","access":"read"}]' >/dev/null ||
        fail "the grant is not served on :$port"
done
say "this release's instances a and b, started while the old one served, serve every document, the old session, the grant, and continue the conversation"

# A downgrade: the previous release on the migrated database refuses to start, naming
# the newer migration (a recorded one from the future when this release adds none).
[ ${#new[@]} -gt 0 ] ||
    psql "$database" -qAtc "INSERT INTO __diesel_schema_migrations (version) VALUES ('29991231000000')"
refusal=$(run_bor BOR_DATABASE_URL="$database" BOR_OCR=off BOR_BIND="127.0.0.1:$(free_port)" "$previous_bor" serve 2>&1) &&
    fail "the previous release started on a database newer than itself"
grep -Eq 'the database has migration [0-9]+( \(and [0-9]+ more\))?, which this bor does not know' <<<"$refusal" ||
    fail "unexpected refusal: $refusal"
say "the previous release is refused on the migrated database: $(tail -n 1 <<<"$refusal")"
say "passed"
