# Shared by the deployment drills (tests/deploy/*.sh, `make drills-deploy`): fresh
# databases, the mock LLM server, bor instances from the release archive, and cleanup
# of everything a drill started (by process id) when it ends.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DRILL=$(basename "$0" .sh)
# The server, as the Rust tests reach it (BOR_TEST_DATABASE_URL without its database).
PG_ADMIN=${BOR_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
PG_ADMIN=${PG_ADMIN%/*}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bor-$DRILL.XXXXXX")
STARTED=()
DATABASES=()

say() { echo "$(date +%T) $DRILL: $*"; }

# Stops the drill with what went wrong and the end of every log it wrote.
fail() {
    echo "$DRILL: FAILED: $*" >&2
    local log
    for log in "$WORK"/*.log; do
        [ -e "$log" ] || continue
        echo "--- $(basename "$log") (last 20 lines)" >&2
        tail -n 20 "$log" >&2
    done
    exit 1
}

cleanup() {
    local pid database
    for pid in "${STARTED[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${STARTED[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    for database in "${DATABASES[@]}"; do
        psql "$PG_ADMIN/postgres" -qAtc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A new empty database named after $1; its URL goes into the variable named $2.
fresh_database() {
    local name="bor_deploy_${DRILL//-/_}_$1_$$"
    psql "$PG_ADMIN/postgres" -qAtc "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null 2>&1
    psql "$PG_ADMIN/postgres" -qAtc "CREATE DATABASE $name" >/dev/null
    DATABASES+=("$name")
    printf -v "$2" '%s' "$PG_ADMIN/$name"
}

# The release archive (make dist), unpacked in an empty folder: sets BOR to its binary
# and RELEASE to the folder.
unpack_release() {
    local archive
    archive=$(ls -t "$ROOT"/dist/bor-*-linux-gnu.tar.gz 2>/dev/null | head -n 1)
    [ -n "$archive" ] || fail "no release archive in dist/: run make dist"
    mkdir -p "$WORK/release"
    tar -C "$WORK/release" -xzf "$archive"
    RELEASE=$(echo "$WORK"/release/bor-*)
    BOR=$RELEASE/bor
    [ -x "$BOR" ] || fail "$archive holds no bor binary"
}

# The mock LLM server on a free port, `token_delay_ms` between chunks: sets LLM_URL.
start_mock_llm() {
    local port
    port=$(free_port)
    "$ROOT/target/debug/bor-mock-llm" --bind "127.0.0.1:$port" --token-delay-ms "${1:-0}" \
        >"$WORK/mock-llm.log" 2>&1 &
    STARTED+=($!)
    LLM_URL=http://127.0.0.1:$port/v1
    wait_for "$LLM_URL/models"
}

# Waits up to 60 s for URL to answer 200.
wait_for() {
    local tries=0
    until curl -fsk -o /dev/null "$1"; do
        tries=$((tries + 1))
        [ $tries -lt 240 ] || fail "$1 did not answer within 60 s"
        sleep 0.25
    done
}

# `bor` with nothing of this machine's environment but PATH, from the release folder,
# with the BOR_ variables given as NAME=value arguments before the command.
run_bor() {
    (cd "$RELEASE" && env -i PATH=/usr/bin:/bin HOME="$WORK" "$@")
}

# Starts instance NAME of the release binary (or of INSTANCE_BOR when set) on PORT
# against database URL with more NAME=value variables; sets PID_<NAME> and waits for
# /api/health.
start_instance() {
    local name=$1 port=$2 database=$3
    shift 3
    printf '%s' "$database" >"$WORK/$name.database-url"
    (cd "$RELEASE" && exec env -i PATH=/usr/bin:/bin HOME="$WORK" \
        BOR_BIND="127.0.0.1:$port" BOR_DATABASE_URL_FILE="$WORK/$name.database-url" \
        BOR_LLM_BASE_URL="$LLM_URL" BOR_LLM_RETRY_DELAY=0.1 BOR_OCR=off "$@" \
        "${INSTANCE_BOR:-$BOR}" serve) >>"$WORK/$name.log" 2>&1 &
    STARTED+=($!)
    printf -v "PID_$name" '%s' $!
    wait_for "http://127.0.0.1:$port/api/health"
}

# The first admin, `admin`, on database URL; prints the password.
make_admin() {
    run_bor BOR_DATABASE_URL="$1" BOR_OCR=off "$BOR" user add admin --admin | sed -n 's/^password: //p'
}

# Signs in at BASE as USER with PASSWORD, keeping the session cookie in the jar FILE.
sign_in() {
    local base=$1 user=$2 password=$3 jar=$4
    curl -fsk -c "$jar" -H 'Content-Type: application/json' -H "Origin: $base" \
        -d "{\"username\":\"$user\",\"password\":\"$password\"}" "$base/api/auth/login" >/dev/null ||
        fail "$user cannot sign in at $base"
}
