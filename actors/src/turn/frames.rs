//! The SSE frames of a turn (docs/PROTOCOL.md, "Event stream"), as the TurnActor sends
//! them to its client; each edge encodes them on its own wire (src/http/).

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::record::{ErrorCode, Source, TurnPath};

/// One frame of a turn's event stream: `event: NAME` and `data:` this JSON. Exactly
/// one terminal frame (`done` or `error`) ends every stream.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(untagged)]
pub enum Frame {
    /// `event: retry` — before waiting to retry a failed LLM request (attempt 1..=max).
    #[schema(title = "retry")]
    Retry { attempt: u32, max: u32 },
    /// `event: thinking` — reasoning text.
    #[schema(title = "thinking")]
    Thinking { text: String },
    /// `event: tool` — a tool call starts (`phase` is `start`).
    #[schema(title = "tool (start)")]
    ToolStart {
        call_id: String,
        name: String,
        #[schema(value_type = String, example = "start")]
        phase: &'static str,
    },
    /// `event: tool` — a tool call ended (`phase` is `end`; `ok` = it ran without error).
    #[schema(title = "tool (end)")]
    ToolEnd {
        call_id: String,
        name: String,
        #[schema(value_type = String, example = "end")]
        phase: &'static str,
        ok: bool,
    },
    /// `event: delta` — visible answer text, scaffolding removed.
    #[schema(title = "delta")]
    Delta { text: String },
    /// `event: done` — terminal, success.
    #[schema(title = "done")]
    Done(DoneFrame),
    /// `event: error` — terminal, failure; `detail` is the text a user reads.
    #[schema(title = "error")]
    Error {
        turn_id: Uuid,
        /// The turn's conversation; left out for turns that belong to none.
        #[serde(skip_serializing_if = "Option::is_none")]
        conversation_id: Option<Uuid>,
        code: ErrorCode,
        #[schema(value_type = String)]
        detail: &'static str,
    },
}

/// The terminal frame of a successful turn.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DoneFrame {
    pub turn_id: Uuid,
    /// The turn's conversation; left out for turns that belong to none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<Uuid>,
    pub path: TurnPath,
    pub rounds: u32,
    pub retries: u32,
    pub scaffold_stripped: u64,
    pub recovered: bool,
    /// What retrieval searched (the question, then the conversation's previous one).
    pub query: String,
    pub sources: Vec<Source>,
    /// The answer reached `BOR_MAX_ANSWER_CHARS` and was cut there; sent only then.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Its owner stopped the turn (`POST /api/turns/{turn_id}/stop`): the answer is
    /// what had come; sent only then.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
}

impl Frame {
    pub fn tool_start(call_id: &str, name: &str) -> Self {
        Self::ToolStart {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            phase: "start",
        }
    }

    pub fn tool_end(call_id: &str, name: &str, ok: bool) -> Self {
        Self::ToolEnd {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            phase: "end",
            ok,
        }
    }

    pub fn error(turn_id: Uuid, conversation_id: Option<Uuid>, code: ErrorCode) -> Self {
        Self::Error {
            turn_id,
            conversation_id,
            code,
            detail: code.detail(),
        }
    }

    /// The SSE event name.
    pub fn event_name(&self) -> &'static str {
        match self {
            Self::Retry { .. } => "retry",
            Self::Thinking { .. } => "thinking",
            Self::ToolStart { .. } | Self::ToolEnd { .. } => "tool",
            Self::Delta { .. } => "delta",
            Self::Done(_) => "done",
            Self::Error { .. } => "error",
        }
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Done(_) | Self::Error { .. })
    }

    /// The frame's `data:` JSON, on one line.
    pub fn data_json(&self) -> String {
        // Frames hold only strings, numbers and enums: serialising them cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn data(frame: &Frame) -> Value {
        serde_json::to_value(frame).unwrap()
    }

    #[test]
    fn frames_have_their_wire_shapes() {
        assert_eq!(
            data(&Frame::Retry { attempt: 1, max: 3 }),
            json!({"attempt": 1, "max": 3})
        );
        assert_eq!(
            data(&Frame::tool_start("c1", "list_documents")),
            json!({"call_id": "c1", "name": "list_documents", "phase": "start"})
        );
        assert_eq!(
            data(&Frame::tool_end("c1", "list_documents", false)),
            json!({"call_id": "c1", "name": "list_documents", "phase": "end", "ok": false})
        );
        let id = Uuid::nil();
        assert_eq!(
            data(&Frame::error(id, None, ErrorCode::LlmRejected)),
            json!({"turn_id": id, "code": "llm_rejected", "detail": ErrorCode::LlmRejected.detail()})
        );
        let done = Frame::Done(DoneFrame {
            turn_id: id,
            conversation_id: None,
            path: TurnPath::Deflected,
            rounds: 1,
            retries: 0,
            scaffold_stripped: 0,
            recovered: false,
            query: "q".into(),
            sources: vec![],
            truncated: false,
            stopped: false,
        });
        assert_eq!(
            data(&done),
            json!({"turn_id": id, "path": "deflected", "rounds": 1, "retries": 0,
                   "scaffold_stripped": 0, "recovered": false, "query": "q", "sources": []})
        );
        assert_eq!(done.event_name(), "done");
        assert!(done.is_terminal());
        assert!(!Frame::Delta { text: "x".into() }.is_terminal());
    }
}
