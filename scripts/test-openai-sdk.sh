#!/usr/bin/env bash
# `make test-openai-sdk`: bor's /v1 API driven by the official openai Python SDK
# (tests/openai_sdk). Installs the SDK from PyPI into target/openai-sdk-venv the first
# time (pinned in tests/openai_sdk/requirements.txt; about half a minute), then runs the
# tests against the running PostgreSQL with the mock LLM.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=target/openai-sdk-venv
REQUIREMENTS=tests/openai_sdk/requirements.txt
# --workspace: the same feature set as the workspace's other tests, so nothing but bor
# is rebuilt for this run.
CARGO_ARGS=(--workspace --features bor/openai-sdk --test openai_sdk)

if ! cmp -s "$REQUIREMENTS" "$VENV/requirements.txt" 2>/dev/null; then
    echo "test-openai-sdk: installing $(cat "$REQUIREMENTS") into $VENV" >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQUIREMENTS"
    cp "$REQUIREMENTS" "$VENV/requirements.txt"
fi
export BOR_TEST_OPENAI_PYTHON="$PWD/$VENV/bin/python"
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run "${CARGO_ARGS[@]}"
else
    cargo test "${CARGO_ARGS[@]}"
fi
