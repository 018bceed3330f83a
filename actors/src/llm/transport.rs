//! HTTP to the LLM server over awc: one client per thread, timeouts on connect, on the
//! response head and on every silence of the body, and the upstream SSE stream turned
//! into decoded pieces.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Duration;

use awc::error::{ConnectError, PayloadError, SendRequestError};
use awc::http::header;
use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::stream::{self, LocalBoxStream, Stream, StreamExt};
use serde_json::Value;

use super::decode::{ChatStreamDecoder, StreamPiece, cut};
use super::error::AttemptError;
use super::settings::LlmSettings;
use super::types::ChatCompletion;

/// The longest stretch of an upstream stream without an event boundary that bor buffers;
/// a longer one is an unreadable stream, not an answer.
pub const MAX_EVENT_BYTES: usize = 1024 * 1024;

/// The most bor reads of a non-streamed response (embeddings, models, error bodies).
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

thread_local! {
    /// awc clients are not `Send`: one per thread and connect timeout, shared by the
    /// thread's actors so that connections are pooled.
    static CLIENTS: RefCell<Vec<(Duration, awc::Client)>> = const { RefCell::new(Vec::new()) };
}

fn client(connect_timeout: Duration) -> awc::Client {
    install_tls_provider();
    CLIENTS.with(|clients| {
        let mut clients = clients.borrow_mut();
        if let Some((_, client)) = clients.iter().find(|(t, _)| *t == connect_timeout) {
            return client.clone();
        }
        let connector = awc::Connector::new().timeout(connect_timeout).limit(0);
        let client = awc::Client::builder()
            .connector(connector)
            .disable_redirects()
            .finish();
        clients.push((connect_timeout, client.clone()));
        client
    })
}

/// rustls needs a process-wide crypto provider before the first TLS client is built
/// (`https://` base URLs); bor uses ring's.
fn install_tls_provider() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        // An error means another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// What an HTTP request to the LLM server is.
#[derive(Debug, Clone)]
pub enum Call {
    Post { path: &'static str, body: Bytes },
    Get { path: &'static str },
}

/// Sends the request and waits for a successful response head.
pub async fn send(
    settings: &LlmSettings,
    call: &Call,
) -> Result<
    awc::ClientResponse<impl Stream<Item = Result<Bytes, PayloadError>> + Unpin + use<>>,
    AttemptError,
> {
    let client = client(settings.connect_timeout);
    let mut request = match call {
        Call::Post { path, .. } => client
            .post(settings.url(path))
            .insert_header((header::CONTENT_TYPE, "application/json")),
        Call::Get { path } => client.get(settings.url(path)),
    }
    .insert_header((header::ACCEPT, "text/event-stream, application/json"))
    .timeout(settings.read_timeout);
    if let Some(key) = &settings.api_key {
        request = request.bearer_auth(key);
    }
    let sent = match call {
        Call::Post { body, .. } => request.send_body(body.clone()).await,
        Call::Get { .. } => request.send().await,
    };
    let mut response = sent.map_err(|err| send_error(err, settings))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let body =
        match tokio::time::timeout(settings.read_timeout, response.body().limit(MAX_BODY_BYTES))
            .await
        {
            Ok(Ok(bytes)) => error_body_text(&bytes),
            Ok(Err(err)) => format!("(unreadable body: {err})"),
            Err(_) => "(no body before the read timeout)".to_owned(),
        };
    Err(AttemptError::Status {
        status: status.as_u16(),
        body,
    })
}

fn send_error(err: SendRequestError, settings: &LlmSettings) -> AttemptError {
    match err {
        SendRequestError::Connect(ConnectError::Timeout) => {
            AttemptError::ConnectTimeout(settings.connect_timeout)
        }
        SendRequestError::Connect(err) => AttemptError::Connect(err.to_string()),
        SendRequestError::Timeout => AttemptError::ReadTimeout(settings.read_timeout),
        other => AttemptError::Broken(other.to_string()),
    }
}

/// The message of an error response: the OpenAI error object when there is one, else
/// FastAPI's `detail` (llama-cpp-python answers unknown paths with `{"detail": …}`), else
/// the text itself.
fn error_body_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match serde_json::from_str::<Value>(&text) {
        Ok(value) => match value.get("error").or_else(|| value.get("detail")) {
            Some(error) => super::decode::error_message(error),
            None => cut(text.trim()),
        },
        Err(_) => cut(text.trim()),
    }
}

/// Reads a whole JSON response body under the read timeout.
pub async fn read_json<S>(
    mut response: awc::ClientResponse<S>,
    settings: &LlmSettings,
) -> Result<Value, AttemptError>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin,
{
    let bytes = tokio::time::timeout(settings.read_timeout, response.body().limit(MAX_BODY_BYTES))
        .await
        .map_err(|_| AttemptError::ReadTimeout(settings.read_timeout))?
        .map_err(|err| AttemptError::Broken(err.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|err| {
        AttemptError::Invalid(format!(
            "not JSON ({err}): {}",
            cut(&String::from_utf8_lossy(&bytes))
        ))
    })
}

/// One item of a streamed chat attempt, in order; `Completed` or `Failed` is last.
#[derive(Debug)]
pub enum ChatStreamItem {
    Piece(StreamPiece),
    Completed(ChatCompletion),
    Failed(AttemptError),
}

/// Turns a successful chat response into pieces and its ending. A JSON (non-streamed)
/// answer is accepted too, for servers that ignore `stream: true`.
pub fn chat_stream<S>(
    response: awc::ClientResponse<S>,
    settings: &LlmSettings,
) -> LocalBoxStream<'static, ChatStreamItem>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin + 'static,
{
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("application/json") {
        let settings = settings.clone();
        return stream::once(async move { read_json(response, &settings).await })
            .flat_map(|result| stream::iter(whole_completion(result)))
            .boxed_local();
    }
    if !content_type.is_empty() && !content_type.starts_with("text/event-stream") {
        let failure = AttemptError::Invalid(format!(
            "expected an event stream, got content type {content_type}"
        ));
        return stream::iter([ChatStreamItem::Failed(failure)]).boxed_local();
    }
    sse_items(guarded_body(response, settings.read_timeout))
}

/// Pieces of a non-streamed completion, decoded like one big chunk.
fn whole_completion(result: Result<Value, AttemptError>) -> Vec<ChatStreamItem> {
    let value = match result {
        Ok(value) => value,
        Err(err) => return vec![ChatStreamItem::Failed(err)],
    };
    let mut decoder = ChatStreamDecoder::default();
    let mut pieces = Vec::new();
    if let Err(err) = decoder.decode(&value.to_string(), &mut pieces) {
        return vec![ChatStreamItem::Failed(err)];
    }
    let mut items: Vec<_> = pieces.into_iter().map(ChatStreamItem::Piece).collect();
    items.push(ChatStreamItem::Completed(decoder.finish()));
    items
}

/// The response body with a read timeout on every wait and a bound on how much may
/// arrive without an event boundary (a blank line).
fn guarded_body<S>(
    response: awc::ClientResponse<S>,
    read_timeout: Duration,
) -> LocalBoxStream<'static, Result<Bytes, AttemptError>>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin + 'static,
{
    let state = (response, EventBoundaryGuard::default(), false);
    stream::unfold(state, move |(mut body, mut guard, failed)| async move {
        if failed {
            return None;
        }
        let item = match tokio::time::timeout(read_timeout, body.next()).await {
            Err(_) => Err(AttemptError::ReadTimeout(read_timeout)),
            Ok(None) => return None,
            Ok(Some(Err(err))) => Err(AttemptError::Broken(err.to_string())),
            Ok(Some(Ok(bytes))) => guard.check(&bytes).map(|()| bytes),
        };
        let failed = item.is_err();
        Some((item, (body, guard, failed)))
    })
    .boxed_local()
}

/// Counts bytes since the last blank line of an SSE stream.
#[derive(Debug, Default)]
struct EventBoundaryGuard {
    since_boundary: usize,
    /// The previous byte ended a line (ignoring `\r`).
    at_line_start: bool,
}

impl EventBoundaryGuard {
    fn check(&mut self, bytes: &[u8]) -> Result<(), AttemptError> {
        for &byte in bytes {
            match byte {
                b'\n' if self.at_line_start => self.since_boundary = 0,
                b'\n' => self.at_line_start = true,
                b'\r' => {}
                _ => {
                    self.at_line_start = false;
                    self.since_boundary += 1;
                }
            }
        }
        if self.since_boundary > MAX_EVENT_BYTES {
            return Err(AttemptError::Invalid(format!(
                "an event of the stream is longer than {MAX_EVENT_BYTES} bytes"
            )));
        }
        Ok(())
    }
}

/// Parses SSE events and decodes each one's data.
fn sse_items(
    body: LocalBoxStream<'static, Result<Bytes, AttemptError>>,
) -> LocalBoxStream<'static, ChatStreamItem> {
    struct State {
        events: LocalBoxStream<'static, Result<String, AttemptError>>,
        decoder: Option<ChatStreamDecoder>,
        pending: VecDeque<ChatStreamItem>,
    }
    let events = body
        .eventsource()
        .map(|event| match event {
            Ok(event) => Ok(event.data),
            Err(EventStreamError::Transport(err)) => Err(err),
            Err(EventStreamError::Utf8(err)) => Err(AttemptError::Invalid(err.to_string())),
            Err(EventStreamError::Parser(err)) => Err(AttemptError::Invalid(err.to_string())),
        })
        .boxed_local();
    let state = State {
        events,
        decoder: Some(ChatStreamDecoder::default()),
        pending: VecDeque::new(),
    };
    stream::unfold(state, |mut state| async move {
        loop {
            if let Some(item) = state.pending.pop_front() {
                return Some((item, state));
            }
            let decoder = state.decoder.as_mut()?;
            let ending = match state.events.next().await {
                Some(Ok(data)) => {
                    let mut pieces = Vec::new();
                    match decoder.decode(&data, &mut pieces) {
                        Ok(()) => {
                            state
                                .pending
                                .extend(pieces.into_iter().map(ChatStreamItem::Piece));
                            if !decoder.saw_done() {
                                continue;
                            }
                            None
                        }
                        Err(err) => Some(err),
                    }
                }
                // Silence after a finish_reason: the answer is complete.
                Some(Err(AttemptError::ReadTimeout(_))) if decoder.is_complete() => None,
                Some(Err(err)) => Some(err),
                None if decoder.is_complete() => None,
                None => Some(AttemptError::Broken(
                    "the stream ended without [DONE] or a finish_reason".to_owned(),
                )),
            };
            let decoder = state.decoder.take()?;
            state.pending.push_back(match ending {
                None => ChatStreamItem::Completed(decoder.finish()),
                Some(err) => ChatStreamItem::Failed(err),
            });
        }
    })
    .boxed_local()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_resets_at_blank_lines() {
        let mut guard = EventBoundaryGuard::default();
        let event = format!("data: {}\n\n", "x".repeat(MAX_EVENT_BYTES / 2));
        for _ in 0..5 {
            guard.check(event.as_bytes()).unwrap();
        }
        let mut guard = EventBoundaryGuard::default();
        let crlf = format!("data: {}\r\n\r\n", "x".repeat(MAX_EVENT_BYTES / 2));
        for _ in 0..5 {
            guard.check(crlf.as_bytes()).unwrap();
        }
    }

    #[test]
    fn guard_refuses_an_endless_event() {
        let mut guard = EventBoundaryGuard::default();
        let line = format!("data: {}\n", "x".repeat(MAX_EVENT_BYTES / 4));
        let mut result = Ok(());
        for _ in 0..5 {
            result = result.and_then(|()| guard.check(line.as_bytes()));
        }
        assert!(matches!(result, Err(AttemptError::Invalid(_))));
    }

    #[test]
    fn error_bodies_show_the_error_message() {
        assert_eq!(
            error_body_text(br#"{"error":{"message":"model not found","code":404}}"#),
            "model not found"
        );
        assert_eq!(error_body_text(b"  plain failure \n"), "plain failure");
        assert_eq!(error_body_text(br#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(
            error_body_text(b"Internal Server Error"),
            "Internal Server Error"
        );
    }
}
