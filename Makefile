# Common tasks. `make run` starts the chat at http://127.0.0.1:8000; `make test` runs
# every test (installing and starting PostgreSQL, and the local model server, when needed).

SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help run test test-quick explore test-browser test-real-model test-openai-sdk test-mcp-sdk bench bench-knowledge bench-conversations bench-turn-rows bench-mcp bench-formats bench-ocr bench-load bench-local-models drills drills-long dist drills-deploy vendor-web postgres lint fmt circles

help:
	@echo "make run              start bor (release build; PostgreSQL and the local models if needed;"
	@echo "                      LOCAL_MODEL=smollm2 for the smallest one; LOCAL_EMBED=nomic for the"
	@echo "                      stronger, slower embedder nomic-embed-text-v1.5; LOCAL_RERANK=nanoranker"
	@echo "                      adds a re-ranker)"
	@echo "make test             provision PostgreSQL, then every test (test-quick, test-openai-sdk, test-mcp-sdk,"
	@echo "                      test-real-model, test-browser)"
	@echo "make test-quick       the Rust tests but the real-model suite (fault drills included), against the running PostgreSQL"
	@echo "                      (installs Node.js and the npm packages first when missing: the OpenID Connect tests run a real provider;"
	@echo "                      and Tesseract and Poppler: the OCR tests read real scans)"
	@echo "make test-openai-sdk  the /v1 API driven by the official openai Python SDK"
	@echo "make test-mcp-sdk     /mcp driven by the official MCP Python and TypeScript SDKs"
	@echo "make test-real-model  the real-model suite and the embedder proof against the local models"
	@echo "make test-browser     the chat and admin pages' tests in headless Chromium"
	@echo "make explore          the property tests with a new random seed and more cases (SEED=, CASES=)"
	@echo "make drills           the fault drills only (also part of make test)"
	@echo "make drills-long      the fault drills at ten times the scale"
	@echo "make dist             the release archive, dist/bor-VERSION-ARCH-linux-gnu.tar.gz (docs/DEPLOY.md)"
	@echo "make drills-deploy    the release archive unpacked and served, two instances behind nginx with TLS,"
	@echo "                      backup and restore, an upgrade, the container (with a Docker daemon)"
	@echo "make bench            every benchmark, written to bench/RESULTS.md"
	@echo "make bench-load       bor's load, speed and memory figures (and LiteLLM's) only"
	@echo "make bench-knowledge  retrieval and import figures only"
	@echo "make bench-formats    read throughput of each format reader only"
	@echo "make bench-ocr        OCR's character error rate and pages/s on scans of known text, and the PDF renderers"
	@echo "make bench-conversations  listing and searching 10,000 conversations of 50 turns"
	@echo "make bench-turn-rows  writing turns' rows: bor's statement against COPY, whole batches"
	@echo "make bench-mcp        a search over /mcp against the same search over POST /api/search"
	@echo "make bench-local-models  accuracy, first word and tokens/s of the local models through bor"
	@echo "make vendor-web       copy the pages' npm libraries into static/vendor"
	@echo "make lint             rustfmt check and clippy (warnings are errors)"
	@echo "make circles          import circles between files or rooms of the workspace (none expected)"
	@echo "make fmt              format the code"

run:
	@LOCAL_MODEL=$(LOCAL_MODEL) LOCAL_EMBED=$(LOCAL_EMBED) LOCAL_RERANK=$(LOCAL_RERANK) scripts/run.sh

test: postgres
	@$(MAKE) --no-print-directory test-quick
	@scripts/test-sdk.sh openai
	@scripts/test-sdk.sh mcp
	@scripts/test-real-model.sh
	@$(MAKE) --no-print-directory test-browser

# cargo-nextest runs each test in its own process when installed; it skips doctests.
# The OpenID Connect tests run a real provider with Node.js (scripts/ensure-node.sh
# installs it and the npm packages when missing); the OCR tests run Tesseract and
# Poppler's pdftoppm (scripts/ensure-ocr.sh installs them when missing).
test-quick:
	@scripts/ensure-node.sh
	@scripts/ensure-ocr.sh
	@if cargo nextest --version >/dev/null 2>&1; then \
		cargo nextest run --workspace && cargo test --workspace --doc; \
	else \
		cargo test --workspace; \
	fi

# Installs the openai SDK from PyPI into target/openai-sdk-venv the first time.
test-openai-sdk: postgres
	@scripts/test-sdk.sh openai

# Installs the mcp SDK from PyPI into target/mcp-sdk-venv the first time, and Node.js
# with the npm packages (@modelcontextprotocol/sdk) when missing.
test-mcp-sdk: postgres
	@scripts/test-sdk.sh mcp

# Installs (the first time: compiles llama.cpp, 5 to 25 minutes), starts and stops the
# local model servers around tests/real_model and the embedder proof.
test-real-model: postgres
	@scripts/test-real-model.sh

# Installs what it needs (Node.js, Debian's chromium, the npm packages) when missing.
test-browser:
	@scripts/test-browser.sh

# After changing the versions in package.json: refreshes package-lock.json and the
# committed copies in static/vendor.
vendor-web:
	npm install --no-audit --no-fund
	node scripts/vendor-web-libs.mjs

# Retrieval over 10k, 100k and 1M synthetic chunks and import throughput (a few
# minutes); the figures replace the knowledge section of bench/RESULTS.md.
bench-knowledge: postgres
	cargo bench --bench knowledge -- $(if $(wildcard target/bench/minilm.vectors),--real target/bench/minilm)

# Listing and searching 10,000 conversations of 50 turns (a minute or two); the figures
# replace the conversations section of bench/RESULTS.md.
bench-conversations: postgres
	cargo bench --bench conversations

# Read throughput of each format reader (about half a minute once built); the figures
# replace the formats section of bench/RESULTS.md.
# How fast turns' rows are written: bor's statement against COPY, and whole batches
# (a minute or two); the figures replace the "Writing turns" section of bench/RESULTS.md.
bench-turn-rows: postgres
	cargo bench --bench turn_rows

# The same search over /mcp and POST /api/search, alternately (a minute or two once
# built); the figures replace the MCP section of bench/RESULTS.md.
bench-mcp: postgres
	cargo bench --bench mcp

bench-formats:
	cargo bench -p bor-formats --bench formats

# Scans made from the format fixtures, read by OCR (a few minutes); prints the tables of
# bench/RESULTS.md's OCR section. BENCH_HAYRO adds the pure-Rust renderer (see
# bench/hayro-render/Cargo.toml).
bench-ocr:
	@scripts/ensure-ocr.sh
	python3 bench/ocr.py

postgres:
	@scripts/ensure-postgres.sh

# The fault drills (tests/drills) also run with every `make test`.
drills: postgres
	cargo test --test drills

drills-long: postgres
	BOR_DRILLS=long cargo test --test drills

# The release build (about 7 minutes the first time), then the archive.
dist:
	@scripts/dist.sh

# Each drill runs the release archive's binary from an empty folder (tests/deploy/).
drills-deploy: postgres dist
	@# Built with bor, as the browser tests build it: alone it would build its dependencies
	@# again with other features.
	@cargo build --bin bor --package bor --bin bor-mock-llm --package bor-mock-llm
	@scripts/ensure-nginx.sh
	@for drill in dist proxy backup upgrade container; do tests/deploy/$$drill.sh || exit 1; done

# Each benchmark writes its own section of bench/RESULTS.md.
bench: bench-knowledge bench-conversations bench-turn-rows bench-mcp bench-formats bench-load bench-local-models

bench-load:
	@bench/load.sh

# Whole turns through bor with each local model setup (20 to 40 minutes here).
bench-local-models: postgres
	@bench/local-models.sh

# Property tests run from the fixed seed of .cargo/config.toml everywhere else; this
# draws a new one (printed, so that a failure can be replayed with SEED=) and runs more
# cases. A failure found is saved beside its test (*.proptest-regressions): commit it
# with the fix, and keep the case as a named test.
explore:
	@seed=$${SEED:-$$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}; \
	echo "PROPTEST_RNG_SEED=$$seed PROPTEST_CASES=$${CASES:-256}"; \
	export PROPTEST_RNG_SEED=$$seed PROPTEST_CASES=$${CASES:-256}; status=0; \
	cargo nextest run -p bor-formats -p bor-actors --no-fail-fast || status=1; \
	cargo nextest run -p bor --lib --no-fail-fast || status=1; \
	exit $$status

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --features bor/real-model,bor/openai-sdk,bor/mcp-sdk -- -D warnings

fmt:
	cargo fmt --all

circles:
	python3 scripts/circles.py src actors/src formats/src mock-llm/src loadgen/src test-support/src
