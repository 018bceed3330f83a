//! A deterministic OpenAI-compatible server with failure injection, for bor's tests and
//! demos.
//!
//! [`MockLlm::start`] binds `127.0.0.1:0` and serves on a thread of its own with its own
//! tokio runtime, so it works from any test (an actix system, a tokio runtime with real or
//! paused time, or plain threads). Dropping the handle stops the server.
//!
//! # Endpoints
//!
//! - `GET /v1/models`: the chat and embedding model ids (both `smollm2` by default).
//! - `POST /v1/embeddings` (`input`: a string or an array of strings): one unit vector per
//!   input (64 dimensions by default), by signed feature hashing of lowercased words,
//!   common English stop words left out. The same text always gives the same vector,
//!   texts that share words are close, a text without words gets a fixed vector.
//!   Directive lines are left out of the embedded text. The cosine of two texts is about
//!   `shared words / sqrt(words of one × words of the other)`, with noise of about ±0.1
//!   from hash collisions at 64 dimensions.
//! - `POST /v1/chat/completions`: with `"stream": true`, an OpenAI event stream: a
//!   role-only first chunk, one chunk per token (a word with the whitespace after it), a
//!   finish chunk (`stop` or `tool_calls`) and `data: [DONE]`; otherwise one
//!   `chat.completion` object. Without a directive the answer is `Mock answer: ` followed
//!   by the first twelve words of the last user message.
//! - `POST /v1/rerank` (`query`, `documents`): a deterministic cross-encoder in the
//!   shape of llama.cpp, vLLM, Jina and Cohere, best first; a request with `texts`
//!   instead gets TEI's answer. The score is in `rerank.rs`.
//! - A body that is not a JSON object gets a 400 with an OpenAI error object; an unknown
//!   path a 404.
//!
//! # Directives
//!
//! A line `MOCK {json}` in the **last user message** (chat) or in an input text
//! (embeddings) decides the reply, e.g. `What is bor?\nMOCK {"status":503,"times":2}`.
//! Unknown fields, bad JSON and contradictory fields get an HTTP 400 that says what is
//! wrong, so a typo fails the test loudly. All fields are optional.
//!
//! | field | value | effect |
//! |---|---|---|
//! | **failures** | | at most one per directive |
//! | `status` | 400..=599 | that status with an OpenAI error object |
//! | `html_error` | bool | the error body is an HTML page (`text/html`); status 502 unless `status` is given |
//! | `drop` | bool | close the connection without any response |
//! | `hang` | bool | read the request and never answer, until the client closes |
//! | `drop_after` | k | stream the role chunk and k chunks, then close mid-body (no finish, no `[DONE]`) |
//! | `stall_after` | k | stream the role chunk and k chunks, then send nothing more, connection open |
//! | `keepalive_after` | k | stream the role chunk and k chunks, then only `: keep-alive` comments every 50 ms, until the client closes |
//! | `error_after` | k | the role chunk, k chunks, a `data: {"error":{…}}` line, `[DONE]` |
//! | `no_done` | bool | the whole answer and its finish chunk, no `[DONE]`; the body ends properly |
//! | `garbage` | `"invalid_json"`, `"huge_line"`, `"html"` | a 200 that is no completion: lines of invalid JSON; one 2 MiB `data:` line (a content chunk of `x`); an HTML page |
//! | `times` | n | the failure hits the first n attempts of this exact body (path and raw bytes), later attempts succeed; without it, every attempt fails |
//! | `on` | `"chat"` (default), `"embeddings"`, `"both"` (chat and embeddings), `"rerank"` | the endpoint the failure, `content_type` and `split_writes` target; stream failures (`drop_after`, `stall_after`, `keepalive_after`, `error_after`, `no_done`) are chat only |
//! | **content** (chat) | | |
//! | `reply` | text | the answer, streamed token by token |
//! | `chunks` | array of text | the exact content pieces, one per chunk (not with `reply`) |
//! | `repeat` | n | the text answer n times over, one chunk per token (a long stream from a short question) |
//! | `reasoning` | text | streamed first, token by token, as `reasoning_content` deltas |
//! | `reasoning_field` | `"reasoning_content"` (default), `"reasoning"` | the delta field that carries `reasoning` |
//! | `usage` | bool | a usage-only chunk with empty `choices` after the finish chunk (also sent when the request has `stream_options.include_usage`) |
//! | `refuse_stream_options` | bool | HTTP 400 `Unrecognized request argument supplied: stream_options` for a request that has `stream_options` (servers that do not know the field) |
//! | **tools** (chat) | | |
//! | `tool_calls` | array of `{"name", "arguments"}` | when the request offers `tools`, answer with these calls: per call a fragment with `index`, `id`, `type`, `function.name` and empty arguments, then the arguments text in 8-character fragments; finish `tool_calls`. `arguments` is an object (sent as JSON text) or a string (sent as is) |
//! | `tool_rounds` | n (default 1) | answer with tool calls while the request holds fewer than n assistant messages with `tool_calls`; then `reply` |
//! | `repeat_ids` | bool | every fragment repeats `id`, `type` and `function.name`, as llama.cpp's server does |
//! | **scaffolding** (chat) | | |
//! | `leak` | text | streamed instead of the answer unless a system message contains `raw tool-call markup` (bor's correction) |
//! | `leak_always` | bool | `leak` even after the correction |
//! | **recorded streams** (chat) | | |
//! | `fixture` | name | replay `fixtures/NAME.sse` (a stream in the shape of OpenAI, vLLM, Ollama, llama.cpp's server or llama-cpp-python; the list is in `fixtures.rs`) byte for byte, with that server's content type, while the request holds fewer than `tool_rounds` (default 1) assistant messages with `tool_calls`; then the text answer (`reply` or the default). Needs `"stream": true`; not with generated content, `usage`, `content_type` or stream failures |
//! | **pacing and wire** | | |
//! | `token_delay_ms` | ms | pause before every chunk after the first (overrides [`MockLlmBuilder::token_delay`]) |
//! | `split_writes` | bool | write every byte of the response separately, 1 ms apart, so UTF-8 characters and `data:` lines are split across reads |
//! | `content_type` | text | the response's content type |
//!
//! Content fields always apply to chat requests; a failure only to the endpoint `on`
//! names and only within `times`. The text answer is `leak` (while it applies), else
//! `chunks`, else `reply`, else the default answer. A request without `tools` gets the
//! text answer even when the directive has `tool_calls`. On an endpoint without streams
//! (embeddings, `"stream": false`) `garbage` sends the body alone: invalid JSON, 2 MiB of
//! `x` on one line, or the HTML page. Chat ids are `chatcmpl-` and a hash of the body;
//! tool-call ids are `call_{round}_{index}`.
//!
//! # HTTP
//!
//! A small HTTP/1.1 server of its own, for byte-level control: request bodies need
//! `Content-Length` (a chunked request gets 411); connections are kept alive unless the
//! client sends `Connection: close`; streams are chunked, one HTTP chunk per SSE event,
//! written with `TCP_NODELAY`. A client that closes its connection before a response is
//! complete (including during `hang` and `stall_after`) is counted by
//! [`MockLlm::client_disconnects`] as soon as it happens.

mod chat;
mod chunks;
mod config;
mod directive;
mod embeddings;
mod fixtures;
mod http;
mod reply;
mod rerank;
mod server;
mod text;
mod wire;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use config::Config;
use server::Shared;

/// A request as the mock received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    /// The request target: path and query.
    pub path: String,
    /// Header names as sent, in order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON; `Null` when it is not JSON.
    pub body: Value,
    pub raw_body: Vec<u8>,
}

impl RecordedRequest {
    /// The first value of header `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// A running mock server; dropping it stops the server and closes its connections.
pub struct MockLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    runtime: tokio::runtime::Handle,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// Settings for [`MockLlm`]; [`MockLlm::builder`] starts with the defaults.
#[derive(Clone, Debug)]
pub struct MockLlmBuilder {
    bind: SocketAddr,
    config: Config,
}

impl MockLlmBuilder {
    /// The address to listen on (default `127.0.0.1:0`, a free port).
    pub fn bind(mut self, addr: SocketAddr) -> Self {
        self.bind = addr;
        self
    }

    /// Components of each embedding (default 64).
    pub fn embedding_dim(mut self, dim: usize) -> Self {
        self.config.embedding_dim = dim;
        self
    }

    /// The model ids listed by `GET /v1/models` and used when a request names none.
    pub fn models(mut self, chat: impl Into<String>, embed: impl Into<String>) -> Self {
        self.config.chat_model = chat.into();
        self.config.embed_model = embed.into();
        self
    }

    /// Pause between streamed chunks (default none).
    pub fn token_delay(mut self, delay: Duration) -> Self {
        self.config.token_delay = delay;
        self
    }

    /// Keeps no request for [`MockLlm::requests`]: for a server that runs long (the
    /// standalone one, a benchmark's), whose memory would otherwise grow with every
    /// request. Attempts are still counted for the directives that need them.
    pub fn without_request_records(mut self) -> Self {
        self.config.keep_requests = false;
        self
    }

    /// A chat server that serves no embeddings: `POST /v1/embeddings` answers as
    /// llama-cpp-python does for a model loaded without them, HTTP 500 "Llama model
    /// must be created with embedding=True to call this method", to every attempt.
    pub fn without_embeddings(mut self) -> Self {
        self.config.embeddings = false;
        self
    }

    pub fn start(self) -> std::io::Result<MockLlm> {
        if self.config.embedding_dim == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the embedding dimension must be at least 1",
            ));
        }
        let std_listener = std::net::TcpListener::bind(self.bind)?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(std_listener)?
        };
        let shared = Arc::new(Shared::new(self.config));
        let (shutdown, shutdown_received) = oneshot::channel();
        let handle = runtime.handle().clone();
        let serving = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(format!("mock-llm-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(server::serve(listener, serving, shutdown_received));
            })?;
        Ok(MockLlm {
            addr,
            shared,
            runtime: handle,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }
}

impl MockLlm {
    /// Starts a mock with the default settings on a free port of 127.0.0.1.
    pub fn start() -> std::io::Result<MockLlm> {
        MockLlm::builder().start()
    }

    pub fn builder() -> MockLlmBuilder {
        MockLlmBuilder {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            config: Config {
                chat_model: "smollm2".to_owned(),
                embed_model: "smollm2".to_owned(),
                embedding_dim: 64,
                token_delay: Duration::ZERO,
                embeddings: true,
                keep_requests: true,
            },
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The OpenAI base URL, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received since start (or the last [`reset`](Self::reset)), in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests()
    }

    /// Bodies of the `POST /v1/chat/completions` requests, in order.
    pub fn chat_requests(&self) -> Vec<Value> {
        self.bodies_of("/v1/chat/completions")
    }

    /// Bodies of the `POST /v1/embeddings` requests, in order.
    pub fn embedding_requests(&self) -> Vec<Value> {
        self.bodies_of("/v1/embeddings")
    }

    /// Bodies of the `POST /v1/rerank` requests, in order.
    pub fn rerank_requests(&self) -> Vec<Value> {
        self.bodies_of("/v1/rerank")
    }

    fn bodies_of(&self, path: &str) -> Vec<Value> {
        self.shared
            .requests()
            .into_iter()
            .filter(|request| {
                request.method == "POST" && request.path.split('?').next() == Some(path)
            })
            .map(|request| request.body)
            .collect()
    }

    /// Responses the client abandoned: it closed the connection before the mock finished
    /// writing (a hang or stall counts when the client gives up on it).
    pub fn client_disconnects(&self) -> usize {
        *self.shared.client_disconnects().borrow()
    }

    /// Blocks until [`client_disconnects`](Self::client_disconnects) reaches `n`, or
    /// `timeout` passes; returns whether it was reached. Do not call it on the thread
    /// that runs the client: use [`wait_for_client_disconnects_async`](Self::wait_for_client_disconnects_async) there.
    pub fn wait_for_client_disconnects(&self, n: usize, timeout: Duration) -> bool {
        let (sender, receiver) = mpsc::channel();
        self.when_disconnects_reach(n, timeout, move |reached| {
            let _ = sender.send(reached);
        });
        receiver.recv().unwrap_or(false)
    }

    /// Waits until [`client_disconnects`](Self::client_disconnects) reaches `n`, or
    /// `timeout` passes; returns whether it was reached. The timeout runs on the mock's
    /// own clock, so this works under any async runtime, paused time included.
    pub async fn wait_for_client_disconnects_async(&self, n: usize, timeout: Duration) -> bool {
        let (sender, receiver) = oneshot::channel();
        self.when_disconnects_reach(n, timeout, move |reached| {
            let _ = sender.send(reached);
        });
        receiver.await.unwrap_or(false)
    }

    /// Calls `report` on the mock's runtime once the count reaches `n` (true) or after
    /// `timeout` (false).
    fn when_disconnects_reach(
        &self,
        n: usize,
        timeout: Duration,
        report: impl FnOnce(bool) + Send + 'static,
    ) {
        let mut disconnects = self.shared.client_disconnects();
        self.runtime.spawn(async move {
            let reached = tokio::time::timeout(timeout, disconnects.wait_for(|count| *count >= n))
                .await
                .is_ok_and(|changed| changed.is_ok());
            report(reached);
        });
    }

    /// Connections open right now (idle kept-alive ones included).
    pub fn open_connections(&self) -> usize {
        self.shared.open_connections()
    }

    /// Connections accepted since the start or the last [`MockLlm::reset`]: a client
    /// that keeps its connections alive opens few.
    pub fn accepted_connections(&self) -> usize {
        self.shared.accepted_connections()
    }

    /// Requests being answered right now: read, and their response not yet completely
    /// written nor abandoned by the client (a `hang` or `stall_after` counts until the
    /// client closes its connection).
    pub fn responses_in_progress(&self) -> usize {
        self.shared.responses_in_progress()
    }

    /// Forgets the recorded requests, the attempt counts and the client disconnects.
    pub fn reset(&self) {
        self.shared.reset();
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
