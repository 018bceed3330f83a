//! HTTP to the LLM server over awc: one client per thread, timeouts on connect, on the
//! response head and on every silence of the body, and the upstream SSE stream turned
//! into decoded pieces.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Duration;

use actix_rt::net::TcpStream;
use actix_service::ServiceExt;
use awc::error::{ConnectError, PayloadError, SendRequestError};
use awc::http::{Uri, header};
use bytes::Bytes;
use futures_util::stream::{self, LocalBoxStream, Stream, StreamExt};
use serde_json::Value;

use super::decode::{ChatStreamDecoder, StreamPiece, cut};
use super::error::AttemptError;
use super::settings::LlmSettings;
use super::sse::SseFramer;
use super::types::ChatCompletion;

/// The most bor reads of a non-streamed response (embeddings, models, a chat answer
/// from a server that does not stream): a batch of embeddings is about 2 MB; a longer
/// body fails the attempt instead of growing bor's memory (docs/LIMITS.md).
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// The most bor reads of an error response: only its message is kept.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;
/// After `[DONE]`, how long and how much of the rest of a stream's body is read (its
/// chunked ending, at most a little more) so that its connection goes back to the pool:
/// a response dropped before its end closes the connection, and a new one costs a
/// connect on both sides for the next request.
const RELEASE_WAIT: Duration = Duration::from_secs(1);
const RELEASE_MAX_BYTES: usize = 64 * 1024;

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
        // awc writes a request's head and body separately: without TCP_NODELAY the body
        // waits for the server's delayed ACK of the head (40 ms on Linux).
        let tcp = actix_tls::connect::Connector::default().service().map(
            |connection: actix_tls::connect::Connection<Uri, TcpStream>| {
                if let Err(err) = connection.io_ref().set_nodelay(true) {
                    tracing::warn!(error = %err, "could not set TCP_NODELAY towards the LLM server");
                }
                connection
            },
        );
        let connector = awc::Connector::new()
            .connector(tcp)
            .timeout(connect_timeout)
            .limit(0);
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
pub fn install_tls_provider() {
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

impl Call {
    /// The path below the base URL.
    pub fn path(&self) -> &'static str {
        match self {
            Call::Post { path, .. } | Call::Get { path } => path,
        }
    }
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
    if let Some(key) = settings.api_key_for(call.path()) {
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
    let body = match tokio::time::timeout(
        settings.read_timeout,
        response.body().limit(MAX_ERROR_BODY_BYTES),
    )
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
        .map_err(|err| match err {
            PayloadError::Overflow => AttemptError::Invalid(format!(
                "a response body longer than {MAX_BODY_BYTES} bytes"
            )),
            err => AttemptError::Broken(err.to_string()),
        })?;
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
    sse_items(response, settings.read_timeout)
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

/// Reads the event stream of a chat response; events are framed and decoded as the
/// bytes arrive. The read timeout is the silence tolerated between decoded pieces:
/// keep-alive comments, blank lines and empty chunks do not reset it, so an upstream
/// that only keeps the connection busy holds the turn no longer than that.
fn sse_items<S>(
    response: awc::ClientResponse<S>,
    read_timeout: Duration,
) -> LocalBoxStream<'static, ChatStreamItem>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin + 'static,
{
    struct State<S> {
        /// `None` once the stream ended.
        body: Option<awc::ClientResponse<S>>,
        framer: SseFramer,
        /// `None` once the ending (`Completed` or `Failed`) is queued.
        decoder: Option<ChatStreamDecoder>,
        pieces: Vec<StreamPiece>,
        pending: VecDeque<ChatStreamItem>,
        /// When the silence since the last piece (or the start) is too long.
        deadline: tokio::time::Instant,
    }
    let state = State {
        body: Some(response),
        framer: SseFramer::new(),
        decoder: Some(ChatStreamDecoder::default()),
        pieces: Vec::new(),
        pending: VecDeque::new(),
        deadline: tokio::time::Instant::now() + read_timeout,
    };
    stream::unfold(state, move |mut state| async move {
        loop {
            if let Some(item) = state.pending.pop_front() {
                return Some((item, state));
            }
            let decoder = state.decoder.as_mut()?;
            let body = state.body.as_mut()?;
            let ending = match tokio::time::timeout_at(state.deadline, body.next()).await {
                Ok(Some(Ok(bytes))) => {
                    let progress_before = decoder.progress();
                    let pieces = &mut state.pieces;
                    let framed = state.framer.push(&bytes, |data| {
                        // Nothing after `[DONE]` is read.
                        if decoder.saw_done() {
                            return Ok(());
                        }
                        decoder.decode(data, pieces)
                    });
                    if decoder.progress() != progress_before {
                        state.deadline = tokio::time::Instant::now() + read_timeout;
                    }
                    state
                        .pending
                        .extend(state.pieces.drain(..).map(ChatStreamItem::Piece));
                    match framed {
                        Ok(()) if !decoder.saw_done() => continue,
                        Ok(()) => {
                            if let Some(body) = state.body.take() {
                                actix_rt::spawn(release(body));
                            }
                            None
                        }
                        Err(err) => Some(err),
                    }
                }
                Ok(Some(Err(err))) => Some(AttemptError::Broken(err.to_string())),
                // Silence or the end after a finish_reason: the answer is complete.
                Err(_) | Ok(None) if decoder.is_complete() => None,
                Err(_) => Some(AttemptError::ReadTimeout(read_timeout)),
                Ok(None) => Some(AttemptError::Broken(
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

/// Reads what is left of a stream's body after `[DONE]`, within [`RELEASE_WAIT`] and
/// [`RELEASE_MAX_BYTES`], so that a body that ends returns its connection to the pool.
async fn release<S>(mut body: awc::ClientResponse<S>)
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin,
{
    let rest = async {
        let mut read = 0;
        while let Some(Ok(bytes)) = body.next().await {
            read += bytes.len();
            if read > RELEASE_MAX_BYTES {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(RELEASE_WAIT, rest).await;
}

#[cfg(test)]
mod tests {
    use super::*;

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
