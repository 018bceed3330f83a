#!/usr/bin/env bash
# `make test-real-model`: the real-model suite (tests/real_model) against the local model
# servers, the proof of the MiniLM graph and its server (scripts/models/check_embedder.py),
# the proof of the served nomic-embed-text (scripts/models/check_nomic.py), that of the
# re-ranking server (scripts/models/check_reranker.py), and the checks of the model
# acquisition (scripts/models/test_fetch.py).
# Installs the servers and models when needed (the first time compiles llama.cpp),
# starts each on its own port for the run, and stops them afterwards:
#   SmolLM2-135M (chat and embeddings)   BOR_TEST_LLM_PORT, default 18090
#   Qwen2.5-Coder-0.5B (chat)            BOR_TEST_CHAT_PORT, default 18091
#   all-MiniLM-L6-v2 (embeddings)        BOR_TEST_EMBED_PORT, default 18094
#   nomic-embed-text-v1.5 (embeddings)   BOR_TEST_NOMIC_PORT, default 18095
#   nanoranker (re-ranking)              BOR_TEST_RERANK_PORT, default 18096
set -euo pipefail
cd "$(dirname "$0")/.."

SMOLLM2_PORT=${BOR_TEST_LLM_PORT:-18090}
CHAT_PORT=${BOR_TEST_CHAT_PORT:-18091}
EMBED_PORT=${BOR_TEST_EMBED_PORT:-18094}
NOMIC_PORT=${BOR_TEST_NOMIC_PORT:-18095}
RERANK_PORT=${BOR_TEST_RERANK_PORT:-18096}
# --workspace: the same feature set as the workspace's other tests, so nothing but bor
# is rebuilt for this run.
CARGO_ARGS=(--workspace --features bor/real-model --test real_model)

started=$SECONDS
python3 scripts/models/test_fetch.py
scripts/llm-server.sh install smollm2 qwen minilm nomic nanoranker
cargo test "${CARGO_ARGS[@]}" --no-run
trap 'for port in "$SMOLLM2_PORT" "$CHAT_PORT" "$EMBED_PORT" "$NOMIC_PORT" "$RERANK_PORT"; do scripts/llm-server.sh stop "$port"; done' EXIT
scripts/llm-server.sh start nomic "$NOMIC_PORT"
scripts/llm-server.sh check-nomic "$NOMIC_PORT"
scripts/llm-server.sh stop "$NOMIC_PORT"
scripts/llm-server.sh start smollm2 "$SMOLLM2_PORT"
scripts/llm-server.sh start qwen "$CHAT_PORT"
scripts/llm-server.sh start minilm "$EMBED_PORT"
scripts/llm-server.sh check-embedder "$EMBED_PORT"
scripts/llm-server.sh start nanoranker "$RERANK_PORT"
scripts/llm-server.sh check-reranker "$RERANK_PORT"
scripts/llm-server.sh stop "$RERANK_PORT"
# The chat servers answer one request at a time: one test at a time.
BOR_TEST_LLM_BASE_URL="http://127.0.0.1:$SMOLLM2_PORT/v1" \
    BOR_TEST_CHAT_BASE_URL="http://127.0.0.1:$CHAT_PORT/v1" \
    BOR_TEST_EMBED_BASE_URL="http://127.0.0.1:$EMBED_PORT/v1" \
    cargo test "${CARGO_ARGS[@]}" -- --test-threads 1
echo "test-real-model: done in $(((SECONDS - started) / 60))m$(printf %02d $(((SECONDS - started) % 60)))s" >&2
