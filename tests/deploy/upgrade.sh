#!/usr/bin/env bash
# An upgrade from the previous schema to this release's, with two instances: the
# database holds a team's data at the schema before this round's migrations (those the
# newest commit adding migrations added; UPGRADE_FROM=<migration folder> names the
# previous release's newest instead), `bor migrate` applies the rest, the instances
# are restarted one after the other, and each serves everything that was there, the
# sessions included. A binary older than the database is then refused.
source "$(dirname "$0")/lib.sh"

unpack_release
fresh_database main database
start_mock_llm 0

# This round's migrations: newer than UPGRADE_FROM, else those of the newest commit that
# added any (the newest migration alone without git history).
mapfile -t all < <(ls "$ROOT/migrations")
if [ -n "${UPGRADE_FROM:-}" ]; then
    newer=()
    for migration in "${all[@]}"; do
        [[ "$migration" > "$UPGRADE_FROM" ]] && newer+=("$migration")
    done
elif commit=$(git -C "$ROOT" log -1 --format=%H --diff-filter=A -- 'migrations/*/up.sql' 2>/dev/null) && [ -n "$commit" ]; then
    mapfile -t newer < <(git -C "$ROOT" show --name-only --diff-filter=A --format= "$commit" -- 'migrations/*/up.sql' |
        cut -d/ -f2 | sort)
else
    newer=("${all[-1]}")
fi
# A shallow clone's one commit adds every migration: then the newest alone.
[ ${#newer[@]} -lt ${#all[@]} ] || newer=("${all[-1]}")
[ ${#newer[@]} -gt 0 ] || fail "no migration is newer than ${UPGRADE_FROM:-the previous schema}"
oldest_new=${newer[0]}
# Everything from the oldest of them on is reverted, newest first.
revert=()
for migration in "${all[@]}"; do
    [[ "$migration" < "$oldest_new" ]] || revert=("$migration" "${revert[@]}")
done
say "this round's migrations: ${newer[*]}"

# The team's data, made by this release, then the schema taken back to the previous one.
password=$(make_admin "$database")
run_bor BOR_DATABASE_URL="$database" BOR_OCR=off "$BOR" user add bob >/dev/null
port_a=$(free_port)
port_b=$(free_port)
start_instance a "$port_a" "$database" BOR_INSTANCE_URL="http://127.0.0.1:$port_a"
base_a=http://127.0.0.1:$port_a
sign_in "$base_a" admin "$password" "$WORK/jar"
api() { curl -fsS -b "$WORK/jar" -H "Origin: $base_a" -H 'Content-Type: application/json' "$@"; }
api -d '{"name":"ops"}' "$base_a/api/admin/collections" >/dev/null
api -X PUT -d '[{"user":"bob","access":"read"}]' "$base_a/api/admin/collections/ops/grants" >/dev/null
for n in 1 2 3; do
    api -d "{\"title\":\"Runbook $n\",\"content\":\"Restart pump $n after the alarm.\",\"collection\":\"ops\"}" \
        "$base_a/api/admin/documents" >/dev/null
done
api -N -d '{"message":"When is pump 2 restarted?"}' "$base_a/api/chat" | grep -q '^event: done' ||
    fail "the turn before the upgrade did not end with done"
kill "$PID_a"
wait "$PID_a" 2>/dev/null || true
for migration in "${revert[@]}"; do
    version=$(cut -d_ -f1 <<<"$migration" | tr -d -)
    psql "$database" -qAt -v ON_ERROR_STOP=1 --single-transaction \
        -f "$ROOT/migrations/$migration/down.sql" \
        -c "DELETE FROM __diesel_schema_migrations WHERE version = '$version'" >/dev/null ||
        fail "reverting $migration failed"
done
count() { psql "$database" -qAtc "SELECT count(*) FROM $1"; }
before="documents $(count documents), conversations $(count conversations), users $(count users), grants $(count collection_grants), sessions $(count sessions)"
say "the database at the previous schema (${#revert[@]} migrations back) with $before"

# The upgrade: one `bor migrate`, then the instances restarted one after the other.
migrated=$(run_bor BOR_DATABASE_URL="$database" BOR_OCR=off "$BOR" migrate) || fail "bor migrate failed: $migrated"
for migration in "${revert[@]}"; do
    grep -qx "applied $migration" <<<"$migrated" || fail "bor migrate did not apply $migration: $migrated"
done
say "bor migrate: $(tr '\n' ';' <<<"$migrated")"
start_instance a "$port_a" "$database" BOR_INSTANCE_URL="http://127.0.0.1:$port_a"
start_instance b "$port_b" "$database" BOR_INSTANCE_URL="http://127.0.0.1:$port_b"
grep -q 'migration applied' "$WORK/b.log" && fail "instance b applied a migration after bor migrate"
after="documents $(count documents), conversations $(count conversations), users $(count users), grants $(count collection_grants), sessions $(count sessions)"
[ "$before" = "$after" ] || fail "the upgrade changed the rows: $before, then $after"
for port in "$port_a" "$port_b"; do
    base=http://127.0.0.1:$port
    # The session from before the upgrade is still good.
    curl -fsS -b "$WORK/jar" "$base/api/auth/me" | grep -q '"role":"admin"' || fail "the old session does not work on :$port"
    [ "$(curl -fsS -b "$WORK/jar" "$base/api/documents" | jq length)" -eq "$(count documents)" ] ||
        fail ":$port does not serve every document"
    conversation=$(curl -fsS -b "$WORK/jar" "$base/api/conversations" | jq -r '.[0].id')
    curl -fsS -N -b "$WORK/jar" -H "Origin: $base" -H 'Content-Type: application/json' \
        -d "{\"message\":\"And pump 3?\",\"conversation_id\":\"$conversation\"}" "$base/api/chat" |
        grep -q '^event: done' || fail "continuing the conversation on :$port failed"
    curl -fsS -b "$WORK/jar" "$base/api/admin/collections" |
        jq -e '.collections[] | select(.name == "ops") | .grants == [{"user":"bob","access":"read"}]' >/dev/null ||
        fail "the grant is not served on :$port"
done
say "both instances serve every document, the old session, the grant, and continue the conversation"

# A binary older than the database: a migration it does not know is recorded.
psql "$database" -qAtc "INSERT INTO __diesel_schema_migrations (version) VALUES ('29991231000000')"
refusal=$(run_bor BOR_DATABASE_URL="$database" BOR_OCR=off BOR_BIND="127.0.0.1:$(free_port)" "$BOR" serve 2>&1) &&
    fail "bor started on a database newer than itself"
grep -q 'the database has migration 29991231000000, which this bor does not know' <<<"$refusal" ||
    fail "unexpected refusal: $refusal"
say "a database newer than the binary is refused: $(tail -n 1 <<<"$refusal")"
say "passed"
