#!/usr/bin/env bash
# `make bench-local-models`: the local models through bor on the sample knowledge base,
# setup by setup: answer accuracy, deflection, time to the first visible word and tokens/s
# (bench/local_models.py). Writes the local-models section of bench/RESULTS.md from the
# JSON left in target/bench/local-models/.
#
# BENCH_LOCAL_SETUPS picks setups (default: all), each a name below:
#   qwen          the default: Qwen2.5-Coder-0.5B + all-MiniLM-L6-v2, scripts/models/qwen.env
#   qwen-agent    the same with the agent on (bor's tools offered; the GGUF's own chat
#                 template, which does not show them to the model)
#   qwen-tools    the agent on, through llama-cpp-python's function-calling chat format
#   smollm2       SmolLM2-135M for both, scripts/models/smollm2.env
# The model servers use ports 18092-18093 and bor 127.0.0.1:8121.
set -euo pipefail
cd "$(dirname "$0")/.."

SETUPS=${BENCH_LOCAL_SETUPS:-qwen qwen-agent qwen-tools smollm2}
OUT=target/bench/local-models
CHAT_PORT=18092
EMBED_PORT=18093
BOR_ADDR=127.0.0.1:8121
DATABASE=bor_bench_local_models
PYTHON=.llm-server/venv/bin/python
BOR=target/release/bor

log() { echo "bench-local-models: $*" >&2; }

stop_all() {
    if [ -n "${BOR_PID:-}" ]; then
        kill "$BOR_PID" 2>/dev/null || true
        wait "$BOR_PID" 2>/dev/null || true
        BOR_PID=
    fi
    scripts/llm-server.sh stop "$CHAT_PORT"
    scripts/llm-server.sh stop "$EMBED_PORT"
}
trap stop_all EXIT

scripts/ensure-postgres.sh
scripts/llm-server.sh install qwen minilm smollm2
cargo build --release --bin bor
mkdir -p "$OUT"

for setup in $SETUPS; do
    chat=qwen embed=minilm settings=qwen overrides=()
    case "$setup" in
    qwen) ;;
    qwen-agent) overrides=(BOR_AGENT_ENABLED=true) ;;
    qwen-tools) chat=qwen-tools overrides=(BOR_AGENT_ENABLED=true) ;;
    smollm2) chat=smollm2 embed= settings=smollm2 ;;
    *)
        log "unknown setup $setup"
        exit 2
        ;;
    esac
    log "$setup"
    scripts/llm-server.sh start "$chat" "$CHAT_PORT"
    embed_url=http://127.0.0.1:$CHAT_PORT/v1
    if [ -n "$embed" ]; then
        scripts/llm-server.sh start "$embed" "$EMBED_PORT"
        embed_url=http://127.0.0.1:$EMBED_PORT/v1
    fi
    psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DATABASE" -c "CREATE DATABASE $DATABASE"
    (
        set -a
        # shellcheck disable=SC1090
        . "scripts/models/$settings.env"
        set +a
        for override in "${overrides[@]}"; do export "${override?}"; done
        export BOR_BIND=$BOR_ADDR BOR_DATABASE_URL=postgres://postgres@127.0.0.1:5432/$DATABASE \
            BOR_LLM_BASE_URL=http://127.0.0.1:$CHAT_PORT/v1 BOR_LLM_EMBED_BASE_URL=$embed_url \
            BOR_LOG=warn BOR_SUMMARIES=false BOR_AUTH=off
        "$BOR" import docs/sample-kb >&2
        "$BOR" serve &
        echo $! >"$OUT/bor.pid"
        wait
    ) &
    sleep 1
    until curl -sf "http://$BOR_ADDR/api/health" >/dev/null; do sleep 0.5; done
    BOR_PID=$(cat "$OUT/bor.pid")
    embed_model=$(grep -E '^BOR_LLM_EMBED_MODEL=' "scripts/models/$settings.env" | cut -d= -f2)
    "$PYTHON" bench/local_models.py measure "$setup" "http://$BOR_ADDR" \
        "http://127.0.0.1:$CHAT_PORT/v1" "$embed_url" "$embed_model" "$DATABASE" "$OUT/$setup.json"
    stop_all
    psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DATABASE"
done
rm -f "$OUT/bor.pid"
"$PYTHON" bench/local_models.py render "$OUT" bench/RESULTS.md
log "written: bench/RESULTS.md (local models)"
