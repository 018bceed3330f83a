#!/usr/bin/env bash
# `make run`: starts bor (release build) on the local PostgreSQL, with the sample
# knowledge base of docs/sample-kb imported.
#
# When no LLM server is configured (BOR_LLM_BASE_URL unset in the environment and in
# .env), bor-mock-llm, a stand-in OpenAI-compatible server, serves bor's default LLM URL
# while bor runs, and is stopped with it.
set -euo pipefail
cd "$(dirname "$0")/.."

LLM_STAND_IN_BIND=127.0.0.1:18089

llm_configured() {
    [ -n "${BOR_LLM_BASE_URL:-}" ] ||
        grep -Eqs "^[[:space:]]*(export[[:space:]]+)?BOR_LLM_BASE_URL[[:space:]]*=[[:space:]]*[\"']?[^[:space:]#\"']" .env
}

port_open() {
    (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null
}

start_llm_stand_in() {
    cargo build --release -p bor-mock-llm --bin bor-mock-llm
    if port_open "$LLM_STAND_IN_BIND"; then
        echo "run: $LLM_STAND_IN_BIND is already in use; set BOR_LLM_BASE_URL to use that server, or stop it" >&2
        exit 1
    fi
    cargo run --release -q -p bor-mock-llm --bin bor-mock-llm -- --bind "$LLM_STAND_IN_BIND" &
    stand_in_pid=$!
    trap 'kill "$stand_in_pid" 2>/dev/null || true; wait "$stand_in_pid" 2>/dev/null || true' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    for _ in $(seq 1 100); do
        port_open "$LLM_STAND_IN_BIND" && return 0
        kill -0 "$stand_in_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "run: bor-mock-llm did not start on $LLM_STAND_IN_BIND" >&2
    exit 1
}

scripts/ensure-postgres.sh
cargo build --release --bin bor
if ! llm_configured; then
    echo "run: BOR_LLM_BASE_URL is not set; serving it with bor-mock-llm on $LLM_STAND_IN_BIND" >&2
    start_llm_stand_in
fi

# Sample knowledge base: imported on every start so that a first question finds
# something; unchanged files are left as they are. bor still starts if this fails.
cargo run --release -q --bin bor -- import docs/sample-kb ||
    echo "run: the sample knowledge base could not be imported; bor starts without it" >&2

cargo run --release --bin bor -- serve
