//! The rules every edge that takes a question shares (`POST /api/chat`, `POST
//! /v1/chat/completions`, `POST /api/search`): the body bound, the question trimmed and
//! bounded, a history a request brings.

use bor_actors::llm::ChatMessage;
use serde::Deserialize;
use utoipa::ToSchema;

use super::error::ApiError;
use crate::conversations::HISTORY_LIMIT;

/// Largest accepted request body.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

#[derive(Debug, Deserialize, ToSchema)]
pub struct HistoryEntry {
    pub role: HistoryRole,
    pub content: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum HistoryRole {
    User,
    Assistant,
}

/// A question trimmed: refused when empty or longer than `max_message_chars` Unicode
/// scalar values (a chat message and a search query alike).
pub fn checked_question(message: &str, max_message_chars: usize) -> Result<&str, ApiError> {
    let question = message.trim();
    if question.is_empty() {
        return Err(ApiError::EmptyMessage);
    }
    if question.chars().count() > max_message_chars {
        return Err(ApiError::MessageTooLong {
            max: max_message_chars,
        });
    }
    Ok(question)
}

/// A `history` a request sent (on `/api/chat` and `/api/search`), as messages: at most
/// [`HISTORY_LIMIT`] entries.
pub fn history_messages(entries: Vec<HistoryEntry>) -> Result<Vec<ChatMessage>, ApiError> {
    if entries.len() > HISTORY_LIMIT {
        return Err(ApiError::InvalidHistory(format!(
            "`history` holds {} entries; at most {HISTORY_LIMIT} are allowed",
            entries.len()
        )));
    }
    Ok(entries
        .into_iter()
        .map(|entry| match entry.role {
            HistoryRole::User => ChatMessage::user(entry.content),
            HistoryRole::Assistant => ChatMessage::assistant(entry.content),
        })
        .collect())
}
