//! The accept loop, one task per connection, routing, and the state tests read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};

use crate::RecordedRequest;
use crate::config::Config;
use crate::http::{self, ClientGone, Connection, Framing, ReadError, Request};
use crate::reply::{EventStream, KEEPALIVE_INTERVAL, Reply, Response, StreamEnd};
use crate::text::{fnv1a, fnv1a_of_parts};
use crate::{chat, embeddings, rerank};

/// Pause after a failed accept (e.g. out of file descriptors) before trying again.
const ACCEPT_RETRY_PAUSE: Duration = Duration::from_millis(10);

/// State shared by the server tasks and the `MockLlm` handle.
pub(crate) struct Shared {
    pub config: Config,
    log: Mutex<Log>,
    /// Responses the client abandoned; a watch channel so waiters wake on each change.
    client_disconnects: watch::Sender<usize>,
    open_connections: AtomicUsize,
    /// Connections accepted since the start or the last reset.
    accepted_connections: AtomicUsize,
    /// Requests read whose response is not completely written (or abandoned) yet.
    responses_in_progress: AtomicUsize,
}

#[derive(Default)]
struct Log {
    requests: Vec<RecordedRequest>,
    /// Attempts seen per request, keyed by a hash of the path and the raw body.
    attempts: HashMap<u64, u32>,
}

impl Shared {
    pub(crate) fn new(config: Config) -> Shared {
        Shared {
            config,
            log: Mutex::default(),
            client_disconnects: watch::Sender::new(0),
            open_connections: AtomicUsize::new(0),
            accepted_connections: AtomicUsize::new(0),
            responses_in_progress: AtomicUsize::new(0),
        }
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        // A panic elsewhere must not hide the records from the test that reads them.
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.log().requests.clone()
    }

    pub(crate) fn reset(&self) {
        *self.log() = Log::default();
        self.client_disconnects.send_replace(0);
        self.accepted_connections.store(0, Ordering::SeqCst);
    }

    pub(crate) fn client_disconnects(&self) -> watch::Receiver<usize> {
        self.client_disconnects.subscribe()
    }

    pub(crate) fn open_connections(&self) -> usize {
        self.open_connections.load(Ordering::SeqCst)
    }

    pub(crate) fn accepted_connections(&self) -> usize {
        self.accepted_connections.load(Ordering::SeqCst)
    }

    pub(crate) fn responses_in_progress(&self) -> usize {
        self.responses_in_progress.load(Ordering::SeqCst)
    }

    /// Records the request (made by `request` only when requests are kept) and returns
    /// its attempt number (1 for a body seen first).
    fn record(
        &self,
        target: &str,
        raw_body: &[u8],
        request: impl FnOnce() -> RecordedRequest,
    ) -> u32 {
        let key = fnv1a_of_parts(&[target.as_bytes(), b"\n", raw_body]);
        let mut log = self.log();
        if self.config.keep_requests {
            log.requests.push(request());
        }
        let attempts = log.attempts.entry(key).or_default();
        *attempts += 1;
        *attempts
    }
}

/// Serves connections until `shutdown` fires (or its sender is dropped).
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(serve_connection(stream, Arc::clone(&shared)));
                }
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(ACCEPT_RETRY_PAUSE).await;
                }
            },
        }
    }
}

/// Counts a connection as open for as long as it lives.
struct OpenConnection(Arc<Shared>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.open_connections.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Counts a response as in progress while it is being written.
struct ResponseInProgress<'a>(&'a Shared);

impl<'a> ResponseInProgress<'a> {
    fn new(shared: &'a Shared) -> Self {
        shared.responses_in_progress.fetch_add(1, Ordering::SeqCst);
        ResponseInProgress(shared)
    }
}

impl Drop for ResponseInProgress<'_> {
    fn drop(&mut self) {
        self.0.responses_in_progress.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How writing a response ended.
enum Sent {
    Finished,
    /// The mock closed the connection on purpose.
    Closed,
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    shared.open_connections.fetch_add(1, Ordering::SeqCst);
    shared.accepted_connections.fetch_add(1, Ordering::SeqCst);
    let _open = OpenConnection(Arc::clone(&shared));
    // Each write goes out at once, so split writes reach the client as separate reads.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::warn!(%error, "could not set TCP_NODELAY");
    }
    let mut connection = Connection::new(stream);
    loop {
        let request = match connection.read_request().await {
            Ok(request) => request,
            Err(ReadError::Closed) => return,
            Err(ReadError::Refused { status, message }) => {
                let _ = send(&mut connection, Reply::error(status, message).into(), false).await;
                return;
            }
        };
        let keep_alive = request.keep_alive;
        let in_progress = ResponseInProgress::new(&shared);
        let response = handle(&shared, request);
        let sent = send(&mut connection, response, keep_alive).await;
        drop(in_progress);
        match sent {
            Ok(Sent::Finished) if keep_alive => {}
            Ok(_) => return,
            Err(ClientGone) => {
                shared
                    .client_disconnects
                    .send_modify(|disconnects| *disconnects += 1);
                tracing::info!("client went away before the response was complete");
                return;
            }
        }
    }
}

/// Records the request and decides the response.
fn handle(shared: &Shared, request: Request) -> Response {
    let parsed = serde_json::from_slice::<Value>(&request.body);
    let path = request.path().to_owned();
    tracing::info!(
        method = %request.method,
        target = %request.target,
        body_bytes = request.body.len(),
        "request"
    );
    let body_hash = fnv1a(&request.body);
    let attempt = shared.record(&request.target, &request.body, || RecordedRequest {
        method: request.method.clone(),
        path: request.target.clone(),
        headers: request.headers,
        body: parsed.as_ref().cloned().unwrap_or(Value::Null),
        raw_body: request.body.clone(),
    });
    let config = &shared.config;
    match (request.method.as_str(), path.as_str()) {
        ("GET", "/v1/models") => Reply::json(200, &models(config)).into(),
        ("POST", "/v1/chat/completions" | "/v1/embeddings" | "/v1/rerank") => {
            let body = match parsed {
                Ok(body @ Value::Object(_)) => body,
                Ok(_) => return Reply::error(400, "the body must be a JSON object").into(),
                Err(error) => {
                    return Reply::error(400, format!("could not parse the JSON body: {error}"))
                        .into();
                }
            };
            if path == "/v1/embeddings" {
                embeddings::respond(config, &body, attempt)
            } else if path == "/v1/rerank" {
                rerank::respond(&body, attempt)
            } else {
                chat::respond(config, &body, body_hash, attempt)
            }
        }
        (_, "/v1/models" | "/v1/chat/completions" | "/v1/embeddings" | "/v1/rerank") => {
            Reply::error(405, format!("{} is not allowed on {path}", request.method)).into()
        }
        _ => Reply::error(404, format!("no route for {path}")).into(),
    }
}

fn models(config: &Config) -> Value {
    let mut ids = vec![&config.chat_model];
    if config.embed_model != config.chat_model {
        ids.push(&config.embed_model);
    }
    let data: Vec<Value> = ids
        .into_iter()
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "bor-mock-llm"}))
        .collect();
    json!({"object": "list", "data": data})
}

/// Writes the response; `keep_alive` = the connection may serve another request after it.
async fn send(
    connection: &mut Connection,
    response: Response,
    keep_alive: bool,
) -> Result<Sent, ClientGone> {
    let split = response.split_writes;
    match response.reply {
        Reply::Drop => Ok(Sent::Closed),
        Reply::Hang => {
            connection.wait_until_client_closes().await;
            Err(ClientGone)
        }
        Reply::Full {
            status,
            content_type,
            body,
        } => {
            let mut bytes = http::response_head(
                status,
                &content_type,
                Framing::Length(body.len()),
                !keep_alive,
            );
            bytes.extend_from_slice(&body);
            connection.write(&bytes, split).await?;
            Ok(Sent::Finished)
        }
        Reply::Stream(EventStream {
            content_type,
            events,
            end,
            token_delay,
        }) => {
            let head = http::response_head(200, &content_type, Framing::Chunked, !keep_alive);
            connection.write(&head, split).await?;
            for (index, event) in events.iter().enumerate() {
                if index > 0 && !token_delay.is_zero() {
                    connection.pause(token_delay).await?;
                }
                connection
                    .write(&http::chunk(event.as_bytes()), split)
                    .await?;
            }
            match end {
                StreamEnd::Complete => {
                    connection.write(http::LAST_CHUNK, split).await?;
                    Ok(Sent::Finished)
                }
                StreamEnd::Break => Ok(Sent::Closed),
                StreamEnd::Stall => {
                    connection.wait_until_client_closes().await;
                    Err(ClientGone)
                }
                StreamEnd::KeepAlive => loop {
                    connection.pause(KEEPALIVE_INTERVAL).await?;
                    connection
                        .write(&http::chunk(b": keep-alive\n\n"), split)
                        .await?;
                },
            }
        }
    }
}
