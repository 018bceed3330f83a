# Common tasks. `make run` starts the chat at http://127.0.0.1:8000; `make test` runs
# every test (installing and starting PostgreSQL first when needed).

SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help run test test-quick bench postgres lint fmt

help:
	@echo "make run         start bor (release build; PostgreSQL and a stand-in LLM server if needed)"
	@echo "make test        provision PostgreSQL, then run every test"
	@echo "make test-quick  run every test against the PostgreSQL already running"
	@echo "make bench       knowledge-base benchmarks, written to bench/RESULTS.md"
	@echo "make lint        rustfmt check and clippy (warnings are errors)"
	@echo "make fmt         format the code"

run:
	@scripts/run.sh

test: postgres
	@$(MAKE) --no-print-directory test-quick

# cargo-nextest runs each test in its own process when installed; it skips doctests.
test-quick:
	@if cargo nextest --version >/dev/null 2>&1; then \
		cargo nextest run --workspace && cargo test --workspace --doc; \
	else \
		cargo test --workspace; \
	fi

# Retrieval over 10k, 100k and 1M synthetic chunks and import throughput (a few
# minutes); the figures replace the knowledge section of bench/RESULTS.md.
bench: postgres
	cargo bench --bench knowledge

postgres:
	@scripts/ensure-postgres.sh

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

fmt:
	cargo fmt --all
