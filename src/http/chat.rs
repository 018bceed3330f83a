//! `POST /api/chat`: validates the request before any stream opens, starts the turn
//! (see [`super::turn`]) and relays its frames as SSE events (docs/PROTOCOL.md, "Chat
//! request" and "Event stream").

use actix_web::{HttpRequest, Responder, post, web};
use bor_actors::llm::ChatMessage;
use bor_actors::turn::{Frame, TurnSpec};
use futures_util::StreamExt;
use serde::Deserialize;
use utoipa::ToSchema;

use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use super::question::{HistoryEntry, MAX_BODY_BYTES, checked_question, history_messages};
use super::turn::{event_stream, refuse_when_stopping, start_stoppable_turn};
use super::turns::{TURN_ID_HEADER, is_running, keep_turn, numbered_event};
use crate::auth::Caller;
use crate::auth::access::Refusal;
use crate::conversations;
use crate::state::AppState;
use uuid::Uuid;

/// The body of `POST /api/chat`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(expecting = "a JSON object with a `message`")]
pub struct ChatRequestBody {
    /// The question; not empty after trimming, at most `BOR_MAX_MESSAGE_CHARS` characters.
    pub message: String,
    /// Earlier messages, oldest first, at most 20; not with `conversation_id`.
    #[serde(default)]
    pub history: Option<Vec<HistoryEntry>>,
    /// The conversation to continue (its stored turns are the history); absent, the
    /// turn starts a new one.
    #[serde(default, deserialize_with = "trimmed_uuid")]
    pub conversation_id: Option<Uuid>,
    /// Retrieve from these collections only (each readable by the caller); absent,
    /// from every collection they may read.
    #[serde(default)]
    pub collections: Option<Vec<String>>,
    /// Ask a turn of the caller's again, as a new version of it (regenerated with the
    /// same question, or with an edited one in `message`): any version's id of the
    /// conversation's last turn, which must have ended. The turn's conversation is the
    /// one continued; not with `history`.
    #[serde(default, deserialize_with = "trimmed_uuid")]
    pub version_of: Option<Uuid>,
}

/// A UUID written as a string, spaces around it allowed.
fn trimmed_uuid<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Uuid>, D::Error> {
    let text: Option<String> = Option::deserialize(deserializer)?;
    text.map(|text| {
        Uuid::parse_str(text.trim()).map_err(|_| serde::de::Error::custom("expected a UUID"))
    })
    .transpose()
}

/// A body that does not fit: the field's own code (`invalid_history`,
/// `invalid_conversation`), else `invalid_json`.
impl RequestBody for ChatRequestBody {
    fn refusal(field: Option<&str>, message: String) -> ApiError {
        match field {
            Some("history") => ApiError::InvalidHistory(message),
            Some("conversation_id") => ApiError::InvalidConversation(message),
            _ => ApiError::InvalidJson(message),
        }
    }
}

/// One chat turn, answered as a stream of Server-Sent Events.
///
/// Each frame is `id: N` (its number in the turn), `event: NAME` and `data: JSON` (the
/// `Frame` schema lists the data of each event), with comment keep-alives between them.
/// The last frame is `done` or `error`. Every refusal comes before the stream opens, as
/// a JSON error. The headers `X-Turn-Id` and `X-Conversation-Id` name the turn and its
/// conversation; the turn goes on if the client leaves, and is read again with
/// `GET /api/turns/{turn_id}/events`.
#[utoipa::path(
    tag = "chat",
    request_body(content = ChatRequestBody, content_type = "application/json"),
    responses(
        (status = 200, description = "the turn's frames: `retry`, `thinking`, `tool`, `delta`, then `done` or `error`", content_type = "text/event-stream", body = Frame),
        (status = 400, description = "`invalid_json`, `invalid_history`, `empty_message` or `message_too_long`", body = ErrorBody),
        (status = 404, description = "`not_found`: the conversation, the turn of `version_of`, or a collection named, is absent or not the caller's to read", body = ErrorBody),
        (status = 409, description = "`turn_running`: the turn of `version_of` is still running; `not_last_turn`: it is not its conversation's last", body = ErrorBody),
        (status = 413, description = "`body_too_large`: the body is over 256 KiB", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`: the body is not JSON", body = ErrorBody),
        (status = 503, description = "`busy` (with `Retry-After`): every turn slot is taken; `unavailable`: the service is shutting down", body = ErrorBody),
    )
)]
#[post("/api/chat")]
pub async fn chat(
    request: HttpRequest,
    payload: web::Payload,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<impl Responder, ApiError> {
    refuse_when_stopping(&state)?;
    let body: ChatRequestBody = read_json_body(
        &request,
        payload,
        MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let scope = caller.readable.scope(body.collections.as_deref())?;
    let ChatInput {
        question,
        history,
        version_of,
    } = parse_chat_input(body, state.config.max_message_chars)?;
    let (conversation_id, history, version_of) = match (version_of, history) {
        (Some(turn_id), history) => {
            let target = version_target(&state, &caller, turn_id).await?;
            if matches!(history, History::Stored(id) if id != target.conversation_id) {
                return Err(ApiError::InvalidConversation(
                    "`conversation_id` is not the conversation of the turn named in `version_of`"
                        .to_owned(),
                ));
            }
            let owner = caller.user_row().ok_or(ApiError::NotSignedIn)?;
            let stored = conversations::history(
                &state.histories,
                &state.log,
                owner,
                target.conversation_id,
                Some(target.first_version),
            )
            .await?
            .ok_or_else(|| Refusal::NoTurn(turn_id.to_string()))?;
            (target.conversation_id, stored, Some(target.first_version))
        }
        (None, History::Stored(id)) => {
            let owner = caller.user_row().ok_or(ApiError::NotSignedIn)?;
            let stored = conversations::history(&state.histories, &state.log, owner, id, None)
                .await?
                .ok_or_else(|| Refusal::NoConversation(id.to_string()))?;
            (id, stored, None)
        }
        (None, History::Given(messages)) => (Uuid::new_v4(), messages, None),
        (None, History::None) => (Uuid::new_v4(), Vec::new(), None),
    };
    let spec = TurnSpec {
        conversation_id: Some(conversation_id),
        user_id: caller.user_row(),
        key_id: caller.key_id(),
        question,
        history,
        version_of,
    };
    let turn = start_stoppable_turn(&state, spec, scope).await?;
    let turn_id = turn.turn.turn_id;
    let frames = keep_turn(&state.frame_hub, turn, caller.user_id);
    state.turn_owners.record(turn_id, caller.user_id);
    let events = frames.map(|frame| numbered_event(&frame));
    Ok(event_stream(events, state.config.sse_keepalive)
        .insert_header((CONVERSATION_ID_HEADER, conversation_id.to_string()))
        .insert_header((TURN_ID_HEADER, turn_id.to_string())))
}

/// The response header that names the turn's conversation.
pub const CONVERSATION_ID_HEADER: &str = "X-Conversation-Id";

/// The turn `turn_id` names when a new version of it is asked (docs/PROTOCOL.md,
/// "Versions of a turn"): the caller's own (another's, or none, is 404 alike), ended
/// (409 `turn_running`), and its conversation's last (409 `not_last_turn`).
async fn version_target(
    state: &AppState,
    caller: &Caller,
    turn_id: Uuid,
) -> Result<conversations::VersionTarget, ApiError> {
    let owner = caller.user_row().ok_or(ApiError::NotSignedIn)?;
    if is_running(&state.frame_hub, turn_id, owner).await? {
        return Err(ApiError::TurnRunning);
    }
    match conversations::version_target(&state.pool, &state.log, owner, turn_id).await? {
        conversations::VersionOf::Turn(target) => Ok(target),
        conversations::VersionOf::NotLast => Err(ApiError::NotLastTurn),
        conversations::VersionOf::Absent => Err(Refusal::NoTurn(turn_id.to_string()).into()),
    }
}

/// A chat request, checked.
#[derive(Debug, PartialEq)]
pub struct ChatInput {
    /// As sent, trimmed.
    pub question: String,
    pub history: History,
    /// The turn this one asks again (any version's id), when it is a new version.
    pub version_of: Option<Uuid>,
}

/// Where the history of a chat turn comes from; each but `Stored` starts a new
/// conversation.
#[derive(Debug, PartialEq)]
pub enum History {
    /// The request sent it (`history`), oldest first.
    Given(Vec<ChatMessage>),
    /// The request named a conversation: its stored turns are the history.
    Stored(Uuid),
    /// The request sent neither: the turn has nothing before it.
    None,
}

/// Checks what the body's type cannot: the message is not empty and not too long
/// (see [`checked_question`]), the history holds at most [`HISTORY_LIMIT`](conversations::HISTORY_LIMIT)
/// entries, and neither a conversation nor a turn to ask again is named together with
/// a history.
pub fn parse_chat_input(
    body: ChatRequestBody,
    max_message_chars: usize,
) -> Result<ChatInput, ApiError> {
    let question = checked_question(&body.message, max_message_chars)?;
    if body.conversation_id.is_some() && body.history.is_some() {
        return Err(ApiError::InvalidHistory(
            "give `conversation_id` or `history`, not both: a conversation's history is its stored turns".to_owned(),
        ));
    }
    if body.version_of.is_some() && body.history.is_some() {
        return Err(ApiError::InvalidHistory(
            "give `version_of` or `history`, not both: a turn asked again has its conversation's history".to_owned(),
        ));
    }
    let question = question.to_owned();
    let version_of = body.version_of;
    let history = match (body.conversation_id, body.history) {
        (Some(id), _) => History::Stored(id),
        (None, None) => History::None,
        (None, Some(entries)) => History::Given(history_messages(entries)?),
    };
    Ok(ChatInput {
        question,
        history,
        version_of,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::body::parse_json_body;
    use serde_json::{Value, json};

    fn parse_input(body: Value) -> Result<ChatInput, ApiError> {
        let bytes = serde_json::to_vec(&body).unwrap();
        parse_chat_input(parse_json_body(&bytes)?, 10)
    }

    fn parse(body: Value) -> Result<ChatInput, ApiError> {
        parse_input(body)
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
            History::Given(vec![ChatMessage::user("a"), ChatMessage::assistant("b")])
        );
        assert_eq!(
            parse(json!({"message": "x", "history": []}))
                .unwrap()
                .history,
            History::Given(Vec::new())
        );
        assert_eq!(
            parse(json!({"message": "x", "history": null}))
                .unwrap()
                .history,
            History::None
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
        assert_eq!(
            code(json!({"message": "x", "conversation_id": "not-a-uuid"})),
            "invalid_conversation"
        );
        assert_eq!(
            code(json!({"message": "x", "conversation_id": 7})),
            "invalid_conversation"
        );
        let id = Uuid::new_v4().to_string();
        assert_eq!(
            code(json!({"message": "x", "conversation_id": id, "history": []})),
            "invalid_history"
        );
    }

    #[test]
    fn a_named_conversation_is_continued() {
        let id = Uuid::new_v4();
        let spaced = parse_input(json!({"message": "x", "conversation_id": format!(" {id} ")}));
        assert_eq!(spaced.unwrap().history, History::Stored(id));
        let named = parse_input(json!({"message": "x", "conversation_id": id})).unwrap();
        assert_eq!(named.history, History::Stored(id));
        let fresh = parse_input(json!({"message": "x"})).unwrap();
        assert_eq!(fresh.history, History::None);
    }

    #[test]
    fn a_turn_asked_again_is_named_without_a_history() {
        let id = Uuid::new_v4();
        let again = parse_input(json!({"message": "x", "version_of": format!(" {id} ")})).unwrap();
        assert_eq!((again.version_of, again.history), (Some(id), History::None));
        let code = |body: Value| parse(body).unwrap_err().code();
        assert_eq!(
            code(json!({"message": "x", "version_of": id, "history": []})),
            "invalid_history"
        );
        assert_eq!(
            code(json!({"message": "x", "version_of": "not-a-uuid"})),
            "invalid_json"
        );
    }

    #[test]
    fn length_counts_unicode_scalar_values_after_trimming() {
        assert!(parse(json!({"message": "  日本語のテキスト10  "})).is_ok());
        assert!(parse(json!({"message": "ééééééééééé"})).is_err());
        assert!(parse(json!({"message": "éééééééééé"})).is_ok());
    }
}
