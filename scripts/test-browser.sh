#!/usr/bin/env bash
# `make test-browser`: the chat and admin pages' tests in headless Chromium, against bor,
# the mock LLM server and the local PostgreSQL.
#
# Installs what is missing: Node.js (Debian's `nodejs` and `npm`), Debian's `chromium`
# (the tests never download a browser build), and the npm packages of package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM=/usr/bin/chromium

. scripts/debian.sh

scripts/ensure-node.sh
[ -x "$CHROMIUM" ] || apt_install --recommends chromium
command -v psql >/dev/null 2>&1 || apt_install postgresql-client

scripts/ensure-postgres.sh
cargo build --bin bor --package bor --bin bor-mock-llm --package bor-mock-llm

exec node --test --test-concurrency=1 tests/browser/
