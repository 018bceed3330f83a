//! Reading a chat-completion request into a turn (docs/OPENAI.md, "What bor reads from
//! a request"): the last message is the question and must be the user's; the `user` and
//! `assistant` messages before it are the history (the last 20); `system`, `developer`
//! and `tool` messages, the client's `tools` and every other field are ignored. Content
//! is a string or a list of text parts; other parts (images, audio, files) are refused
//! rather than silently dropped.
//!
//! Codes, as on `/api/chat`: a body of the wrong shape is `invalid_json`, messages in
//! an order bor cannot answer are `invalid_history`, the question's text gives
//! `empty_message` or `message_too_long`, and another model is `not_found`.

use bor_actors::llm::ChatMessage;
use bor_actors::text::prefix_chars;
use bor_actors::turn::TurnSpec;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::wire::{COLLECTION_MODEL_PREFIX, MODEL_ID};
use crate::conversations::HISTORY_LIMIT;
use crate::http::body::RequestBody;
use crate::http::error::ApiError;

/// Roles of the OpenAI API whose messages bor leaves out of the history.
const IGNORED_ROLES: [&str; 4] = ["system", "developer", "tool", "function"];

/// The body of `POST /v1/chat/completions` (fields bor reads; all others are ignored).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(expecting = "a JSON object with a `model` and `messages`")]
pub struct ChatCompletionRequestBody {
    #[schema(example = "bor", required)]
    #[serde(default)]
    pub model: Option<String>,
    /// The last is the question (role `user`); the `user` and `assistant` messages before
    /// it are the history (the last 20). `system`, `developer` and `tool` messages are
    /// ignored.
    #[schema(required)]
    #[serde(default)]
    pub messages: Option<Vec<RequestMessage>>,
    /// `true`: a stream of chunks; `false` (default): one completion.
    #[serde(default)]
    pub stream: Option<bool>,
}

/// A body of the wrong shape is `invalid_json`, wherever it is wrong.
impl RequestBody for ChatCompletionRequestBody {}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(expecting = "a message object with a `role`")]
pub struct RequestMessage {
    #[schema(example = "user")]
    pub role: String,
    /// Absent or `null` in an assistant message that only called tools. Read only in
    /// the messages bor takes (the user's and the assistant's), so that the content of
    /// the others may have any shape.
    #[serde(default)]
    #[schema(value_type = Option<MessageContent>)]
    pub content: Option<Value>,
}

/// A string, or a list of text parts (other parts, such as images, are refused).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(
    untagged,
    expecting = "a string or a list of content parts with a string `type`"
)]
pub enum MessageContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

/// One part of a message's content; bor reads the `text` ones.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ContentPart {
    #[schema(example = "text")]
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub text: Option<String>,
}

/// A validated `POST /v1/chat/completions`.
#[derive(Debug, PartialEq)]
pub struct CompletionRequest {
    pub stream: bool,
    pub input: TurnSpec,
    /// The collection a `bor/<name>` model names; `None` for `bor`.
    pub collection: Option<String>,
}

/// Checks what the body's type cannot: the model is bor's, the last message is the
/// user's question within the length limit, the roles and content parts are ones bor
/// reads.
pub fn parse_completion_request(
    body: ChatCompletionRequestBody,
    max_message_chars: usize,
) -> Result<CompletionRequest, ApiError> {
    let collection = check_model(body.model.as_deref())?;
    let Some(messages) = body.messages else {
        return Err(ApiError::InvalidJson("`messages` is missing".to_owned()));
    };
    let Some((last, earlier)) = messages.split_last() else {
        return Err(ApiError::InvalidJson(
            "`messages` is empty; its last message must be the user's question".to_owned(),
        ));
    };
    let question = question(last, earlier.len(), max_message_chars)?;
    let history = history(earlier)?;
    Ok(CompletionRequest {
        stream: body.stream.unwrap_or(false),
        input: TurnSpec {
            conversation_id: None,
            user_id: None,
            key_id: None,
            question,
            history,
            version_of: None,
        },
        collection,
    })
}

/// The collection the model names: `bor` names none, `bor/<name>` the collection
/// `name` (whether the caller can read it is decided by the handler).
fn check_model(model: Option<&str>) -> Result<Option<String>, ApiError> {
    match model {
        Some(MODEL_ID) => Ok(None),
        Some(model) if model.starts_with(COLLECTION_MODEL_PREFIX) => {
            Ok(Some(model[COLLECTION_MODEL_PREFIX.len()..].to_owned()))
        }
        Some(model) => Err(unknown_model(model)),
        None => Err(ApiError::InvalidJson(format!(
            "`model` is missing; bor serves one model, `{MODEL_ID}`"
        ))),
    }
}

/// The refusal of a model bor does not serve to this caller.
pub fn unknown_model(model: &str) -> ApiError {
    ApiError::NotFound(format!(
        "the model `{}` does not exist; bor serves `{MODEL_ID}` and `{COLLECTION_MODEL_PREFIX}<collection>` for each collection you can read (GET /v1/models)",
        prefix_chars(model, 100)
    ))
}

/// The trimmed text of the last message, which must be the user's.
fn question(message: &RequestMessage, index: usize, max_chars: usize) -> Result<String, ApiError> {
    let invalid = |what: String| ApiError::InvalidJson(format!("messages[{index}]: {what}"));
    if message.role != "user" {
        return Err(ApiError::InvalidHistory(format!(
            "the last message must be the user's question; messages[{index}] is a `{}` message",
            prefix_chars(&message.role, 40)
        )));
    }
    let text = text_content(message)
        .map_err(invalid)?
        .ok_or_else(|| invalid("`content` is missing".to_owned()))?;
    let question = text.trim();
    if question.is_empty() {
        return Err(ApiError::EmptyMessage);
    }
    if question.chars().count() > max_chars {
        return Err(ApiError::MessageTooLong { max: max_chars });
    }
    Ok(question.to_owned())
}

/// The user and assistant messages with text, the last [`HISTORY_LIMIT`] of them.
fn history(messages: &[RequestMessage]) -> Result<Vec<ChatMessage>, ApiError> {
    let mut history = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        let invalid = |what: String| ApiError::InvalidHistory(format!("messages[{index}]: {what}"));
        let role = message.role.as_str();
        if IGNORED_ROLES.contains(&role) {
            continue;
        }
        if role != "user" && role != "assistant" {
            return Err(invalid(format!(
                "`role` must be one of system, developer, user, assistant or tool, not `{}`",
                prefix_chars(role, 40)
            )));
        }
        // An assistant message that only called tools has no text: nothing to keep.
        let Some(text) = text_content(message).map_err(invalid)? else {
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        history.push(if role == "user" {
            ChatMessage::user(text)
        } else {
            ChatMessage::assistant(text)
        });
    }
    let excess = history.len().saturating_sub(HISTORY_LIMIT);
    history.drain(..excess);
    Ok(history)
}

/// A message's text: its `content` string, or its text parts joined by newlines;
/// `None` when it has no content.
fn text_content(message: &RequestMessage) -> Result<Option<String>, String> {
    let Some(content) = &message.content else {
        return Ok(None);
    };
    let content =
        MessageContent::deserialize(content).map_err(|error| format!("`content`: {error}"))?;
    match content {
        MessageContent::Text(text) => Ok(Some(text)),
        MessageContent::Parts(parts) => {
            let texts = parts
                .iter()
                .enumerate()
                .map(|(n, part)| text_part(part).map_err(|what| format!("content[{n}]: {what}")))
                .collect::<Result<Vec<&str>, String>>()?;
            Ok(Some(texts.join("\n")))
        }
    }
}

fn text_part(part: &ContentPart) -> Result<&str, String> {
    match (part.kind.as_str(), &part.text) {
        ("text", Some(text)) => Ok(text),
        ("text", None) => Err("a text part needs a string `text`".to_owned()),
        (kind, _) => Err(format!(
            "parts of type `{}` are not supported; bor takes text only",
            prefix_chars(kind, 40)
        )),
    }
}

/// At most `limit` characters of a client's string, for an error message.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::body::parse_json_body;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn parse(body: Value) -> Result<CompletionRequest, ApiError> {
        parse_completion_request(parse_json_body(&serde_json::to_vec(&body).unwrap())?, 10)
    }

    fn code(body: Value) -> &'static str {
        parse(body).unwrap_err().code()
    }

    fn with_messages(messages: Value) -> Value {
        json!({"model": "bor", "messages": messages})
    }

    #[test]
    fn the_last_message_is_the_question_and_the_user_and_assistant_ones_before_it_the_history() {
        let request = parse(json!({
            "model": "bor",
            "stream": true,
            "tools": [{"type": "function", "function": {"name": "x"}}],
            "temperature": 0.2,
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "First?"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c"}]},
                {"role": "tool", "tool_call_id": "c", "content": "{}"},
                {"role": "assistant", "content": [{"type": "text", "text": "First"}, {"type": "text", "text": "answer."}]},
                {"role": "developer", "content": "Ignored."},
                {"role": "user", "content": "   "},
                {"role": "user", "content": [{"type": "text", "text": "  And now? "}]}
            ]
        }))
        .unwrap();
        assert!(request.stream);
        assert_eq!(request.input.question, "And now?");
        assert_eq!(
            request.input.history,
            vec![
                ChatMessage::user("First?"),
                ChatMessage::assistant("First\nanswer.")
            ]
        );
        assert!(
            !parse(with_messages(json!([{"role": "user", "content": "q"}])))
                .unwrap()
                .stream
        );
    }

    #[test]
    fn the_history_keeps_the_last_twenty() {
        let mut messages: Vec<Value> = (0..25)
            .map(|n| json!({"role": "user", "content": format!("m{n}")}))
            .collect();
        messages.push(json!({"role": "user", "content": "q"}));
        let history = parse(with_messages(Value::Array(messages)))
            .unwrap()
            .input
            .history;
        assert_eq!(history.len(), HISTORY_LIMIT);
        assert_eq!(history[0], ChatMessage::user("m5"));
        assert_eq!(history[19], ChatMessage::user("m24"));
    }

    #[test]
    fn refusals_have_their_codes() {
        let user = |content: Value| with_messages(json!([{"role": "user", "content": content}]));
        assert_eq!(code(json!([])), "invalid_json");
        assert_eq!(code(json!({"messages": []})), "invalid_json");
        assert_eq!(code(json!({"model": 3, "messages": []})), "invalid_json");
        assert_eq!(
            code(json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "q"}]})),
            "not_found"
        );
        assert_eq!(code(json!({"model": "bor"})), "invalid_json");
        assert_eq!(code(with_messages(json!({}))), "invalid_json");
        assert_eq!(code(with_messages(json!([]))), "invalid_json");
        assert_eq!(
            code(
                json!({"model": "bor", "stream": "yes", "messages": [{"role": "user", "content": "q"}]})
            ),
            "invalid_json"
        );
        assert_eq!(code(with_messages(json!(["q"]))), "invalid_json");
        assert_eq!(
            code(with_messages(json!([{"content": "q"}]))),
            "invalid_json"
        );
        assert_eq!(
            code(with_messages(
                json!([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}])
            )),
            "invalid_history"
        );
        assert_eq!(
            code(with_messages(json!([{"role": "system", "content": "s"}]))),
            "invalid_history"
        );
        assert_eq!(code(user(Value::Null)), "invalid_json");
        assert_eq!(code(user(json!(5))), "invalid_json");
        assert_eq!(
            code(user(
                json!([{"type": "text", "text": "q"}, {"type": "image_url", "image_url": {"url": "data:"}}])
            )),
            "invalid_json"
        );
        assert_eq!(
            code(user(
                json!([{"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}])
            )),
            "invalid_json"
        );
        assert_eq!(code(user(json!([{"type": "text"}]))), "invalid_json");
        assert_eq!(code(user(json!([{"text": "q"}]))), "invalid_json");
        assert_eq!(code(user(json!(" \n"))), "empty_message");
        assert_eq!(code(user(json!([]))), "empty_message");
        assert_eq!(code(user(json!("12345678901"))), "message_too_long");
        assert_eq!(
            code(with_messages(json!([
                {"role": "wizard", "content": "x"},
                {"role": "user", "content": "q"}
            ]))),
            "invalid_history"
        );
        assert_eq!(
            code(with_messages(json!([
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
                {"role": "user", "content": "q"}
            ]))),
            "invalid_history"
        );
    }

    #[test]
    fn messages_name_what_is_wrong() {
        let message = |body: Value| parse(body).unwrap_err().to_string();
        assert!(message(json!({"model": "gpt-4o"})).contains("`gpt-4o` does not exist"));
        assert!(
            message(with_messages(
                json!([{"role": "user", "content": [{"type": "image_url"}]}])
            ))
            .contains("messages[0]: content[0]: parts of type `image_url` are not supported")
        );
        let long_model = "m".repeat(10_000);
        assert!(message(json!({"model": long_model})).len() < 300);
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|n| json!(n)),
            prop_oneof![
                Just("bor".to_owned()),
                Just("user".to_owned()),
                Just("assistant".to_owned()),
                Just("system".to_owned()),
                Just("text".to_owned()),
                Just("image_url".to_owned()),
                ".{0,12}",
            ]
            .prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop_oneof![
                            Just("model".to_owned()),
                            Just("messages".to_owned()),
                            Just("role".to_owned()),
                            Just("content".to_owned()),
                            Just("type".to_owned()),
                            Just("text".to_owned()),
                            Just("stream".to_owned()),
                            "[a-z]{1,6}",
                        ],
                        inner
                    ),
                    0..6
                )
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever a client sends, the request is read or refused with a 4xx; a turn
        /// that starts has a question within the limit and at most 20 history entries.
        #[test]
        fn any_body_is_read_or_refused_with_a_client_error(
            messages in prop::collection::vec(json_value(), 0..8),
            extra in json_value(),
        ) {
            let bodies = [
                json!({"model": "bor", "messages": messages.clone()}),
                json!({"model": "bor", "messages": messages, "stream": extra.clone()}),
                extra,
            ];
            for body in bodies {
                match parse(body) {
                    Ok(request) => {
                        prop_assert!(!request.input.question.is_empty());
                        prop_assert!(request.input.question.chars().count() <= 10);
                        prop_assert!(request.input.history.len() <= HISTORY_LIMIT);
                    }
                    Err(error) => {
                        use actix_web::ResponseError;
                        prop_assert!(error.status_code().is_client_error(), "{error:?}");
                    }
                }
            }
        }
    }
}
