//! HTTP integration tests: the app on port 0, the mock LLM on port 0, a fresh
//! PostgreSQL database per test; SSE frames read as a browser would.

mod chat_turns;
mod fixtures;
mod log_actor;
mod refusals;
mod service;
mod support;
