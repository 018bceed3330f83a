#!/usr/bin/env bash
# `make bench-load`: bor's speed, memory and sustained load in front of the mock LLM, and
# LiteLLM's proxy in front of the same mock, driven by bor-loadgen on this machine.
# Writes the load section of bench/RESULTS.md (between its markers) from the JSON
# summaries left in target/bench/load/; the `v1` scenario (the time to first token
# /v1/chat/completions adds over /api/chat) and the `auth` scenario (what accounts and an
# API key add over BOR_AUTH=off) write sections of their own.
#
# BENCH_LOAD_QUICK=1 runs every scenario at a small size (a smoke run, figures rough).
# BENCH_LOAD_SCENARIOS="micro ttft throughput memory sustained kept peer v1 auth limits" picks scenarios.
# BENCH_LOAD_SKIP_LITELLM=1 leaves the peer out (no Python virtual environment needed).
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK="${BENCH_LOAD_QUICK:-0}"
SCENARIOS="${BENCH_LOAD_SCENARIOS:-micro ttft throughput memory sustained kept peer v1 auth limits}"
OUT=target/bench/load
VENV=target/bench/litellm-venv
LITELLM_VERSION=1.106.12
# Free ports, chosen afresh each run (other servers may run on this machine).
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
MOCK_ADDR=127.0.0.1:$(free_port)
BOR_ADDR=127.0.0.1:$(free_port)
# The instance with accounts of the `auth` scenario.
ACCOUNTS_ADDR=127.0.0.1:$(free_port)
LITELLM_PORT=$(free_port)
BENCH_DB=bor_bench
ADMIN_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
LOADGEN=target/release/bor-loadgen
QUESTION="What is the capital of France?"

size() { if [ "$QUICK" = 1 ]; then echo "$2"; else echo "$1"; fi; }
log() { echo "bench-load: $*" >&2; }
has() { [[ " $SCENARIOS " == *" $1 "* ]]; }

mkdir -p "$OUT"
# A run of some scenarios keeps the summaries of the others.
if [ -z "${BENCH_LOAD_SCENARIOS:-}" ]; then
    rm -f "$OUT"/*.json
else
    for scenario in $SCENARIOS; do
        rm -f "$OUT/$scenario"-*.json
    done
fi
# Each bor turn and upstream stream holds a file descriptor on each side.
ulimit -n "$(ulimit -Hn)"

cargo build --release -q -p bor -p bor-mock-llm -p bor-loadgen
scripts/ensure-postgres.sh

pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT

# wait_port ADDR PID: until the server PID listens on ADDR.
wait_port() {
    for _ in $(seq 1 300); do
        kill -0 "$2" 2>/dev/null || { log "the server on $1 exited; see $OUT"; exit 1; }
        (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null && return 0
        sleep 0.1
    done
    log "nothing listens on $1"
    exit 1
}

json_string() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }

# The request bodies.
bor_body() { echo "{\"message\": $(json_string "$1")}"; }
v1_body() {
    echo "{\"model\":\"bor\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":$(json_string "$1")}]}"
}
openai_body() {
    echo "{\"model\":\"smollm2\",\"stream\":true,\"messages\":[{\"role\":\"system\",\"content\":\"You are bor, an assistant for the user's own knowledge base. The knowledge base has nothing relevant to this question.\"},{\"role\":\"user\",\"content\":$(json_string "$1")}]}"
}

start_mock() {
    RUST_LOG=warn target/release/bor-mock-llm --bind "$MOCK_ADDR" > "$OUT/mock.log" 2>&1 &
    mock_pid=$!
    pids+=("$mock_pid")
    wait_port "$MOCK_ADDR" "$mock_pid"
}

reset_database() {
    psql -q -h 127.0.0.1 -U postgres -d postgres -c "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" \
        -c "CREATE DATABASE $BENCH_DB" > /dev/null
}

BENCH_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$BENCH_DB"

# run_bor ADDR AUTH LOG: a bor serving on ADDR with BOR_AUTH=AUTH; its pid in served_pid.
run_bor() {
    BOR_BIND="$1" \
        BOR_DATABASE_URL="$BENCH_DATABASE_URL" \
        BOR_LLM_BASE_URL="http://$MOCK_ADDR/v1" \
        BOR_MAX_CONCURRENT_TURNS=10000 \
        BOR_MAX_ANSWER_CHARS=1000000 \
        BOR_SHUTDOWN_GRACE=1 \
        BOR_LOG=info \
        BOR_AUTH="$2" \
        BOR_ADMIN_TOKEN="$ADMIN_TOKEN" \
        target/release/bor serve >> "$OUT/$3" 2>&1 &
    served_pid=$!
    pids+=("$served_pid")
    wait_port "$1" "$served_pid"
}

start_bor() {
    run_bor "$BOR_ADDR" off bor.log
    bor_pid=$served_pid
}

# A user of the instance with accounts (USERNAME, `bench` by default; a second argument
# `--admin` makes an admin), signed in, and a key made with the session: the key in api_key,
# its id in api_key_id, the session's cookie in session_cookie.
make_api_key() {
    local username=${1:-bench} password reply
    password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
    printf '%s\n' "$password" |
        BOR_DATABASE_URL="$BENCH_DATABASE_URL" BOR_LOG=warn target/release/bor user add "$username" \
            ${2:-} --password-stdin > /dev/null
    session_cookie=$(curl -sf -D - -o /dev/null -H 'Content-Type: application/json' \
        -d "{\"username\":\"$username\",\"password\":\"$password\"}" "http://$ACCOUNTS_ADDR/api/auth/login" |
        sed -n 's/^set-cookie: bor_session=\([^;]*\).*/\1/ip')
    reply=$(curl -sf -H "Cookie: bor_session=$session_cookie" -H "Origin: http://$ACCOUNTS_ADDR" \
        -H 'Content-Type: application/json' -d '{"name":"bench-load"}' "http://$ACCOUNTS_ADDR/api/keys")
    api_key=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["key"])' "$reply")
    api_key_id=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["id"])' "$reply")
}

# POST /api/admin/limits with the admin session in admin_cookie.
set_limit() {
    curl -sf -o /dev/null -H "Cookie: bor_session=$admin_cookie" -H "Origin: http://$ACCOUNTS_ADDR" \
        -H 'Content-Type: application/json' -d "$1" "http://$ACCOUNTS_ADDR/api/admin/limits"
}

stop_bor() {
    kill "$bor_pid" 2>/dev/null || true
    wait "$bor_pid" 2>/dev/null || true
}

# loadgen NAME MODE ARGS…: one run, its summary saved as NAME.json.
loadgen() {
    local name=$1
    shift
    log "$name"
    "$LOADGEN" "$@" > "$OUT/$name.json"
}

to_bor() { echo --addr "$BOR_ADDR" --path /api/chat --protocol bor --pid "$bor_pid"; }
to_bor_v1() { echo --addr "$BOR_ADDR" --path /v1/chat/completions --protocol openai --pid "$bor_pid"; }
to_accounts() { echo --addr "$ACCOUNTS_ADDR" --path /api/chat --protocol bor --pid "$accounts_pid" --bearer "$api_key"; }
to_mock() { echo --addr "$MOCK_ADDR" --path /v1/chat/completions --protocol openai --pid "$mock_pid"; }

machine_facts() {
    python3 - "$OUT/machine.json" <<'PY'
import json, os, subprocess, sys, datetime
def first(path, key):
    for line in open(path):
        if line.startswith(key):
            return line.split(":", 1)[1].strip()
facts = {
    "nproc": os.cpu_count(),
    "cpu": first("/proc/cpuinfo", "model name"),
    "memory_gib": round(int(first("/proc/meminfo", "MemTotal").split()[0]) / 1024 / 1024, 1),
    "kernel": os.uname().release,
    "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
    "dirty": bool(subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True).stdout.strip()),
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    "load_before": open("/proc/loadavg").read().split()[:3],
    "quick": os.environ.get("BENCH_LOAD_QUICK", "0") == "1",
}
json.dump(facts, open(sys.argv[1], "w"))
PY
}

machine_facts

if has micro; then
    # Criterion micro-benchmarks of the filter and the upstream stream decoding; they
    # leave their estimates in target/criterion.
    log "micro-benchmarks (criterion)"
    rm -rf target/criterion/scaffolding_filter target/criterion/upstream_sse
    cargo bench -q -p bor-actors --bench relay_paths -- \
        --warm-up-time "$(size 2 1)" --measurement-time "$(size 5 1)" > "$OUT/criterion.txt" 2>&1
fi

reset_database
start_mock
start_bor
# Warm both up: connections, the database pool, the allocator.
loadgen warmup-bor closed $(to_bor) --body "$(bor_body "$QUESTION")" --clients 50 --requests 2000 > /dev/null
loadgen warmup-mock closed $(to_mock) --body "$(openai_body "$QUESTION")" --clients 50 --requests 2000 > /dev/null

if has ttft; then
    for clients in 1 100 1000; do
        case $clients in
            1) requests=$(size 3000 300) ;;
            100) requests=$(size 20000 2000) ;;
            *) requests=$(size 20000 3000) ;;
        esac
        loadgen "ttft-mock-c$clients" closed $(to_mock) --body "$(openai_body "$QUESTION")" \
            --clients "$clients" --requests "$requests"
        loadgen "ttft-bor-c$clients" closed $(to_bor) --body "$(bor_body "$QUESTION")" \
            --clients "$clients" --requests "$requests"
    done
fi

if has throughput; then
    # Long answers streamed as fast as the mock writes them (120,000 characters each,
    # within the answer bound start_bor sets).
    tokens=$(size 20000 5000)
    question="Stream a long answer
MOCK {\"reply\": \"token \", \"repeat\": $tokens}"
    turns=$(size 40 8)
    loadgen throughput-mock closed $(to_mock) --body "$(openai_body "$question")" --clients 4 --requests "$turns"
    loadgen throughput-bor closed $(to_bor) --body "$(bor_body "$question")" --clients 4 --requests "$turns"
fi

if has memory; then
    # Slow streams held open together: 40 tokens 500 ms apart (about 20 s each), started
    # 500 a second so that their retrievals do not queue past the pool's wait timeout.
    question="Stream slowly
MOCK {\"reply\": \"token \", \"repeat\": 40, \"token_delay_ms\": 500}"
    for streams in 1000 5000; do
        stop_bor
        start_bor
        loadgen warmup-memory closed $(to_bor) --body "$(bor_body "$QUESTION")" --clients 20 --requests 500 > /dev/null
        loadgen "memory-bor-$streams" closed $(to_bor) --body "$(bor_body "$question")" \
            --clients "$streams" --requests "$streams" --ramp-per-s 500
    done
    stop_bor
    start_bor
    loadgen warmup-bor closed $(to_bor) --body "$(bor_body "$QUESTION")" --clients 50 --requests 2000 > /dev/null
fi

if has sustained; then
    duration=$(size 10 4)
    for rate in 25 50 100 200 400 700 1000 1400 2000; do
        loadgen "sustained-mock-r$rate" open $(to_mock) --body "$(openai_body "$QUESTION")" \
            --rate "$rate" --duration-s "$duration"
        loadgen "sustained-bor-r$rate" open $(to_bor) --body "$(bor_body "$QUESTION")" \
            --rate "$rate" --duration-s "$duration"
        # Past the point where bor cannot keep up there is nothing more to learn.
        if python3 bench/render_load.py --saturated "$OUT" "$rate"; then
            break
        fi
    done
fi

# log_stats [ADDR]: the LogActor's counters (queued, written, dropped, …) of the bor at
# ADDR (BOR_ADDR unless given) as JSON.
log_stats() {
    curl -sf -H "Authorization: Bearer $ADMIN_TOKEN" "http://${1:-$BOR_ADDR}/api/admin/health" |
        python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["log"]))'
}

# kept_run NAME LOADGEN-ARGS…: a run, then the queue drained and the rows counted, all
# in NAME.json (the loadgen summary with a `kept` object beside it).
# drained [ADDR]: waits until no row waits in the LogActor's queue (or the instance does
# not answer).
drained() {
    local queued
    while queued=$(log_stats "${1:-}" | python3 -c 'import json, sys; print(json.load(sys.stdin)["queued"])') &&
        [ "$queued" != 0 ]; do
        sleep 0.2
    done
}

kept_run() {
    local name=$1 rows_before started refused_before
    shift
    drained
    refused_before=$(curl -sf "http://$BOR_ADDR/metrics" | { grep '^bor_turns_refused_total' || true; } | tr '\n' ';')
    rows_before=$(psql -qtA -h 127.0.0.1 -U postgres -d "$BENCH_DB" -c 'SELECT count(*) FROM query_log')
    loadgen "$name-load" "$@"
    started=$(date +%s.%N)
    drained
    python3 - "$OUT/$name-load.json" "$OUT/$name.json" "$rows_before" "$started" "$(date +%s.%N)" \
        "$(psql -qtA -h 127.0.0.1 -U postgres -d "$BENCH_DB" -c 'SELECT count(*) FROM query_log')" \
        "$(log_stats)" "$(curl -sf "http://$BOR_ADDR/metrics" | { grep '^bor_turns_refused_total' || true; } | tr '\n' ';')" \
        "$refused_before" <<'PY'
import json, sys
load = json.load(open(sys.argv[1]))
before, started, drained, rows_after = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])

def counts(text):
    """The refusal counters by reason, from the metrics' lines joined by `;`."""
    found = {}
    for line in filter(None, text.split(";")):
        series, value = line.rsplit(" ", 1)
        found[series.split('reason="')[1].split('"')[0]] = int(float(value))
    return found

earlier = counts(sys.argv[9])
refused = {reason: count - earlier.get(reason, 0) for reason, count in counts(sys.argv[8]).items()}
load["kept"] = {
    "rows": rows_after - before,
    "drain_s": drained - started,
    "log": json.loads(sys.argv[7]),
    "refused": refused,
}
json.dump(load, open(sys.argv[2], "w"))
PY
    rm -f "$OUT/$name-load.json"
}

if has kept; then
    # A minute of turns at full speed with every row kept: 100 clients, each turn a new
    # conversation, then the same in one conversation that every turn continues, then
    # with each client continuing its own; rows counted once the queue has drained.
    stop_bor
    reset_database
    start_bor
    loadgen warmup-bor closed $(to_bor) --body "$(bor_body "$QUESTION")" --clients 50 --requests 2000 > /dev/null
    minute=$(size 60 10)
    kept_run kept-new closed $(to_bor) --body "$(bor_body "$QUESTION")" --clients 100 --duration-s "$minute"
    conversation=$(python3 -c 'import uuid; print(uuid.uuid4())')
    kept_run kept-one closed $(to_bor) \
        --body "{\"message\": \"$QUESTION\", \"conversation_id\": \"$conversation\"}" \
        --clients 100 --duration-s "$minute"
    # Each client continues a conversation of its own (the load generator puts the
    # client's number in the id's last group).
    conversations=$(python3 -c 'import uuid; print(str(uuid.uuid4())[:24])')
    kept_run kept-own closed $(to_bor) \
        --body "{\"message\": \"$QUESTION\", \"conversation_id\": \"$conversations{client}\"}" \
        --clients 100 --duration-s "$minute"
    # The queue at its bound: query_log held locked (as a paused database) while turns
    # run, so rows wait up to the mark and turns past it are refused; the memory they
    # take is the server's peak over its resident memory before (a fresh process, so
    # that the runs before leave no peak of their own).
    stop_bor
    start_bor
    loadgen warmup-bor closed $(to_bor) --body "$(bor_body "$QUESTION")" --clients 50 --requests 2000 > /dev/null
    # The warm-up's rows written first: the run's own drain would otherwise wait out the lock.
    drained
    psql -q -h 127.0.0.1 -U postgres -d "$BENCH_DB" \
        -c "BEGIN; LOCK TABLE query_log IN EXCLUSIVE MODE; SELECT pg_sleep($(size 30 10)); COMMIT" > /dev/null &
    locker=$!
    sleep 1
    kept_run kept-bound closed $(to_bor) --body "$(bor_body "$QUESTION")" --clients 100 --duration-s "$(size 20 5)"
    wait "$locker"
    # A crash right after a burst: 20,000 turns, then SIGKILL at once; what is lost is
    # what waited.
    drained
    rows_before=$(psql -qtA -h 127.0.0.1 -U postgres -d "$BENCH_DB" -c 'SELECT count(*) FROM query_log')
    loadgen kept-crash-load closed $(to_bor) --body "$(bor_body "$QUESTION")" --clients 100 --requests "$(size 20000 5000)"
    kill -9 "$bor_pid"
    wait "$bor_pid" 2>/dev/null || true
    python3 - "$OUT/kept-crash-load.json" "$OUT/kept-crash.json" "$rows_before" \
        "$(psql -qtA -h 127.0.0.1 -U postgres -d "$BENCH_DB" -c 'SELECT count(*) FROM query_log')" <<'PY'
import json, sys
load = json.load(open(sys.argv[1]))
load["kept"] = {"rows": int(sys.argv[4]) - int(sys.argv[3])}
json.dump(load, open(sys.argv[2], "w"))
PY
    rm -f "$OUT/kept-crash-load.json"
    start_bor
fi

if has peer && [ "${BENCH_LOAD_SKIP_LITELLM:-0}" != 1 ]; then
    if [ ! -x "$VENV/bin/litellm" ]; then
        log "installing litellm[proxy]==$LITELLM_VERSION into $VENV"
        python3 -m venv "$VENV"
        "$VENV/bin/pip" install -q "litellm[proxy]==$LITELLM_VERSION"
    fi
    cat > "$OUT/litellm.yaml" <<YAML
model_list:
  - model_name: smollm2
    litellm_params:
      model: openai/smollm2
      api_base: http://$MOCK_ADDR/v1
      api_key: not-used
litellm_settings:
  telemetry: false
  turn_off_message_logging: true
YAML
    # No outbound fetches (the bundled model cost map), no callbacks or telemetry, one
    # worker per core as LiteLLM recommends. LiteLLM takes its time to start.
    # It refuses to start without a master key: requests carry it, as a deployment's would.
    litellm_key="sk-$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
    LITELLM_MASTER_KEY="$litellm_key" LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_LOG=ERROR \
        "$VENV/bin/litellm" --config "$OUT/litellm.yaml" --host 127.0.0.1 --port "$LITELLM_PORT" \
        --num_workers "$(nproc)" > "$OUT/litellm.log" 2>&1 &
    litellm_pid=$!
    pids+=("$litellm_pid")
    for _ in $(seq 1 20); do
        (exec 3<>"/dev/tcp/127.0.0.1/$LITELLM_PORT") 2>/dev/null && break
        sleep 5
    done
    wait_port "127.0.0.1:$LITELLM_PORT" "$litellm_pid"
    to_litellm() {
        echo --addr "127.0.0.1:$LITELLM_PORT" --path /v1/chat/completions --protocol openai \
            --pid "$litellm_pid" --bearer "$litellm_key"
    }
    peer_body="$(openai_body "$QUESTION")"
    loadgen warmup-litellm closed $(to_litellm) --body "$peer_body" --clients 10 --requests 300 > /dev/null
    peer_requests=$(size 1000 200)
    peer_duration=$(size 20 5)
    loadgen peer-mock-c1 closed $(to_mock) --body "$peer_body" --clients 1 --requests "$peer_requests"
    loadgen peer-litellm-c1 closed $(to_litellm) --body "$peer_body" --clients 1 --requests "$peer_requests"
    loadgen peer-bor-c1 closed $(to_bor) --body "$(bor_body "$QUESTION")" --clients 1 --requests "$peer_requests"
    loadgen peer-mock-c100 closed $(to_mock) --body "$peer_body" --clients 100 --duration-s "$peer_duration"
    loadgen peer-litellm-c100 closed $(to_litellm) --body "$peer_body" --clients 100 --duration-s "$peer_duration"
    loadgen peer-bor-c100 closed $(to_bor) --body "$(bor_body "$QUESTION")" --clients 100 --duration-s "$peer_duration"
fi

# paired SCENARIO BASE OTHER: the same turn asked two ways (the arrays `BASE` and
# `OTHER` hold each way's loadgen arguments), at 1 and 100 clients. The runs alternate,
# which goes first changing from repeat to repeat, so that the machine's load (other
# builds share it) falls on both alike. Summaries: SCENARIO-BASE-cN-R.json and
# SCENARIO-OTHER-cN-R.json, the load average before each repeat in SCENARIO-load-cN-R.txt.
paired() {
    local scenario=$1 base=$2 other=$3 clients requests repeat first second
    for clients in 1 100; do
        if [ "$clients" = 1 ]; then requests=$(size 2000 300); else requests=$(size 10000 2000); fi
        for repeat in $(seq 1 "$(size 5 2)"); do
            cut -d' ' -f1-3 /proc/loadavg > "$OUT/$scenario-load-c$clients-$repeat.txt"
            if [ $((repeat % 2)) = 1 ]; then first=$base second=$other; else first=$other second=$base; fi
            for way in "$first" "$second"; do
                local -n arguments="${way^^}"
                # Each run starts with an empty queue: a run left behind by the last one
                # would be refused as busy and measure the queue, not its own way.
                drained
                if [ -n "${accounts_pid:-}" ]; then drained "$ACCOUNTS_ADDR"; fi
                loadgen "$scenario-$way-c$clients-$repeat" closed "${arguments[@]}" \
                    --clients "$clients" --requests "$requests"
            done
        done
    done
}

if has v1; then
    # The same turn through /api/chat and through /v1.
    CHAT=($(to_bor) --body "$(bor_body "$QUESTION")")
    OPENAI=($(to_bor_v1) --body "$(v1_body "$QUESTION")")
    paired v1 chat openai
fi

if has auth; then
    # The same turn through bor with BOR_AUTH=off and through bor with accounts, asked
    # with an API key; both on the one database and mock.
    run_bor "$ACCOUNTS_ADDR" accounts bor-accounts.log
    accounts_pid=$served_pid
    make_api_key
    loadgen warmup-accounts closed $(to_accounts) --body "$(bor_body "$QUESTION")" --clients 50 --requests 2000 > /dev/null
    OFF=($(to_bor) --body "$(bor_body "$QUESTION")")
    KEY=($(to_accounts) --body "$(bor_body "$QUESTION")")
    paired auth off key
fi

if has limits; then
    # The same turn asked with the key of a person no limit applies to, and with the key
    # of a person whose key and self have limits far above the run (none trips).
    if [ -z "${accounts_pid:-}" ]; then
        run_bor "$ACCOUNTS_ADDR" accounts bor-accounts.log
        accounts_pid=$served_pid
    fi
    make_api_key bench-limits-admin --admin
    admin_cookie=$session_cookie
    make_api_key bench-unlimited
    unlimited_key=$api_key
    make_api_key bench-limited
    limited_key=$api_key
    high=1000000000000
    set_limit "{\"user\": \"bench-limited\", \"turns_per_day\": $high, \"tokens_per_day\": $high, \"tokens_per_month\": $high}"
    set_limit "{\"key\": \"$api_key_id\", \"turns_per_day\": $high, \"tokens_per_month\": $high}"
    to_key() { echo --addr "$ACCOUNTS_ADDR" --path /api/chat --protocol bor --pid "$accounts_pid" --bearer "$1"; }
    loadgen warmup-limits closed $(to_key "$limited_key") --body "$(bor_body "$QUESTION")" --clients 50 --requests 2000 > /dev/null
    UNLIMITED=($(to_key "$unlimited_key") --body "$(bor_body "$QUESTION")")
    LIMITED=($(to_key "$limited_key") --body "$(bor_body "$QUESTION")")
    paired limits unlimited limited
fi

python3 - "$OUT/machine.json" <<'PY'
import json, sys
facts = json.load(open(sys.argv[1]))
facts["load_after"] = open("/proc/loadavg").read().split()[:3]
json.dump(facts, open(sys.argv[1], "w"))
PY
for scenario in micro ttft throughput memory sustained peer; do
    if has "$scenario"; then
        python3 bench/render_load.py --write "$OUT" bench/RESULTS.md
        log "wrote the load section of bench/RESULTS.md"
        break
    fi
done
if has kept; then
    python3 bench/render_kept.py --write "$OUT" bench/RESULTS.md
    log "wrote the kept section of bench/RESULTS.md"
fi
for scenario in v1 auth limits; do
    if has "$scenario"; then
        python3 bench/render_pair.py --write "$OUT" bench/RESULTS.md "$scenario"
        log "wrote the $scenario section of bench/RESULTS.md"
    fi
done
