# Common tasks. `make run` starts the chat at http://127.0.0.1:8000; `make test` runs
# every test (installing and starting PostgreSQL first when needed).

SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help run test test-quick test-browser vendor-web postgres lint fmt bench bench-load drills drills-long

help:
	@echo "make run           start bor (release build; PostgreSQL and a stand-in LLM server if needed)"
	@echo "make test          provision PostgreSQL, then run every test"
	@echo "make test-quick    run the Rust tests against the PostgreSQL already running"
	@echo "make test-browser  run the chat page's tests in headless Chromium"
	@echo "make vendor-web    copy the page's npm libraries into static/vendor"
	@echo "make drills        run the fault drills (part of make test)"
	@echo "make drills-long   run the fault drills at ten times the scale"
	@echo "make bench         run the benchmarks and write bench/RESULTS.md"
	@echo "make bench-load    bor's load, speed and memory figures (and LiteLLM's) only"
	@echo "make lint          rustfmt check and clippy (warnings are errors)"
	@echo "make fmt           format the code"

run:
	@scripts/run.sh

test: postgres
	@$(MAKE) --no-print-directory test-quick
	@$(MAKE) --no-print-directory test-browser

# cargo-nextest runs each test in its own process when installed; it skips doctests.
test-quick:
	@if cargo nextest --version >/dev/null 2>&1; then \
		cargo nextest run --workspace && cargo test --workspace --doc; \
	else \
		cargo test --workspace; \
	fi

# Installs what it needs (Node.js, Debian's chromium, the npm packages) when missing.
test-browser:
	@scripts/test-browser.sh

# After changing the versions in package.json: refreshes package-lock.json and the
# committed copies in static/vendor.
vendor-web:
	npm install --no-audit --no-fund
	node scripts/vendor-web-libs.mjs

postgres:
	@scripts/ensure-postgres.sh

# The fault drills (tests/drills) also run with every `make test`.
drills: postgres
	cargo test --test drills

drills-long: postgres
	BOR_DRILLS=long cargo test --test drills

# Each benchmark writes its own section of bench/RESULTS.md.
bench: bench-load

bench-load:
	@bench/load.sh

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

fmt:
	cargo fmt --all
