//! bor: chat with your own knowledge base through any OpenAI-compatible LLM server.

pub mod config;
pub mod db;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
