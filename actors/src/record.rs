//! What a finished turn leaves behind: its path, outcome, error code and counters, as
//! the `done`/`error` frames, the `query_log` row and the log line report them.

use std::fmt;

use crate::knowledge::Signals;
use chrono::{DateTime, Utc};
use pulldown_cmark::{Event, Options, Parser, TagEnd};
use serde::{Deserialize, Serialize};
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
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
    /// The chunk's text without Markdown syntax, whitespace collapsed, at most
    /// [`SNIPPET_CHARS`] characters.
    pub snippet: String,
    /// The PDF page the chunk starts on, from 1.
    pub page: Option<u32>,
    /// Each ranking's score for the chunk (all `null` on rows from before they were
    /// kept, and for a chunk a tool read by its id).
    #[serde(default)]
    pub signals: Signals,
}

/// The longest `snippet` of a source, in characters (`…` included).
pub const SNIPPET_CHARS: usize = 300;

/// A chunk's text as a reader sees it (its Markdown without the syntax), whitespace
/// collapsed to single spaces, cut at [`SNIPPET_CHARS`] characters with `…`.
pub fn snippet_of(text: &str) -> String {
    shortened(&plain_text(text), SNIPPET_CHARS)
}

/// The words of Markdown without its syntax: text, code and the text of links and
/// images, a space where a block, a line or a table cell ends; raw HTML left out, as the
/// pages' sanitiser leaves out what it does not show.
fn plain_text(markdown: &str) -> String {
    let mut text = String::with_capacity(markdown.len());
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Text(words) | Event::Code(words) => text.push_str(&words),
            // Inline markup ends inside a line: "**14** days" reads "14 days".
            Event::End(
                TagEnd::Emphasis
                | TagEnd::Strong
                | TagEnd::Strikethrough
                | TagEnd::Superscript
                | TagEnd::Subscript
                | TagEnd::Link
                | TagEnd::Image,
            ) => {}
            Event::End(_) | Event::SoftBreak | Event::HardBreak | Event::Rule => text.push(' '),
            _ => {}
        }
    }
    text
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
    /// question when there is one (`question::searched_query`).
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
    /// The API key the turn was asked with, if any (its use counts toward the key and
    /// its person).
    pub key_id: Option<Uuid>,
    /// Tokens of every chat request of the turn (docs/LIMITS.md, "Usage").
    pub usage: TokenUsage,
    /// The turn this one is a version of (its first version's id); `None` for a turn of
    /// its own.
    pub version_of: Option<Uuid>,
}

/// Tokens a turn's chat requests took, summed over its requests (tool rounds, the
/// recovery request): as the LLM server reported them, or bor's estimate for a request
/// it reported none for (then `estimated`). Embeddings are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TokenUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// At least one request's count is bor's estimate.
    pub estimated: bool,
}

impl TokenUsage {
    /// Prompt and completion together: what token limits count.
    pub fn total(self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }

    /// Both counts added, estimated when either is.
    pub fn plus(self, other: TokenUsage) -> TokenUsage {
        TokenUsage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
            estimated: self.estimated || other.estimated,
        }
    }

    /// bor's estimate when the server reports no usage: a token for every four
    /// characters (rounded up) sent and received, the rule of thumb for English text
    /// with the common tokenizers.
    pub fn estimate(prompt_chars: usize, completion_chars: usize) -> TokenUsage {
        let tokens = |chars: usize| chars.div_ceil(CHARS_PER_TOKEN) as u64;
        TokenUsage {
            prompt_tokens: tokens(prompt_chars),
            completion_tokens: tokens(completion_chars),
            estimated: true,
        }
    }
}

/// Characters per token of bor's estimate ([`TokenUsage::estimate`]).
pub const CHARS_PER_TOKEN: usize = 4;

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
    fn a_snippet_shows_markdown_as_the_words_a_reader_sees() {
        assert_eq!(
            snippet_of("## Descaling\n\nUse **citric acid** every\nmonth, ~~never~~ `vinegar`."),
            "Descaling Use citric acid every month, never vinegar."
        );
        assert_eq!(
            snippet_of("| Model | Litres |\n|---|---|\n| K1 | 1.7 |"),
            "Model Litres K1 1.7"
        );
        assert_eq!(
            snippet_of(
                "- [the guide](https://example.com/guide)\n- <b>bold</b> text\n\n---\n> quoted"
            ),
            "the guide bold text quoted"
        );
        assert_eq!(
            snippet_of("5 * 3 = 15 and 2 * 2 = 4"),
            "5 * 3 = 15 and 2 * 2 = 4"
        );
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
