//! The OpenAI-compatible API (docs/OPENAI.md; its essentials in docs/PROTOCOL.md,
//! "OpenAI-compatible API"): `GET /v1/models` and `POST /v1/chat/completions`, so that
//! any OpenAI client can use bor as a model. A completion is a turn of the same engine
//! as `POST /api/chat` (started through [`super::turn`]); only the reading of the
//! request and the encoding of its frames differ. Every error is in the OpenAI shape.

mod completion;
mod error;
mod request;
mod stream;
mod wire;

use actix_web::{Either, HttpRequest, HttpResponse, Responder, get, post, web};
use chrono::Utc;

use super::body::read_json_body;
use super::question::MAX_BODY_BYTES;
use super::turn::{event_stream, refuse_when_stopping, start_turn};
use crate::auth::Caller;
use crate::auth::access::Refusal;
use crate::state::AppState;
pub use error::OpenAiError;
use request::{ChatCompletionRequestBody, parse_completion_request};
pub use wire::OpenAiErrorBody;
use wire::{
    COLLECTION_MODEL_PREFIX, ChatCompletion, ChatCompletionChunk, CompletionHead, MODEL_ID, Model,
    ModelList,
};

/// The models bor serves this caller: `bor` (every collection they can read) and
/// `bor/<name>` for each of them.
#[utoipa::path(
    tag = "openai",
    responses((status = 200, description = "`bor`, then `bor/<collection>` for each readable collection", body = ModelList))
)]
#[get("/v1/models")]
pub async fn models(caller: Caller, state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(ModelList {
        object: "list",
        data: served_models(&caller, &state),
    })
}

/// One model by its id.
#[utoipa::path(
    tag = "openai",
    params(("model" = String, Path, description = "`bor` or `bor/<collection>`")),
    responses(
        (status = 200, description = "the model", body = Model),
        (status = 404, description = "`not_found`: not a model bor serves this caller", body = OpenAiErrorBody),
    )
)]
#[get("/v1/models/{model:.+}")]
pub async fn model(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, OpenAiError> {
    served_models(&caller, &state)
        .into_iter()
        .find(|model| model.id == id.as_str())
        .map(|model| HttpResponse::Ok().json(model))
        .ok_or_else(|| request::unknown_model(&id).into())
}

fn served_models(caller: &Caller, state: &AppState) -> Vec<Model> {
    let created = state.lifecycle.started_at().timestamp();
    let scoped = caller
        .readable
        .collections()
        .into_iter()
        .map(|(_, name, _)| Model::bor(format!("{COLLECTION_MODEL_PREFIX}{name}"), created));
    std::iter::once(Model::bor(MODEL_ID.to_owned(), created))
        .chain(scoped)
        .collect()
}

/// One chat turn as an OpenAI chat completion.
///
/// The turn is the one `POST /api/chat` runs (retrieval, tools, retries before the first
/// token, the scaffolding guardrail, the `query_log` row). With `stream: true` the
/// answer is `data:` lines of `chat.completion.chunk` objects: a first chunk with the
/// role, `content` and `reasoning_content` deltas, SSE comments for retries, tool calls
/// and keep-alives, a last chunk with `finish_reason: "stop"` and the `bor` extension
/// (turn id, path, sources), then `data: [DONE]`; a failed turn sends an error object
/// before `[DONE]`. With `stream: false` a failed turn is a 503, 502 or 500.
#[utoipa::path(
    tag = "openai",
    request_body(content = ChatCompletionRequestBody, content_type = "application/json"),
    responses(
        (status = 200, description = "`stream: false`: one completion; `stream: true`: its chunks as Server-Sent Events", content(
            (ChatCompletion = "application/json"),
            (ChatCompletionChunk = "text/event-stream"),
        )),
        (status = 400, description = "`invalid_json`, `invalid_history`, `empty_message` or `message_too_long`", body = OpenAiErrorBody),
        (status = 404, description = "`not_found`: a model other than `bor` and the caller's `bor/<collection>`", body = OpenAiErrorBody),
        (status = 413, description = "`body_too_large`: the body is over 256 KiB", body = OpenAiErrorBody),
        (status = 415, description = "`unsupported_media_type`: the body is not JSON", body = OpenAiErrorBody),
        (status = 500, description = "`internal` (`stream: false`)", body = OpenAiErrorBody),
        (status = 502, description = "`llm_interrupted`, `llm_rejected` or `malformed_reply` (`stream: false`)", body = OpenAiErrorBody),
        (status = 503, description = "`busy` (with `Retry-After`), `unavailable` (shutting down), or `llm_unavailable` (`stream: false`)", body = OpenAiErrorBody),
    )
)]
#[post("/v1/chat/completions")]
pub async fn chat_completions(
    caller: Caller,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<Either<impl Responder, web::Json<ChatCompletion>>, OpenAiError> {
    refuse_when_stopping(&state)?;
    let body: ChatCompletionRequestBody = read_json_body(
        &request,
        payload,
        MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let mut completion_request = parse_completion_request(body, state.config.max_message_chars)?;
    let named = completion_request.collection.take().map(|name| vec![name]);
    let scope = caller
        .readable
        .scope(named.as_deref())
        .map_err(|refusal| match refusal {
            Refusal::NoCollection(name) => {
                request::unknown_model(&format!("{COLLECTION_MODEL_PREFIX}{name}"))
            }
            other => other.into(),
        })?;
    completion_request.input.user_id = caller.user_row();
    completion_request.input.key_id = caller.key_id();
    let turn = start_turn(&state, completion_request.input, scope).await?;
    let head = CompletionHead::new(turn.turn_id, Utc::now().timestamp());
    if completion_request.stream {
        let events = stream::completion_stream(head, turn);
        return Ok(Either::Left(event_stream(
            events,
            state.config.sse_keepalive,
        )));
    }
    let completion = completion::complete(head, turn).await?;
    Ok(Either::Right(web::Json(completion)))
}
