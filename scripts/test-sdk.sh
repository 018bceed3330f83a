#!/usr/bin/env bash
# `make test-openai-sdk` and `make test-mcp-sdk`: bor driven by official SDKs,
# `scripts/test-sdk.sh SUITE` with SUITE `openai` (the /v1 API, the `openai` Python
# package; tests/openai_sdk) or `mcp` (/mcp, the `mcp` Python package and the
# `@modelcontextprotocol/sdk` npm package; tests/mcp_sdk). Installs the Python SDK from
# PyPI into target/SUITE-sdk-venv the first time (pinned in
# tests/SUITE_sdk/requirements.txt; about half a minute), and for `mcp` Node.js and the
# npm packages when missing, then runs the suite against the running PostgreSQL with
# the mock LLM.
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE=${1:?usage: scripts/test-sdk.sh openai|mcp}
case "$SUITE" in
    openai | mcp) ;;
    *) echo "test-sdk: no suite $SUITE (openai or mcp)" >&2; exit 2 ;;
esac
VENV=target/$SUITE-sdk-venv
REQUIREMENTS=tests/${SUITE}_sdk/requirements.txt
# --workspace: the same feature set as the workspace's other tests, so nothing but bor
# is rebuilt for this run.
CARGO_ARGS=(--workspace --features "bor/$SUITE-sdk" --test "${SUITE}_sdk")

if ! cmp -s "$REQUIREMENTS" "$VENV/requirements.txt" 2>/dev/null; then
    echo "test-$SUITE-sdk: installing $(cat "$REQUIREMENTS") into $VENV" >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQUIREMENTS"
    cp "$REQUIREMENTS" "$VENV/requirements.txt"
fi
if [ "$SUITE" = mcp ]; then
    scripts/ensure-node.sh
fi
# BOR_TEST_OPENAI_PYTHON or BOR_TEST_MCP_PYTHON: the interpreter the suite runs.
export "BOR_TEST_${SUITE^^}_PYTHON=$PWD/$VENV/bin/python"
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run "${CARGO_ARGS[@]}"
else
    cargo test "${CARGO_ARGS[@]}"
fi
