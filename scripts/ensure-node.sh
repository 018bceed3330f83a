#!/usr/bin/env bash
# Node.js and the npm packages of package-lock.json, installed when missing: the
# browser tests (playwright-core), the OpenID Connect tests (oidc-provider, run by
# tests/api/oidc.rs) and the MCP TypeScript SDK's tests (tests/mcp_sdk) need them. Cheap when nothing changed: the lock file's hash is
# kept next to the packages.
set -euo pipefail
cd "$(dirname "$0")/.."

LOCK_STAMP=node_modules/.package-lock.sha256

. scripts/debian.sh

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install --recommends nodejs npm
fi

lock_sha="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -f "$LOCK_STAMP" ] || [ "$(cat "$LOCK_STAMP")" != "$lock_sha" ]; then
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
    echo "$lock_sha" >"$LOCK_STAMP"
fi
