//! The real-model suite: bor in front of real OpenAI-compatible model servers
//! (llama-cpp-python, as `scripts/llm-server.sh` runs it). `quality.rs` checks the
//! answers of the default local models (Qwen2.5-Coder-0.5B and all-MiniLM-L6-v2, two
//! servers), `scans.rs` their answers from scanned pages read by Tesseract; the other
//! modules check the wire and failures with SmolLM2-135M (one server for chat and
//! embeddings, fast enough to be killed mid-answer).
//!
//! Built only with the `real-model` feature; `make test-real-model` installs and starts
//! the servers, then runs it:
//!
//! ```text
//! BOR_TEST_LLM_BASE_URL=http://127.0.0.1:18090/v1 \
//! BOR_TEST_CHAT_BASE_URL=http://127.0.0.1:18091/v1 \
//! BOR_TEST_EMBED_BASE_URL=http://127.0.0.1:18094/v1 \
//!     cargo test --workspace --features bor/real-model --test real_model -- --test-threads 1
//! ```
//!
//! The server answers one request at a time, so the tests run one at a time. Tests that
//! kill a server or watch its log start an instance of their own with
//! `scripts/llm-server.sh serve smollm2 PORT`. What these tests found where the server differs
//! from the OpenAI reference is written up in `docs/COMPATIBILITY.md`.

#![expect(
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

mod embeddings;
mod failures;
mod quality;
mod scans;
mod support;
mod turns;
mod wire;
