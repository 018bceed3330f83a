//! What a finished turn leaves behind: its path, outcome, error code and counters, as
//! the `done`/`error` frames, the `query_log` row and the log line report them.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// Which way a turn went at retrieval (docs/PROTOCOL.md, "Grounded and deflected").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TurnPath {
    Grounded,
    Deflected,
    /// The turn ended before retrieval decided.
    Undecided,
}

impl TurnPath {
    /// Every path, for readers of the stored words.
    pub const ALL: [Self; 3] = [Self::Grounded, Self::Deflected, Self::Undecided];

    /// The word of the frames, the rows and the log line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Grounded => "grounded",
            Self::Deflected => "deflected",
            Self::Undecided => "undecided",
        }
    }
}

impl fmt::Display for TurnPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The failure codes of `error` frames, with their exact copy (docs/PROTOCOL.md, "Turn
/// error codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    LlmUnavailable,
    LlmInterrupted,
    LlmRejected,
    MalformedReply,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::LlmUnavailable => "llm_unavailable",
            Self::LlmInterrupted => "llm_interrupted",
            Self::LlmRejected => "llm_rejected",
            Self::MalformedReply => "malformed_reply",
            Self::Internal => "internal",
        }
    }

    /// The text a user reads.
    pub fn detail(self) -> &'static str {
        match self {
            Self::LlmUnavailable => {
                "The language model is not responding — please try again in a moment."
            }
            Self::LlmInterrupted => "The language model dropped the connection — please try again.",
            Self::LlmRejected => {
                "The language model rejected the request — check the service configuration."
            }
            Self::MalformedReply => "The model returned a malformed reply — please try again.",
            Self::Internal => "Something went wrong on our side — please try again.",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnOutcome {
    Done,
    /// The client went away; the partial answer is kept.
    Stopped,
    Error(ErrorCode),
}

impl TurnOutcome {
    /// The `query_log.status` of a turn that gets a row; errors get none.
    pub fn row_status(self) -> Option<TurnStatus> {
        match self {
            Self::Done => Some(TurnStatus::Done),
            Self::Stopped => Some(TurnStatus::Stopped),
            Self::Error(_) => None,
        }
    }
}

/// How a turn that left a row ended: its `query_log.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TurnStatus {
    Done,
    /// The client went away; the partial answer is kept.
    Stopped,
}

impl TurnStatus {
    /// Every status, for readers of the stored words.
    pub const ALL: [Self; 2] = [Self::Done, Self::Stopped];

    /// The word of the rows and the log line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Stopped => "stopped",
        }
    }
}

impl fmt::Display for TurnStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A chunk given to the model, as listed in `done.sources` and `query_log.sources`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Source {
    /// The number the model cites it by, `[n]`: 1, 2, … in the order the turn first
    /// gave the chunk to the model (docs/PROTOCOL.md, "Sources and citations").
    pub n: u32,
    pub document_id: i64,
    pub title: String,
    pub chunk_id: i64,
    pub score: f32,
    /// The headings above the chunk, outermost first (`""` when none).
    pub heading: String,
    /// The chunk's text, whitespace collapsed, at most [`SNIPPET_CHARS`] characters.
    pub snippet: String,
    /// The PDF page the chunk starts on, from 1.
    pub page: Option<u32>,
}

/// The longest `snippet` of a source, in characters (`…` included).
pub const SNIPPET_CHARS: usize = 300;

/// `text` with its whitespace collapsed to single spaces, cut at [`SNIPPET_CHARS`]
/// characters with `…`.
pub fn snippet_of(text: &str) -> String {
    shortened(text, SNIPPET_CHARS)
}

/// `text` with its whitespace collapsed to single spaces, cut at `max_chars` characters
/// (`…` included) when longer.
pub fn shortened(text: &str, max_chars: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() > max_chars {
        let kept = crate::text::prefix_chars(&collapsed, max_chars.saturating_sub(1));
        format!("{}…", kept.trim_end())
    } else {
        collapsed
    }
}

/// Everything known about a finished turn.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRecord {
    pub turn_id: Uuid,
    /// The conversation the turn belongs to; `None` for a turn of the OpenAI API.
    pub conversation_id: Option<Uuid>,
    /// The person who asked; `None` when the caller has no user row.
    pub user_id: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    /// As sent, trimmed.
    pub question: String,
    /// What retrieval searched: the question, then the conversation's previous
    /// question when there is one (`knowledge::searched_query`).
    pub query: String,
    /// The visible answer (partial for a stopped turn).
    pub answer: String,
    pub path: TurnPath,
    pub outcome: TurnOutcome,
    pub chat_model: String,
    /// Chat requests of the turn (final and recovery included, retries not).
    pub rounds: u32,
    pub tool_calls: u32,
    pub retries: u32,
    pub scaffold_stripped: u64,
    pub recovered: bool,
    pub sources: Vec<Source>,
    /// Time to the first `delta` frame.
    pub first_token_ms: Option<u64>,
    pub elapsed_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_is_the_text_collapsed_and_cut_at_300_characters() {
        assert_eq!(
            snippet_of("  Refunds\n\n take\t14 days. "),
            "Refunds take 14 days."
        );
        let long = "é ".repeat(400);
        let snippet = snippet_of(&long);
        assert_eq!(snippet.chars().count(), SNIPPET_CHARS, "{snippet}");
        assert!(snippet.ends_with("é…"));
        let exact = "x".repeat(SNIPPET_CHARS);
        assert_eq!(snippet_of(&exact), exact, "300 characters stay whole");
    }

    #[test]
    fn error_copy_is_exact() {
        assert_eq!(
            ErrorCode::LlmUnavailable.detail(),
            "The language model is not responding — please try again in a moment."
        );
        assert_eq!(
            ErrorCode::LlmInterrupted.detail(),
            "The language model dropped the connection — please try again."
        );
        assert_eq!(
            ErrorCode::LlmRejected.detail(),
            "The language model rejected the request — check the service configuration."
        );
        assert_eq!(
            ErrorCode::MalformedReply.detail(),
            "The model returned a malformed reply — please try again."
        );
        assert_eq!(
            ErrorCode::Internal.detail(),
            "Something went wrong on our side — please try again."
        );
        assert_eq!(
            serde_json::to_string(&ErrorCode::MalformedReply).unwrap(),
            "\"malformed_reply\""
        );
    }

    #[test]
    fn only_done_and_stopped_turns_get_rows() {
        assert_eq!(TurnOutcome::Done.row_status(), Some(TurnStatus::Done));
        assert_eq!(TurnOutcome::Stopped.row_status(), Some(TurnStatus::Stopped));
        assert_eq!(TurnOutcome::Error(ErrorCode::Internal).row_status(), None);
    }

    #[test]
    fn the_stored_words_are_the_words_of_the_frames() {
        for path in TurnPath::ALL {
            assert_eq!(serde_json::to_string(&path).unwrap(), format!("\"{path}\""));
        }
        for status in TurnStatus::ALL {
            assert_eq!(
                serde_json::to_string(&status).unwrap(),
                format!("\"{status}\"")
            );
        }
    }
}
