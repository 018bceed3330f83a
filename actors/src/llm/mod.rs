//! The LlmActor: owns every request to the LLM server (streaming chat completions,
//! embeddings, the model list), the retry policy (docs/PROTOCOL.md, "Retry policy")
//! and the timers between attempts. One actor serves one requester; stopping it (or the
//! requester going away) drops the HTTP request in flight and cancels a pending retry.

mod decode;
mod error;
mod handle;
mod messages;
mod settings;
mod sse;
mod transport;
mod types;

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use bytes::Bytes;
use futures_util::stream::{self, Stream, StreamExt};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::Notify;

pub use decode::{ChatStreamDecoder, StreamPiece};
pub use error::{AttemptError, LlmError};
pub use handle::LlmClient;
pub use messages::{ChatRequest, EmbedPurpose, LlmCommand, LlmEvent};
pub use settings::{EmbedPrefixes, LlmSettings, RerankServer, StreamUsage};
pub use sse::{MAX_EVENT_BYTES, SseError, SseFramer};
pub use transport::install_tls_provider;
pub use types::{ChatCompletion, ChatMessage, FunctionCall, Role, ToolCall, Usage};

use crate::metrics::{self, LlmEndpoint, metrics};
use transport::{Call, ChatStreamItem};

/// How often the actor checks that its requester still exists.
const REQUESTER_CHECK_INTERVAL: Duration = Duration::from_millis(200);

/// Stream pieces forwarded ahead of the requester's [`LlmCommand::Relayed`]
/// acknowledgements. Past this the actor stops reading the upstream body, so a fast LLM
/// server meets the pace of a slower client through TCP instead of filling memory.
pub const RELAY_WINDOW: usize = 256;

pub struct LlmActor {
    settings: Arc<LlmSettings>,
    requester: Recipient<LlmEvent>,
    job: Option<Job>,
    /// A child of the span current at creation (a turn's), entered while it works.
    span: tracing::Span,
    window: Rc<RelayWindow>,
}

/// Pieces forwarded and not yet acknowledged, shared with the reading of the stream.
#[derive(Default)]
struct RelayWindow {
    outstanding: Cell<usize>,
    room: Notify,
}

impl RelayWindow {
    fn forwarded(&self) {
        self.outstanding.set(self.outstanding.get() + 1);
    }

    fn relayed(&self, pieces: usize) {
        self.outstanding
            .set(self.outstanding.get().saturating_sub(pieces));
        if self.outstanding.get() < RELAY_WINDOW {
            self.room.notify_one();
        }
    }

    /// A new request starts with the whole window.
    fn reset(&self) {
        self.relayed(usize::MAX);
    }

    async fn wait_for_room(&self) {
        while self.outstanding.get() >= RELAY_WINDOW {
            self.room.notified().await;
        }
    }
}

/// The request in flight, across its attempts.
struct Job {
    kind: JobKind,
    call: Call,
    /// Retries already started (the first attempt is not a retry).
    retries_done: u32,
    /// Some of this request's output reached the requester: a failure is now terminal.
    forwarded: bool,
    /// The running attempt or the pending retry timer.
    handle: Option<SpawnHandle>,
    /// When the running attempt started; `None` while a retry waits.
    attempt_started: Option<Instant>,
    /// The HTTP status of the running attempt's response, once its head arrived.
    http_status: Option<u16>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JobKind {
    Chat,
    Embed {
        inputs: usize,
    },
    /// Probes are answered at once: no retries.
    ListModels,
    /// One attempt: a failed re-rank falls back to the fused order, it is not retried.
    Rerank {
        documents: usize,
    },
}

impl JobKind {
    fn endpoint(self) -> LlmEndpoint {
        match self {
            Self::Chat => LlmEndpoint::Chat,
            Self::Embed { .. } => LlmEndpoint::Embeddings,
            Self::ListModels => LlmEndpoint::Models,
            Self::Rerank { .. } => LlmEndpoint::Rerank,
        }
    }

    /// Failures of this kind are final at once.
    fn single_attempt(self) -> bool {
        matches!(self, Self::ListModels | Self::Rerank { .. })
    }
}

impl Job {
    /// Records the end of the running attempt (if one runs) in the metrics.
    fn end_attempt(&mut self, status: &str) {
        if let Some(started) = self.attempt_started.take() {
            metrics().observe_llm_attempt(self.kind.endpoint(), status, started.elapsed());
        }
        self.http_status = None;
    }
}

impl LlmActor {
    /// Its log span is a child of the current span: a turn starts its LLM actor inside
    /// its own, so the turn's id is on the LLM actor's lines too.
    pub fn new(settings: Arc<LlmSettings>, requester: Recipient<LlmEvent>) -> Self {
        Self {
            settings,
            requester,
            job: None,
            span: tracing::info_span!("llm"),
            window: Rc::default(),
        }
    }

    fn report(&mut self, event: LlmEvent, ctx: &mut Context<Self>) {
        if self.requester.connected() {
            self.requester.do_send(event);
        } else {
            ctx.stop();
        }
    }

    fn cancel_job(&mut self, ctx: &mut Context<Self>) {
        let Some(mut job) = self.job.take() else {
            return;
        };
        job.end_attempt(metrics::CANCELLED);
        if let Some(handle) = job.handle {
            ctx.cancel_future(handle);
        }
    }

    fn start_attempt(&mut self, ctx: &mut Context<Self>) {
        let Some(job) = self.job.as_mut() else {
            return;
        };
        job.attempt_started = Some(Instant::now());
        let settings = Arc::clone(&self.settings);
        let call = job.call.clone();
        let kind = job.kind;
        let attempt = async move { transport::send(&settings, &call).await }
            .into_actor(self)
            .map(move |result, act, ctx| match result {
                Ok(response) => act.read_response(kind, response, ctx),
                Err(err) => act.attempt_failed(err, ctx),
            });
        let handle = ctx.spawn(attempt);
        if let Some(job) = self.job.as_mut() {
            job.handle = Some(handle);
        }
    }

    fn read_response<S>(
        &mut self,
        kind: JobKind,
        response: awc::ClientResponse<S>,
        ctx: &mut Context<Self>,
    ) where
        S: Stream<Item = Result<Bytes, awc::error::PayloadError>> + Unpin + 'static,
    {
        if let Some(job) = self.job.as_mut() {
            job.http_status = Some(response.status().as_u16());
        }
        let handle = match kind {
            JobKind::Chat => {
                // The next item is read only while the window has room.
                let items = transport::chat_stream(response, &self.settings);
                let window = Rc::clone(&self.window);
                let paced = stream::unfold((items, window), |(mut items, window)| async move {
                    window.wait_for_room().await;
                    let item = items.next().await?;
                    Some((item, (items, window)))
                });
                ctx.spawn(
                    paced
                        .into_actor(self)
                        .map(|item, act, ctx| act.on_chat_item(item, ctx))
                        .finish(),
                )
            }
            JobKind::Embed { inputs } => {
                let settings = Arc::clone(&self.settings);
                ctx.spawn(
                    async move {
                        let body = transport::read_json(response, &settings).await?;
                        parse_embeddings(&body, inputs)
                    }
                    .into_actor(self)
                    .map(|result, act, ctx| match result {
                        Ok(vectors) => act.succeed(LlmEvent::Embedded(vectors), ctx),
                        Err(err) => act.attempt_failed(err, ctx),
                    }),
                )
            }
            JobKind::Rerank { documents } => {
                let settings = Arc::clone(&self.settings);
                ctx.spawn(
                    async move {
                        let body = transport::read_json(response, &settings).await?;
                        parse_rerank_scores(&body, documents)
                    }
                    .into_actor(self)
                    .map(|result, act, ctx| match result {
                        Ok(scores) => act.succeed(LlmEvent::Reranked(scores), ctx),
                        Err(err) => act.attempt_failed(err, ctx),
                    }),
                )
            }
            JobKind::ListModels => {
                let settings = Arc::clone(&self.settings);
                ctx.spawn(
                    async move {
                        let body = transport::read_json(response, &settings).await?;
                        parse_model_ids(&body)
                    }
                    .into_actor(self)
                    .map(|result, act, ctx| match result {
                        Ok(ids) => act.succeed(LlmEvent::Models(ids), ctx),
                        Err(err) => act.attempt_failed(err, ctx),
                    }),
                )
            }
        };
        if let Some(job) = self.job.as_mut() {
            job.handle = Some(handle);
        }
    }

    fn on_chat_item(&mut self, item: ChatStreamItem, ctx: &mut Context<Self>) {
        match item {
            ChatStreamItem::Piece(piece) => {
                if let Some(job) = self.job.as_mut() {
                    job.forwarded = true;
                }
                self.window.forwarded();
                let event = match piece {
                    StreamPiece::Content(text) => LlmEvent::Content(text),
                    StreamPiece::Reasoning(text) => LlmEvent::Reasoning(text),
                };
                self.report(event, ctx);
            }
            ChatStreamItem::Completed(completion) => {
                self.succeed(LlmEvent::ChatDone(completion), ctx)
            }
            ChatStreamItem::Failed(err) => self.attempt_failed(err, ctx),
        }
    }

    fn succeed(&mut self, event: LlmEvent, ctx: &mut Context<Self>) {
        if let Some(mut job) = self.job.take() {
            let status = job.http_status.unwrap_or(200).to_string();
            job.end_attempt(&status);
        }
        self.report(event, ctx);
    }

    /// The retry policy (docs/PROTOCOL.md, "Retry policy"): retry only while nothing
    /// was forwarded, only retryable failures, at most `retries` times, a flat delay
    /// apart.
    fn attempt_failed(&mut self, err: AttemptError, ctx: &mut Context<Self>) {
        let span = self.span.clone();
        let _entered = span.enter();
        let Some(job) = self.job.as_mut() else {
            return;
        };
        let err = err.without_secret(self.settings.api_key_for(job.call.path()));
        let err = match job.kind {
            JobKind::Embed { .. } => err.of_embeddings_request(&self.settings.embeddings_fix),
            JobKind::Chat | JobKind::ListModels | JobKind::Rerank { .. } => err,
        };
        job.end_attempt(&err.metric_label());
        if job.kind == JobKind::Chat
            && !job.forwarded
            && refuses_stream_options(&err)
            && let Some(call) = without_stream_options(&job.call)
        {
            tracing::warn!(error = %err, "the LLM server refuses `stream_options`; asking without it from now on (token counts are estimated when it reports none)");
            self.settings.stream_usage.refused_by_server();
            job.call = call;
            self.start_attempt(ctx);
            return;
        }
        let max = self.settings.retries;
        let attempts = job.retries_done + 1;
        let failure = if job.forwarded {
            Err(LlmError::Interrupted(err))
        } else if !err.is_retryable() {
            Err(LlmError::Rejected(err))
        } else if job.kind.single_attempt() || job.retries_done >= max {
            Err(LlmError::Unavailable {
                attempts,
                last: err,
            })
        } else {
            Ok(err)
        };
        let err = match failure {
            Ok(retryable) => retryable,
            Err(failure) => {
                tracing::warn!(attempts, error = %failure, "LLM request failed");
                self.job = None;
                self.report(LlmEvent::Failed(failure), ctx);
                return;
            }
        };
        job.retries_done += 1;
        let attempt = job.retries_done;
        tracing::warn!(attempt, max, error = %err, "LLM request failed; retrying");
        job.handle =
            Some(ctx.run_later(self.settings.retry_delay, |act, ctx| act.start_attempt(ctx)));
        self.report(LlmEvent::Retrying { attempt, max }, ctx);
    }

    fn begin(&mut self, kind: JobKind, call: Call, ctx: &mut Context<Self>) {
        self.window.reset();
        self.job = Some(Job {
            kind,
            call,
            retries_done: 0,
            forwarded: false,
            handle: None,
            attempt_started: None,
            http_status: None,
        });
        self.start_attempt(ctx);
    }
}

impl Actor for LlmActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(REQUESTER_CHECK_INTERVAL, |act, ctx| {
            if !act.requester.connected() {
                ctx.stop();
            }
        });
    }
}

impl Handler<LlmCommand> for LlmActor {
    type Result = ();

    fn handle(&mut self, command: LlmCommand, ctx: &mut Self::Context) {
        if let LlmCommand::Relayed(pieces) = command {
            self.window.relayed(pieces);
            return;
        }
        let span = self.span.clone();
        let _entered = span.enter();
        self.cancel_job(ctx);
        let settings = &self.settings;
        let (kind, body) = match command {
            LlmCommand::Cancel | LlmCommand::Relayed(_) => return,
            LlmCommand::ListModels => {
                self.begin(JobKind::ListModels, Call::Get { path: "models" }, ctx);
                return;
            }
            LlmCommand::Rerank { query, documents } => {
                let Some(server) = &settings.rerank else {
                    let failure = LlmError::Rejected(AttemptError::Invalid(
                        "no re-ranking server is set (BOR_RERANK_BASE_URL)".to_owned(),
                    ));
                    self.report(LlmEvent::Failed(failure), ctx);
                    return;
                };
                (
                    JobKind::Rerank {
                        documents: documents.len(),
                    },
                    serde_json::to_vec(&RerankBody {
                        model: server.model.as_deref(),
                        query: &query,
                        documents: &documents,
                        texts: &documents,
                    }),
                )
            }
            LlmCommand::Chat(request) => (
                JobKind::Chat,
                serde_json::to_vec(&ChatBody {
                    model: &settings.chat_model,
                    messages: &request.messages,
                    stream: true,
                    tools: request.tools.as_deref(),
                    stream_options: settings.stream_usage.asked().then_some(StreamOptions {
                        include_usage: true,
                    }),
                    temperature: settings.temperature,
                    max_tokens: settings.max_tokens,
                }),
            ),
            LlmCommand::Embed { inputs, purpose } => (
                JobKind::Embed {
                    inputs: inputs.len(),
                },
                serde_json::to_vec(&EmbedBody {
                    model: &settings.embed_model,
                    input: &settings.embed_prefixes.applied(purpose, inputs),
                }),
            ),
        };
        let path = match kind {
            JobKind::Embed { .. } => settings::EMBEDDINGS_PATH,
            JobKind::Rerank { .. } => settings::RERANK_PATH,
            _ => "chat/completions",
        };
        match body {
            Ok(body) => self.begin(
                kind,
                Call::Post {
                    path,
                    body: Bytes::from(body),
                },
                ctx,
            ),
            Err(err) => {
                let failure = LlmError::Rejected(AttemptError::Invalid(err.to_string()));
                self.report(LlmEvent::Failed(failure), ctx);
            }
        }
    }
}

/// The `/rerank` request. The texts go as `documents` (llama.cpp, vLLM, Jina, Cohere)
/// and as `texts` (TEI); each server reads its own name.
#[derive(Serialize)]
struct RerankBody<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    query: &'a str,
    documents: &'a [String],
    texts: &'a [String],
}

#[derive(Serialize)]
struct ChatBody<'a> {
    model: &'a str,
    messages: &'a [ChatMessage],
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a [Value]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
}

/// Asks for a last chunk with the request's token counts.
#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct EmbedBody<'a> {
    model: &'a str,
    input: &'a [String],
}

/// An HTTP 400 that names `stream_options`: a server that does not know the field.
fn refuses_stream_options(err: &AttemptError) -> bool {
    matches!(err, AttemptError::Status { status: 400, body } if body.contains("stream_options"))
}

/// The same chat request without `stream_options`; `None` when it has none.
fn without_stream_options(call: &Call) -> Option<Call> {
    let Call::Post { path, body } = call else {
        return None;
    };
    let mut json: serde_json::Map<String, Value> = serde_json::from_slice(body).ok()?;
    json.remove("stream_options")?;
    let body = serde_json::to_vec(&json).ok()?;
    Some(Call::Post {
        path,
        body: Bytes::from(body),
    })
}

/// One vector per input, in input order (`data[].index`), from an embeddings response.
fn parse_embeddings(body: &Value, inputs: usize) -> Result<Vec<Vec<f32>>, AttemptError> {
    let invalid = |what: &str| AttemptError::Invalid(format!("embeddings response: {what}"));
    let data = body
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("no `data` array"))?;
    if data.len() != inputs {
        return Err(invalid(&format!(
            "{} vectors for {inputs} inputs",
            data.len()
        )));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; inputs];
    for (position, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(position, |i| i as usize);
        let vector = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid("an item has no `embedding` array"))?
            .iter()
            .map(|x| x.as_f64().map(|x| x as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| invalid("an embedding is not a flat list of numbers"))?;
        if vector.is_empty() {
            return Err(invalid("an embedding is empty"));
        }
        let slot = vectors
            .get_mut(index)
            .ok_or_else(|| invalid("an index is out of range"))?;
        *slot = Some(vector);
    }
    vectors
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| invalid("an index is repeated"))
}

/// One score per document, in document order, from a `/rerank` response: the
/// `results` of llama.cpp, vLLM, Jina and Cohere (`relevance_score`) or TEI's bare array
/// (`score`), each document exactly once.
fn parse_rerank_scores(body: &Value, documents: usize) -> Result<Vec<f32>, AttemptError> {
    let invalid = |what: &str| AttemptError::Invalid(format!("rerank response: {what}"));
    let results = body
        .get("results")
        .unwrap_or(body)
        .as_array()
        .ok_or_else(|| invalid("no `results` array"))?;
    if results.len() != documents {
        return Err(invalid(&format!(
            "{} scores for {documents} documents",
            results.len()
        )));
    }
    let mut scores: Vec<Option<f32>> = vec![None; documents];
    for result in results {
        let index = result
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|index| usize::try_from(index).ok())
            .ok_or_else(|| invalid("a result has no `index`"))?;
        let score = result
            .get("relevance_score")
            .or_else(|| result.get("score"))
            .and_then(Value::as_f64)
            .ok_or_else(|| invalid("a result has no `relevance_score` or `score`"))?;
        let slot = scores
            .get_mut(index)
            .ok_or_else(|| invalid("an index is out of range"))?;
        *slot = Some(score as f32);
    }
    scores
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| invalid("an index is repeated"))
}

fn parse_model_ids(body: &Value) -> Result<Vec<String>, AttemptError> {
    let data = body
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| AttemptError::Invalid("models response: no `data` array".to_owned()))?;
    Ok(data
        .iter()
        .filter_map(|model| model.get("id").and_then(Value::as_str))
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rerank_scores_are_read_in_document_order_from_either_shape() {
        let jina = json!({"model": "m", "results": [
            {"index": 1, "relevance_score": 0.9},
            {"index": 0, "relevance_score": -2.5},
        ]});
        assert_eq!(parse_rerank_scores(&jina, 2).unwrap(), vec![-2.5, 0.9]);
        let tei = json!([{"index": 0, "score": 0.25}, {"index": 1, "score": 0.5}]);
        assert_eq!(parse_rerank_scores(&tei, 2).unwrap(), vec![0.25, 0.5]);
        for body in [
            json!({}),
            json!({"results": [{"index": 0, "relevance_score": 1.0}]}),
            json!({"results": [{"index": 0}, {"index": 1, "relevance_score": 1.0}]}),
            json!({"results": [{"index": 0, "score": 1.0}, {"index": 0, "score": 1.0}]}),
            json!({"results": [{"index": 0, "score": 1.0}, {"index": 2, "score": 1.0}]}),
            json!({"results": [{"index": -1, "score": 1.0}, {"index": 1, "score": 1.0}]}),
            json!({"results": [{"index": 0, "score": "high"}, {"index": 1, "score": 1.0}]}),
        ] {
            assert!(parse_rerank_scores(&body, 2).is_err(), "{body}");
        }
    }

    #[test]
    fn embeddings_are_ordered_by_index() {
        let body = json!({"data": [
            {"index": 1, "embedding": [0.0, 1.0]},
            {"index": 0, "embedding": [1.0, 0.0]},
        ]});
        assert_eq!(
            parse_embeddings(&body, 2).unwrap(),
            vec![vec![1.0, 0.0], vec![0.0, 1.0]]
        );
    }

    #[test]
    fn malformed_embeddings_are_invalid() {
        for body in [
            json!({}),
            json!({"data": [{"index": 0, "embedding": [1.0]}]}),
            json!({"data": [{"index": 0, "embedding": [[1.0]]}, {"index": 1, "embedding": [1.0]}]}),
            json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}),
            json!({"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": [1.0]}]}),
        ] {
            assert!(
                matches!(parse_embeddings(&body, 2), Err(AttemptError::Invalid(_))),
                "{body}"
            );
        }
    }

    #[test]
    fn a_refused_stream_options_is_left_out_of_the_next_attempt() {
        let refusal = AttemptError::Status {
            status: 400,
            body: "Unrecognized request argument supplied: stream_options".into(),
        };
        assert!(refuses_stream_options(&refusal));
        let other = AttemptError::Status {
            status: 400,
            body: "bad model".into(),
        };
        assert!(!refuses_stream_options(&other));
        let call = Call::Post {
            path: "chat/completions",
            body: Bytes::from_static(
                br#"{"model":"m","stream":true,"stream_options":{"include_usage":true}}"#,
            ),
        };
        let Some(Call::Post { body, .. }) = without_stream_options(&call) else {
            panic!("a chat call");
        };
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body, json!({"model": "m", "stream": true}));
        assert!(
            without_stream_options(&Call::Post {
                path: "chat/completions",
                body: Bytes::from_static(br#"{"model":"m"}"#),
            })
            .is_none()
        );
    }

    #[test]
    fn model_ids_are_listed() {
        let body = json!({"object": "list", "data": [{"id": "a"}, {"id": "b"}, {"x": 1}]});
        assert_eq!(parse_model_ids(&body).unwrap(), vec!["a", "b"]);
    }

    #[test]
    fn chat_body_has_no_tools_key_when_tools_free() {
        let messages = vec![ChatMessage::system("s"), ChatMessage::user("q")];
        let body = serde_json::to_value(ChatBody {
            model: "m",
            messages: &messages,
            stream: true,
            stream_options: Some(StreamOptions {
                include_usage: true,
            }),
            tools: None,
            temperature: None,
            max_tokens: Some(512),
        })
        .unwrap();
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert!(body.get("tools").is_none());
        assert!(body.get("temperature").is_none(), "left to the server");
        assert_eq!(body["max_tokens"], json!(512));
        assert_eq!(body["messages"][1], json!({"role": "user", "content": "q"}));
        assert_eq!(body["stream"], json!(true));
    }
}
