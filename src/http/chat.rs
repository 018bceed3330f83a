//! `POST /api/chat`: validates the request before any stream opens, starts the turn
//! (see [`super::turn`]) and relays its frames as SSE events (SPEC §3, §4).

use actix_web::{HttpRequest, Responder, post, web};
use bor_actors::llm::ChatMessage;
use bor_actors::turn::Frame;
use futures_util::StreamExt;
use serde_json::Value;
use utoipa::ToSchema;

use super::body::read_json_body;
use super::error::{ApiError, ErrorBody};
use super::turn::{TurnInput, event_stream, refuse_when_stopping, start_turn};
use crate::state::AppState;

/// Largest accepted request body.
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// Most history entries a turn may carry.
pub const MAX_HISTORY: usize = 20;

/// The body of `POST /api/chat`.
#[derive(ToSchema)]
pub struct ChatRequestBody {
    /// The question; not empty after trimming, at most `BOR_MAX_MESSAGE_CHARS` characters.
    pub message: String,
    /// Earlier messages, oldest first, at most 20.
    pub history: Option<Vec<HistoryEntry>>,
}

#[derive(ToSchema)]
pub struct HistoryEntry {
    #[schema(pattern = "^(user|assistant)$", example = "user")]
    pub role: String,
    pub content: String,
}

/// One chat turn, answered as a stream of Server-Sent Events.
///
/// Each frame is `event: NAME` and `data: JSON` (the `Frame` schema lists the data of
/// each event), with comment keep-alives between them. The last frame is `done` or
/// `error`. Every refusal comes before the stream opens, as a JSON error.
#[utoipa::path(
    tag = "chat",
    request_body(content = ChatRequestBody, content_type = "application/json"),
    responses(
        (status = 200, description = "the turn's frames: `retry`, `thinking`, `tool`, `delta`, then `done` or `error`", content_type = "text/event-stream", body = Frame),
        (status = 400, description = "`invalid_json`, `invalid_history`, `empty_message` or `message_too_long`", body = ErrorBody),
        (status = 413, description = "`body_too_large`: the body is over 256 KiB", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`: the body is not JSON", body = ErrorBody),
        (status = 503, description = "`busy` (with `Retry-After`): every turn slot is taken; `unavailable`: the service is shutting down", body = ErrorBody),
    )
)]
#[post("/api/chat")]
pub async fn chat(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<impl Responder, ApiError> {
    refuse_when_stopping(&state)?;
    let body = read_json_body(
        &request,
        payload,
        MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let input = parse_chat_input(&body, state.config.max_message_chars)?;
    let turn = start_turn(&state, input)?;
    let events = turn.into_frames().map(|frame| frame.to_event());
    Ok(event_stream(events, state.config.sse_keepalive))
}

/// Checks the body against SPEC §3: message present and non-empty, not too long
/// (Unicode scalar values after trimming), history of at most 20 user/assistant turns.
pub fn parse_chat_input(body: &Value, max_message_chars: usize) -> Result<TurnInput, ApiError> {
    let object = body
        .as_object()
        .ok_or_else(|| ApiError::InvalidJson("the body must be a JSON object".to_owned()))?;
    let message = match object.get("message") {
        Some(Value::String(message)) => message,
        Some(_) => {
            return Err(ApiError::InvalidJson(
                "`message` must be a string".to_owned(),
            ));
        }
        None => return Err(ApiError::InvalidJson("`message` is missing".to_owned())),
    };
    let question = message.trim();
    if question.is_empty() {
        return Err(ApiError::EmptyMessage);
    }
    if question.chars().count() > max_message_chars {
        return Err(ApiError::MessageTooLong {
            max: max_message_chars,
        });
    }
    let history = match object.get("history") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(entries)) => parse_history(entries)?,
        Some(_) => {
            return Err(ApiError::InvalidHistory(
                "`history` must be a list".to_owned(),
            ));
        }
    };
    Ok(TurnInput {
        question: question.to_owned(),
        history,
    })
}

fn parse_history(entries: &[Value]) -> Result<Vec<ChatMessage>, ApiError> {
    if entries.len() > MAX_HISTORY {
        return Err(ApiError::InvalidHistory(format!(
            "`history` holds {} entries; at most {MAX_HISTORY} are allowed",
            entries.len()
        )));
    }
    entries
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            let bad = |what: &str| ApiError::InvalidHistory(format!("history[{index}]: {what}"));
            let content = entry
                .get("content")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("`content` must be a string"))?;
            match entry.get("role").and_then(Value::as_str) {
                Some("user") => Ok(ChatMessage::user(content)),
                Some("assistant") => Ok(ChatMessage::assistant(content)),
                _ => Err(bad("`role` must be \"user\" or \"assistant\"")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<TurnInput, ApiError> {
        parse_chat_input(&body, 10)
    }

    #[test]
    fn a_valid_request_is_trimmed_and_keeps_its_history() {
        let input = parse(json!({
            "message": "  Hi there \n",
            "history": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
        }))
        .unwrap();
        assert_eq!(input.question, "Hi there");
        assert_eq!(
            input.history,
            vec![ChatMessage::user("a"), ChatMessage::assistant("b")]
        );
        assert!(
            parse(json!({"message": "x", "history": null}))
                .unwrap()
                .history
                .is_empty()
        );
    }

    #[test]
    fn refusals_have_their_codes() {
        let code = |body: Value| parse(body).unwrap_err().code();
        assert_eq!(code(json!([1, 2])), "invalid_json");
        assert_eq!(code(json!({})), "invalid_json");
        assert_eq!(code(json!({"message": 5})), "invalid_json");
        assert_eq!(code(json!({"message": " \t\n "})), "empty_message");
        assert_eq!(code(json!({"message": "12345678901"})), "message_too_long");
        assert_eq!(
            code(json!({"message": "x", "history": {}})),
            "invalid_history"
        );
        assert_eq!(
            code(json!({"message": "x", "history": [{"role": "system", "content": "s"}]})),
            "invalid_history"
        );
        assert_eq!(
            code(json!({"message": "x", "history": [{"role": "user"}]})),
            "invalid_history"
        );
        let long: Vec<Value> = (0..21)
            .map(|_| json!({"role": "user", "content": "c"}))
            .collect();
        assert_eq!(
            code(json!({"message": "x", "history": long})),
            "invalid_history"
        );
    }

    #[test]
    fn length_counts_unicode_scalar_values_after_trimming() {
        assert!(parse(json!({"message": "  日本語のテキスト10  "})).is_ok());
        assert!(parse(json!({"message": "ééééééééééé"})).is_err());
        assert!(parse(json!({"message": "éééééééééé"})).is_ok());
    }
}
