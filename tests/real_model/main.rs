//! The compatibility suite: bor in front of a real OpenAI-compatible model server
//! (llama-cpp-python with SmolLM2-135M, as `scripts/llm-server.sh` runs it).
//!
//! Built only with the `real-model` feature; `make test-real-model` installs and starts
//! the server, then runs it:
//!
//! ```text
//! BOR_TEST_LLM_BASE_URL=http://127.0.0.1:18090/v1 \
//!     cargo test --workspace --features bor/real-model --test real_model -- --test-threads 1
//! ```
//!
//! The server answers one request at a time, so the tests run one at a time. Tests that
//! kill a server or watch its log start an instance of their own with
//! `scripts/llm-server.sh serve PORT`. What these tests found where the server differs
//! from the OpenAI reference is written up in `docs/COMPATIBILITY.md`.

mod embeddings;
mod failures;
mod support;
mod turns;
mod wire;
