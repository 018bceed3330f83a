//! HTTP integration tests: the app on port 0, the mock LLM on port 0, a fresh
//! PostgreSQL database per test; SSE frames read as a browser would.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

mod access_matrix;
mod accounts;
mod admin_documents;
mod admin_health;
mod audit;
mod chat_turns;
mod client_address;
mod collections;
mod conversations;
mod documents;
mod feedback;
mod fixtures;
mod hosts;
mod import;
mod instances;
mod limits;
mod log_actor;
mod mcp;
mod metrics;
mod nul_input;
mod oauth;
mod oidc;
mod openai_refusals;
mod openai_turns;
mod openapi;
mod passages;
mod people_conversations;
mod queries;
mod refusals;
mod request_ids;
mod retrieval;
mod search;
mod service;
mod shutdown;
mod trusted_proxy;
mod turn_events;
mod turn_versions;
mod uploads;
mod usage;
mod watch;
mod web_pages;

use bor_test_support as support;
