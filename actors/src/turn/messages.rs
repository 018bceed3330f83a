//! What a TurnActor is started with, and the messages it handles besides `LlmEvent`.

use actix::prelude::*;
use uuid::Uuid;

use crate::llm::{ChatMessage, LlmCommand, LlmEvent};
use crate::rerank::{self, RerankSettings};

/// What a turn is asked, as its edge parsed and checked it (the one input type from
/// the request to the actor).
#[derive(Debug, Clone, PartialEq)]
pub struct TurnSpec {
    /// The conversation the turn belongs to (docs/PROTOCOL.md, "Conversations");
    /// `None` for a turn of the OpenAI-compatible API.
    pub conversation_id: Option<Uuid>,
    /// The person who asks; `None` for no user row (a caller without one).
    pub user_id: Option<Uuid>,
    /// The API key the turn is asked with; `None` for a session or another way in.
    pub key_id: Option<Uuid>,
    /// As sent, trimmed.
    pub question: String,
    /// Earlier user and assistant messages, oldest first.
    pub history: Vec<ChatMessage>,
    /// The turn this one is a version of (its first version's id), when it asks a turn
    /// again (docs/PROTOCOL.md, "Versions of a turn"); `None` for a turn of its own.
    pub version_of: Option<Uuid>,
}

/// The turn-related settings (`BOR_*` variables: .env.example; docs/PROTOCOL.md, "A turn").
#[derive(Debug, Clone)]
pub struct TurnSettings {
    pub agent_enabled: bool,
    /// Tool rounds before the final tools-free request.
    pub max_rounds: u32,
    pub top_k: usize,
    /// Re-ranking of the fused candidates, when a re-ranking server is set.
    pub rerank: Option<RerankSettings>,
    pub deflect_threshold: f32,
    pub thinking_forced_open: bool,
    /// Recorded in `query_log.chat_model`.
    pub chat_model: String,
    /// Characters of answer and reasoning the turn keeps; at the bound it ends with
    /// what was shown (`done` with `truncated`).
    pub max_answer_chars: usize,
}

impl TurnSettings {
    /// How many fused chunks retrieval hands the turn: the candidates to re-rank, or
    /// the top the model gets.
    pub fn retrieved(&self) -> usize {
        rerank::retrieved(self.rerank, self.top_k)
    }
}

/// Starts the LLM actor of a turn, given the recipient of its events. Production code
/// starts an `LlmActor`; tests start a scripted fake.
pub type LlmConnector = Box<dyn FnOnce(Recipient<LlmEvent>) -> Recipient<LlmCommand> + Send>;

/// The turn's owner asks to stop it: it ends `stopped`, with a `done` frame that says
/// so, and keeps its partial answer.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct StopTurn;

/// The client's stream went away (or cannot keep up).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct ClientGone;
