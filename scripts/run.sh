#!/usr/bin/env bash
# `make run`: starts bor (release build) on the local PostgreSQL, with the sample
# knowledge base of docs/sample-kb imported.
#
# When no LLM server is configured (BOR_LLM_BASE_URL unset in the environment and in
# .env), the local model server (scripts/llm-server.sh: llama.cpp with SmolLM2-135M)
# serves bor's default LLM URL while bor runs, and is stopped with it.
set -euo pipefail
cd "$(dirname "$0")/.."

LOCAL_MODEL_PORT=18089
# SmolLM2-135M's embeddings score every pair of texts high (a question and the passage
# that answers it 0.80-0.93, off-topic questions up to 0.85), so SPEC's default threshold
# (0.35) would call every question grounded. This one is used only with the local model,
# and only when BOR_DEFLECT_THRESHOLD is not set; full-text matches stay grounded.
LOCAL_MODEL_DEFLECT_THRESHOLD=0.88

# Whether variable $1 has a value in the environment or in .env.
configured() {
    [ -n "${!1:-}" ] ||
        grep -Eqs "^[[:space:]]*(export[[:space:]]+)?$1[[:space:]]*=[[:space:]]*[\"']?[^[:space:]#\"']" .env
}

scripts/ensure-postgres.sh
cargo build --release --bin bor
if ! configured BOR_LLM_BASE_URL; then
    echo "run: BOR_LLM_BASE_URL is not set; starting the local model server on 127.0.0.1:$LOCAL_MODEL_PORT" >&2
    trap 'scripts/llm-server.sh stop "$LOCAL_MODEL_PORT"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    scripts/llm-server.sh start "$LOCAL_MODEL_PORT"
    configured BOR_DEFLECT_THRESHOLD || export BOR_DEFLECT_THRESHOLD=$LOCAL_MODEL_DEFLECT_THRESHOLD
fi

# Sample knowledge base: imported on every start so that a first question finds
# something; unchanged files are left as they are. bor still starts if this fails.
cargo run --release -q --bin bor -- import docs/sample-kb ||
    echo "run: the sample knowledge base could not be imported; bor starts without it" >&2

cargo run --release --bin bor -- serve
