#!/usr/bin/env bash
# `make test-real-model`: the compatibility suite (tests/real_model) against the local
# model server. Installs the server when needed (the first time compiles llama.cpp),
# starts it on its own port for the run, and stops it afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${BOR_TEST_LLM_PORT:-18090}
# --workspace: the same feature set as the workspace's other tests, so nothing but bor
# is rebuilt for this run.
CARGO_ARGS=(--workspace --features bor/real-model --test real_model)

scripts/llm-server.sh install
cargo test "${CARGO_ARGS[@]}" --no-run
trap 'scripts/llm-server.sh stop "$PORT"' EXIT
scripts/llm-server.sh start "$PORT"
# The server answers one request at a time: one test at a time.
BOR_TEST_LLM_BASE_URL="http://127.0.0.1:$PORT/v1" cargo test "${CARGO_ARGS[@]}" -- --test-threads 1
