//! bor's actors: the per-turn `TurnActor`, the `LlmActor` that owns every request to
//! the LLM server, and the process-wide `LogActor`, with their messages and the pure
//! logic they use.

mod error_chain;
pub mod frame_hub;
pub mod knowledge;
pub mod llm;
pub mod log;
pub mod metrics;
pub mod question;
pub mod record;
pub mod rerank;
pub mod scaffolding;
pub mod text;
pub mod turn;

pub use error_chain::error_chain;
