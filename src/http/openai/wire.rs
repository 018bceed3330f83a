//! The OpenAI shapes bor answers with: the model list, the chat completion and its
//! stream chunks, the `bor` extension, and the error object.

use bor_actors::record::{Source, TurnPath};
use bor_actors::turn::DoneFrame;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// The one model bor serves.
pub const MODEL_ID: &str = "bor";
/// What starts the id of a model scoped to one collection: `bor/<name>`.
pub const COLLECTION_MODEL_PREFIX: &str = "bor/";

/// `GET /v1/models`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ModelList {
    #[schema(value_type = String, example = "list")]
    pub object: &'static str,
    pub data: Vec<Model>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Model {
    /// `bor` (every readable collection) or `bor/<collection>`.
    #[schema(example = "bor")]
    pub id: String,
    #[schema(value_type = String, example = "model")]
    pub object: &'static str,
    /// When this bor started (Unix seconds).
    pub created: i64,
    #[schema(value_type = String, example = "bor")]
    pub owned_by: &'static str,
}

impl Model {
    /// The model `id` (`bor` or `bor/<collection>`).
    pub fn bor(id: String, created: i64) -> Model {
        Model {
            id,
            object: "model",
            created,
            owned_by: MODEL_ID,
        }
    }
}

/// What every completion and chunk of one turn shares.
#[derive(Debug, Clone)]
pub struct CompletionHead {
    /// `chatcmpl-<turn_id>`.
    pub id: String,
    /// When the turn started (Unix seconds).
    pub created: i64,
}

impl CompletionHead {
    pub fn new(turn_id: Uuid, created: i64) -> CompletionHead {
        CompletionHead {
            id: format!("chatcmpl-{turn_id}"),
            created,
        }
    }

    pub fn chunk(&self, delta: ChunkDelta) -> ChatCompletionChunk {
        ChatCompletionChunk {
            id: self.id.clone(),
            object: "chat.completion.chunk",
            created: self.created,
            model: MODEL_ID,
            choices: vec![ChunkChoice {
                index: 0,
                delta,
                finish_reason: None,
            }],
            bor: None,
        }
    }

    /// The last chunk: an empty delta, the finish reason and the turn's extension.
    pub fn last_chunk(&self, done: DoneFrame) -> ChatCompletionChunk {
        let mut chunk = self.chunk(ChunkDelta::default());
        chunk.choices[0].finish_reason = Some(finish_reason(&done));
        chunk.bor = Some(BorExtension::from(done));
        chunk
    }

    pub fn completion(
        &self,
        content: String,
        reasoning: Option<String>,
        done: DoneFrame,
    ) -> ChatCompletion {
        ChatCompletion {
            id: self.id.clone(),
            object: "chat.completion",
            created: self.created,
            model: MODEL_ID,
            choices: vec![CompletionChoice {
                index: 0,
                message: AssistantMessage {
                    role: "assistant",
                    content,
                    reasoning_content: reasoning,
                },
                finish_reason: finish_reason(&done),
            }],
            bor: BorExtension::from(done),
        }
    }
}

/// `"length"` when the answer was cut at `BOR_MAX_ANSWER_CHARS`, else `"stop"`.
fn finish_reason(done: &DoneFrame) -> &'static str {
    if done.truncated { "length" } else { "stop" }
}

/// One `data:` line of a streamed completion.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChatCompletionChunk {
    /// `chatcmpl-` and the turn id.
    pub id: String,
    #[schema(value_type = String, example = "chat.completion.chunk")]
    pub object: &'static str,
    pub created: i64,
    #[schema(value_type = String, example = "bor")]
    pub model: &'static str,
    /// Always one choice.
    pub choices: Vec<ChunkChoice>,
    /// On the last chunk only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bor: Option<BorExtension>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ChunkChoice {
    pub index: u32,
    pub delta: ChunkDelta,
    /// `"stop"` (or `"length"`, the answer cut at its bound) on the last chunk, else null.
    #[schema(value_type = Option<String>)]
    pub finish_reason: Option<&'static str>,
}

/// What a chunk adds: the role (first chunk), visible text or reasoning text.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct ChunkDelta {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "assistant")]
    pub role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

impl ChunkDelta {
    /// The first chunk's delta: `{"role":"assistant","content":""}`.
    pub fn role() -> ChunkDelta {
        ChunkDelta {
            role: Some("assistant"),
            content: Some(String::new()),
            reasoning_content: None,
        }
    }

    pub fn content(text: String) -> ChunkDelta {
        ChunkDelta {
            content: Some(text),
            ..ChunkDelta::default()
        }
    }

    pub fn reasoning(text: String) -> ChunkDelta {
        ChunkDelta {
            reasoning_content: Some(text),
            ..ChunkDelta::default()
        }
    }
}

/// The answer of `stream: false`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChatCompletion {
    /// `chatcmpl-` and the turn id.
    pub id: String,
    #[schema(value_type = String, example = "chat.completion")]
    pub object: &'static str,
    pub created: i64,
    #[schema(value_type = String, example = "bor")]
    pub model: &'static str,
    /// Always one choice.
    pub choices: Vec<CompletionChoice>,
    pub bor: BorExtension,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CompletionChoice {
    pub index: u32,
    pub message: AssistantMessage,
    #[schema(value_type = String, example = "stop")]
    pub finish_reason: &'static str,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AssistantMessage {
    #[schema(value_type = String, example = "assistant")]
    pub role: &'static str,
    /// The visible answer, scaffolding removed.
    pub content: String,
    /// The model's reasoning, null when it showed none.
    pub reasoning_content: Option<String>,
}

/// What bor adds to a finished turn: the turn's id, its path and the passages the model
/// was given.
#[derive(Debug, Serialize, ToSchema)]
pub struct BorExtension {
    pub turn_id: Uuid,
    pub path: TurnPath,
    pub sources: Vec<Source>,
}

impl From<DoneFrame> for BorExtension {
    fn from(done: DoneFrame) -> BorExtension {
        BorExtension {
            turn_id: done.turn_id,
            path: done.path,
            sources: done.sources,
        }
    }
}

/// The OpenAI error shape: `{"error":{"message","type","param","code"}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct OpenAiErrorBody {
    pub error: OpenAiErrorDetail,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OpenAiErrorDetail {
    /// For people; for a failed turn, the copy bor's own `error` frames carry.
    pub message: String,
    /// `invalid_request_error` for a 4xx, `server_error` for a 5xx or a failed turn.
    #[serde(rename = "type")]
    #[schema(value_type = String, example = "invalid_request_error")]
    pub kind: &'static str,
    /// Always null.
    #[schema(value_type = Option<String>)]
    pub param: Option<()>,
    /// bor's error code, as in its own API (`invalid_json`, `busy`, `llm_unavailable`, …).
    #[schema(value_type = String, example = "invalid_json")]
    pub code: &'static str,
}

impl OpenAiErrorBody {
    pub fn new(kind: &'static str, code: &'static str, message: String) -> OpenAiErrorBody {
        OpenAiErrorBody {
            error: OpenAiErrorDetail {
                message,
                kind,
                param: None,
                code,
            },
        }
    }
}
