#!/usr/bin/env bash
# A backup taken with pg_dump while turns and imports run, restored into a fresh
# database that a new instance serves: every table, conversations and turns included,
# compared row by row with the source as the dump's snapshot saw it.
source "$(dirname "$0")/lib.sh"

unpack_release
fresh_database source source
fresh_database restored restored
start_mock_llm 20
password=$(make_admin "$source")
run_bor BOR_DATABASE_URL="$source" BOR_OCR=off "$BOR" user add bob >/dev/null
port=$(free_port)
start_instance a "$port" "$source"
base=http://127.0.0.1:$port
sign_in "$base" admin "$password" "$WORK/jar"
api() { curl -fsS -b "$WORK/jar" -H "Origin: $base" -H 'Content-Type: application/json' "$@"; }

# Collections, a group, grants, documents, a conversation: the team's data.
api -d '{"name":"ops","description":"Operations"}' "$base/api/admin/collections" >/dev/null
api -d '{"name":"crew"}' "$base/api/admin/groups" >/dev/null
api -X PUT -d '["bob"]' "$base/api/admin/groups/crew/members" >/dev/null
api -X PUT -d '[{"group":"crew","access":"read"},{"user":"bob","access":"write"}]' \
    "$base/api/admin/collections/ops/grants" >/dev/null
for n in 1 2 3 4 5; do
    api -d "{\"title\":\"Runbook $n\",\"content\":\"# Runbook $n\\n\\nRestart the pump $n after the alarm; log the pressure.\",\"collection\":\"ops\"}" \
        "$base/api/admin/documents" >/dev/null
done
turn() {
    curl -fsS -N -b "$WORK/jar" -H "Origin: $base" -H 'Content-Type: application/json' \
        -d "$(jq -nc --arg message "$1" '{$message}')" "$base/api/chat"
}
turn "When is pump 3 restarted?" | grep -q '^event: done' || fail "the first turn did not end with done"

# Every table, as text rows in a stable order, read in one transaction; with a
# snapshot id, in that snapshot (another transaction's, exported with
# pg_export_snapshot()).
snapshot() {
    local database=$1 folder=$2 snapshot_id=${3:-} table script
    mkdir -p "$folder"
    script="BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;"
    [ -z "$snapshot_id" ] || script+=" SET TRANSACTION SNAPSHOT '$snapshot_id';"
    for table in $(psql "$database" -qAtc "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"); do
        script+=$'\n'"\\o $folder/$table"$'\n'"COPY (SELECT t::text FROM $table t) TO STDOUT;"
    done
    script+=$'\n'"\\o"$'\n'"COMMIT;"
    psql "$database" -qAt -v ON_ERROR_STOP=1 <<<"$script" >/dev/null || fail "reading $database's tables failed"
    for table in "$folder"/*; do LC_ALL=C sort -o "$table" "$table"; done
}
conversations_before=$(psql "$source" -qAtc 'SELECT count(*) FROM conversations')

# Turns and imports keep coming while pg_dump runs.
touch "$WORK/load.on"
(
    n=0
    while [ -e "$WORK/load.on" ]; do
        n=$((n + 1))
        turn "What about pump $n?"$'\nMOCK {"repeat":20}' >/dev/null || true
        api -d "{\"title\":\"Shift note $n\",\"content\":\"Shift $n: pressure normal, pump $n checked.\",\"collection\":\"ops\"}" \
            "$base/api/admin/documents" >/dev/null || true
    done
    echo "$n" >"$WORK/load.rounds"
) &
load=$!
STARTED+=($load)
until [ "$(psql "$source" -qAtc 'SELECT count(*) FROM documents')" -ge 8 ]; do sleep 0.2; done

# The dump is taken in a snapshot a held transaction exports, and the source's tables
# are read in that same snapshot while the load goes on: what the dump holds is known
# exactly, conversations and turns (query_log) included, which later turns change.
mkfifo "$WORK/held.in"
psql "$source" -qAt -v ON_ERROR_STOP=1 <"$WORK/held.in" >"$WORK/held.out" 2>&1 &
STARTED+=($!)
exec 7>"$WORK/held.in"
echo "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT pg_export_snapshot();" >&7
until snapshot_id=$(grep -m1 -E '^[0-9A-F]+-[0-9A-F]+-[0-9]+$' "$WORK/held.out"); do sleep 0.1; done
pg_dump --format=custom --snapshot="$snapshot_id" --file="$WORK/bor.dump" "$source" || fail "pg_dump failed"
snapshot "$source" "$WORK/at-dump" "$snapshot_id"
echo "COMMIT;" >&7
exec 7>&-
rounds_at_dump=$(wc -l <"$WORK/at-dump/documents")
rm "$WORK/load.on"
wait "$load"
say "pg_dump taken while turns and imports ran ($(cat "$WORK/load.rounds") rounds of a turn and an import; $rounds_at_dump documents in its snapshot); $(du -h "$WORK/bor.dump" | cut -f1)"

pg_restore --no-owner --dbname="$restored" "$WORK/bor.dump" 2>"$WORK/pg_restore.log" ||
    fail "pg_restore failed: $(cat "$WORK/pg_restore.log")"
snapshot "$restored" "$WORK/restored"
# Every table of the dump's snapshot comes back exactly, row by row.
tables=$(ls "$WORK/at-dump")
[ "$tables" = "$(ls "$WORK/restored")" ] || fail "the restored database has other tables: $(ls "$WORK/restored" | tr '\n' ' ')"
for table in $tables; do
    differ=$(LC_ALL=C comm -3 "$WORK/at-dump/$table" "$WORK/restored/$table" | head -n 3 | cut -c1-300)
    [ -z "$differ" ] || fail "$table: the restored rows differ from the dump's snapshot of the source: $differ"
done
conversations=$(wc -l <"$WORK/restored/conversations")
[ "$conversations" -gt "$conversations_before" ] ||
    fail "no conversation was started while the dump was taken ($conversations, $conversations_before before)"
snapshot "$source" "$WORK/after"
later=$(LC_ALL=C comm -13 "$WORK/restored/query_log" "$WORK/after/query_log" | wc -l)
summary=""
for table in users groups group_members collections collection_grants documents chunks conversations query_log; do
    summary+="$table $(wc -l <"$WORK/restored/$table"), "
done
say "restored, row by row, every table the same as the dump's snapshot: ${summary%, } ($(wc -w <<<"$tables") tables; turns written in the source after it: $later)"

# A new instance on the restored database serves all of it.
port_b=$(free_port)
start_instance b "$port_b" "$restored"
base_b=http://127.0.0.1:$port_b
sign_in "$base_b" admin "$password" "$WORK/jar-b"
served() { curl -fsS -b "$WORK/jar-b" "$base_b$1"; }
documents=$(served /api/documents | jq length)
[ "$documents" -eq "$(wc -l <"$WORK/restored/documents")" ] ||
    fail "the new instance serves $documents documents of $(wc -l <"$WORK/restored/documents")"
conversations=$(served '/api/conversations?limit=200' | jq length)
expected=$(psql "$restored" -qAtc "SELECT count(*) FROM conversations c JOIN users u ON u.id = c.user_id WHERE u.username = 'admin'")
[ "$conversations" -eq "$expected" ] || fail "the new instance lists $conversations conversations of $expected"
first=$(served '/api/conversations?limit=200' | jq -r 'last.id')
served "/api/conversations/$first" | jq -e '.turns | length >= 1' >/dev/null || fail "the first conversation has no turns"
users=$(served /api/admin/users | jq -c '[.users[] | .username]')
[ "$users" = '["admin","bob"]' ] || fail "the new instance's users: $users"
grants=$(served /api/admin/collections | jq -c '.collections[] | select(.name == "ops") | .grants')
[ "$grants" = "$(curl -fsS -b "$WORK/jar" "$base/api/admin/collections" | jq -c '.collections[] | select(.name == "ops") | .grants')" ] ||
    fail "the grants differ: $grants"
turn_b=$(curl -fsS -N -b "$WORK/jar-b" -H "Origin: $base_b" -H 'Content-Type: application/json' \
    -d '{"message":"When is pump 2 restarted?"}' "$base_b/api/chat")
grep -q '^event: done' <<<"$turn_b" || fail "a turn on the restored instance did not end with done"
say "the new instance serves $documents documents, $conversations conversations, users $users, grants $grants, and answers turns"
say "passed"
