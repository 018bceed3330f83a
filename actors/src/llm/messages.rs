//! Messages to and from an LlmActor.

use actix::Message;
use serde_json::Value;

use super::error::LlmError;
use super::types::{ChatCompletion, ChatMessage};

/// What a requester asks of its LlmActor. One request runs at a time: a new one
/// replaces (cancels) the one in flight.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub enum LlmCommand {
    /// Stream a chat completion; pieces, then `ChatDone` or `Failed`.
    Chat(ChatRequest),
    /// Embed a batch of texts; `Embedded` (one vector per input, in order) or `Failed`.
    /// The purpose's prefix (`LlmSettings::embed_prefixes`) is put before each text.
    Embed {
        inputs: Vec<String>,
        purpose: EmbedPurpose,
    },
    /// List the model ids the server offers (one attempt, no retries); `Models` or `Failed`.
    ListModels,
    /// Score each document against the query on the re-ranking server (one attempt, no
    /// retries); `Reranked` (one score per document, in order) or `Failed`.
    Rerank {
        query: String,
        documents: Vec<String>,
    },
    /// Drop the request in flight and any pending retry.
    Cancel,
    /// The requester has passed on this many `Content`/`Reasoning` pieces: the actor
    /// forwards at most [`RELAY_WINDOW`](super::RELAY_WINDOW) pieces ahead of these
    /// acknowledgements, then stops reading the stream until they come. Does not touch
    /// the request in flight.
    Relayed(usize),
}

/// What a text is embedded as: a question (or search query) looking for passages, or a
/// passage of a document. Models trained with task prefixes embed each with its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbedPurpose {
    Query,
    Document,
}

/// A chat completion request; the actor adds the model name and `stream: true`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    /// Tool definitions (OpenAI JSON schema layout); `None` sends no `tools` key at all.
    pub tools: Option<Vec<Value>>,
}

/// What an LlmActor reports to its requester.
#[derive(Debug, Clone, PartialEq, Message)]
#[rtype(result = "()")]
pub enum LlmEvent {
    /// An attempt failed and will be retried after the delay (`attempt` = 1..=max).
    Retrying {
        attempt: u32,
        max: u32,
    },
    /// Answer text, as it streams.
    Content(String),
    /// Reasoning text, as it streams.
    Reasoning(String),
    /// The chat stream ended properly.
    ChatDone(ChatCompletion),
    Embedded(Vec<Vec<f32>>),
    Models(Vec<String>),
    /// One re-ranking score per document, in the order they were sent.
    Reranked(Vec<f32>),
    /// The request failed for good.
    Failed(LlmError),
}
