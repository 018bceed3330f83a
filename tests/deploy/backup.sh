#!/usr/bin/env bash
# A backup taken with pg_dump while turns and imports run, restored into a fresh
# database that a new instance serves: every document, conversation, user and grant,
# compared row by row with the database it came from.
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

# Every row there before the backup: each must come back.
tables=(users groups group_members collections collection_grants documents chunks conversations query_log)
snapshot() {
    local database=$1 folder=$2 table
    mkdir -p "$folder"
    for table in "${tables[@]}"; do
        psql "$database" -qAtc "COPY (SELECT t::text FROM $table t) TO STDOUT" | LC_ALL=C sort >"$folder/$table"
    done
}
snapshot "$source" "$WORK/before"

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
pg_dump --format=custom --file="$WORK/bor.dump" "$source" || fail "pg_dump failed"
rounds_at_dump=$(psql "$source" -qAtc 'SELECT count(*) FROM documents')
rm "$WORK/load.on"
wait "$load"
say "pg_dump taken while turns and imports ran ($(cat "$WORK/load.rounds") rounds of a turn and an import; $rounds_at_dump documents when it ended); $(du -h "$WORK/bor.dump" | cut -f1)"

pg_restore --no-owner --dbname="$restored" "$WORK/bor.dump" 2>"$WORK/pg_restore.log" ||
    fail "pg_restore failed: $(cat "$WORK/pg_restore.log")"
snapshot "$restored" "$WORK/restored"
snapshot "$source" "$WORK/after"
for table in "${tables[@]}"; do
    missing=$(LC_ALL=C comm -23 "$WORK/before/$table" "$WORK/restored/$table" | head -n 3)
    [ -z "$missing" ] || fail "$table: rows from before the backup are missing after the restore: $missing"
done
# Rows nothing changes after they are written come back exactly as the source holds them.
for table in users groups group_members collections collection_grants documents chunks; do
    changed=$(LC_ALL=C comm -23 "$WORK/restored/$table" "$WORK/after/$table" | head -n 3)
    [ -z "$changed" ] || fail "$table: restored rows that differ from the source: $changed"
done
summary=""
for table in "${tables[@]}"; do
    summary+="$table $(wc -l <"$WORK/restored/$table"), "
done
say "restored, row by row: ${summary%, }"

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
