//! bor: chat with your own knowledge base through any OpenAI-compatible LLM server.

pub mod audit;
pub mod auth;
pub mod check;
pub mod cli;
pub mod config;
pub mod conversations;
pub mod db;
pub mod eval;
pub mod feedback;
pub mod health;
pub mod history_cache;
pub mod http;
pub mod import;
pub mod knowledge;
pub mod lifecycle;
pub mod migrate;
pub mod notify;
pub mod query_log_store;
pub mod reembed;
pub mod startup;
pub mod state;
pub mod stored_history;
pub mod telemetry;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod turn_owners;
pub mod usage;
pub mod user_command;
pub mod username;
pub mod watch;
pub mod web;
