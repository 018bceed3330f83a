//! What bor's integration tests share: `TestApp` (a running bor with its own database
//! and mock LLM, and typed calls to it), the frames of a turn as a client reads them,
//! the one polling function, the captured log lines, a TCP proxy to cut, the `/v1`
//! client calls, and OpenID Connect providers run by Node.js.

#![expect(
    clippy::expect_used,
    reason = "test support stops the test at the first unexpected value"
)]

mod accounts;
mod admin;
pub mod load;
mod logs;
mod mcp;
mod oauth;
pub mod oidc;
mod openai;
mod proxy;
mod scenario;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use actix_web::web;
use awc::http::header::HeaderMap;
use bor::db::DbPool;
use bor::db::query_log::QueryLogEntry;
use bor::state::AppState;
use bor::testing::{TestDatabase, build_application};
use bor_mock_llm::MockLlm;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};

pub use accounts::{Credential, PASSWORD, session_cookie};
pub use admin::JsonResponse;
pub use logs::{all_logs, log_lines_containing, single_turn_log_line, turn_log_lines};
pub use oauth::{CHALLENGE, OAuthClient, REDIRECT_URI, VERIFIER, location_param};
pub use openai::StreamEvent;
pub use proxy::TcpProxy;
pub use scenario::{node_scenario, python_scenario};

/// The longest a test waits for a turn's stream to end.
pub const STREAM_TIMEOUT: Duration = Duration::from_secs(30);

pub struct TestApp {
    pub address: String,
    pub mock: MockLlm,
    /// A pool on the app's database (direct, even when the app goes through a proxy).
    pub pool: DbPool,
    /// The running app's shared state (its knowledge service and vector index).
    pub state: web::Data<AppState>,
    /// Between the app and PostgreSQL, when spawned with [`TestApp::spawn_with_db_proxy`].
    pub db_proxy: Option<TcpProxy>,
    /// The app's database, dropped with the last app that uses it.
    db: Arc<TestDatabase>,
    /// The API key the chat helpers send (see [`TestApp::asking_with_a_key`]).
    key: Option<String>,
}

/// One SSE frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub event: String,
    pub data: Value,
}

/// A response to `POST /api/chat`: frames when it streamed, a JSON body when refused.
#[derive(Debug)]
pub struct ChatResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub frames: Vec<Frame>,
    pub json: Option<Value>,
}

/// A plain (non-streamed) response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    /// The whole response (up to 16 MiB).
    pub async fn read<S>(mut response: awc::ClientResponse<S>) -> Reply
    where
        S: futures_util::Stream<Item = Result<bytes::Bytes, awc::error::PayloadError>> + Unpin,
    {
        let body = response
            .body()
            .limit(16 * 1024 * 1024)
            .await
            .expect("the body is read");
        Reply {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: body.to_vec(),
        }
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the body is JSON")
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl ChatResponse {
    pub fn events(&self) -> Vec<&str> {
        self.frames.iter().map(|f| f.event.as_str()).collect()
    }

    /// A streamed turn's response made of `frames` (as read by a test of its own).
    pub fn of_frames(frames: Vec<Frame>) -> ChatResponse {
        ChatResponse {
            status: 200,
            headers: HeaderMap::new(),
            frames,
            json: None,
        }
    }

    /// The text of every frame of kind `event`, joined.
    pub fn text_of(&self, event: &str) -> String {
        self.frames
            .iter()
            .filter(|f| f.event == event)
            .filter_map(|f| f.data["text"].as_str())
            .collect()
    }

    pub fn deltas(&self) -> String {
        self.text_of("delta")
    }

    pub fn last(&self) -> &Frame {
        self.frames.last().expect("the stream has frames")
    }

    pub fn turn_id(&self) -> String {
        self.last().data["turn_id"]
            .as_str()
            .expect("the terminal frame has a turn id")
            .to_owned()
    }

    /// Exactly one terminal frame, last.
    pub fn assert_one_terminal_frame(&self) {
        let terminals = self
            .frames
            .iter()
            .filter(|f| f.event == "done" || f.event == "error")
            .count();
        assert_eq!(terminals, 1, "{:?}", self.events());
        assert!(matches!(self.last().event.as_str(), "done" | "error"));
    }

    /// The refusal's error code.
    pub fn error_code(&self) -> &str {
        self.json
            .as_ref()
            .and_then(|j| j["error"]["code"].as_str())
            .unwrap_or("")
    }
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        Self::spawn_with(&[]).await
    }

    /// Spawns with extra `BOR_*` variables (they override the test defaults); `{mock}`
    /// in a value is the mock LLM's base URL (for `BOR_RERANK_BASE_URL`, say).
    pub async fn spawn_with(vars: &[(&str, &str)]) -> TestApp {
        Self::spawn_on(Arc::new(TestDatabase::migrated().await), None, vars).await
    }

    /// Spawns with `BOR_AUTH=accounts` (people sign in), and `vars`.
    pub async fn spawn_with_accounts(vars: &[(&str, &str)]) -> TestApp {
        let vars: Vec<(&str, &str)> = std::iter::once(("BOR_AUTH", "accounts"))
            .chain(vars.iter().copied())
            .collect();
        Self::spawn_with(&vars).await
    }

    /// Spawns with the app's database connections going through a [`TcpProxy`] that
    /// the test can cut or make hang.
    pub async fn spawn_with_db_proxy(vars: &[(&str, &str)]) -> TestApp {
        let db = Arc::new(TestDatabase::migrated().await);
        let postgres: SocketAddr = "127.0.0.1:5432".parse().expect("an address");
        let proxy = TcpProxy::start(postgres);
        Self::spawn_on(db, Some(proxy), vars).await
    }

    /// Another instance (its own mock LLM) on this app's database.
    pub async fn spawn_sharing(&self, vars: &[(&str, &str)]) -> TestApp {
        Self::spawn_on(Arc::clone(&self.db), None, vars).await
    }

    async fn spawn_on(
        db: Arc<TestDatabase>,
        db_proxy: Option<TcpProxy>,
        vars: &[(&str, &str)],
    ) -> TestApp {
        logs::capture();
        let mock = MockLlm::start().expect("the mock LLM starts");
        let database_url = match &db_proxy {
            Some(proxy) => {
                db.url()
                    .replacen("127.0.0.1:5432", &format!("127.0.0.1:{}", proxy.port()), 1)
            }
            None => db.url().to_owned(),
        };
        let mock_url = mock.base_url();
        let defaults = [
            ("BOR_BIND", "127.0.0.1:0"),
            ("BOR_DATABASE_URL", database_url.as_str()),
            ("BOR_LLM_BASE_URL", &mock_url),
            ("BOR_LLM_RETRY_DELAY", "0"),
            ("BOR_LLM_READ_TIMEOUT", "5"),
            ("BOR_SSE_KEEPALIVE", "1"),
            ("BOR_LOG", "info"),
            // Tests that are not about people ask as the one local user;
            // [`TestApp::spawn_with_accounts`] makes people sign in.
            ("BOR_AUTH", "off"),
        ];
        let vars: Vec<(&str, String)> = vars
            .iter()
            .map(|(name, value)| (*name, value.replace("{mock}", &mock_url)))
            .collect();
        let vars: Vec<(&str, &str)> = vars
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .collect();
        let application = build_application(&defaults, &vars).await;
        let address = format!("http://127.0.0.1:{}", application.port());
        let state = application.state();
        actix_web::rt::spawn(application.run_until_stopped());
        let pool = db.pool();
        TestApp {
            address,
            mock,
            pool,
            state,
            db_proxy,
            db,
            key: None,
        }
    }

    /// The same app, its chat helpers ([`TestApp::chat`], [`TestApp::chat_request`])
    /// asking as a member `username` made now, with an API key of theirs: for an app
    /// spawned with `BOR_AUTH=accounts`.
    pub async fn asking_with_a_key(mut self, username: &str) -> TestApp {
        self.add_user(username, bor::db::users::Role::Member).await;
        let cookie = self.sign_in(username).await;
        let (_, key) = self.make_key(&cookie, "drills").await;
        self.key = Some(key);
        self
    }

    /// The API key the chat helpers send, when there is one.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// `POST /api/chat` with a JSON content type, and the key when there is one.
    pub fn chat_request(&self) -> awc::ClientRequest {
        let request = Self::client()
            .post(format!("{}/api/chat", self.address))
            .insert_header(("Content-Type", "application/json"));
        match &self.key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    pub fn database(&self) -> &TestDatabase {
        &self.db
    }

    /// How many chunks of `document_id` this app's vector index holds.
    pub fn indexed_chunks(&self, document_id: i64) -> usize {
        self.state.library.index().chunk_count(document_id)
    }

    /// Turns holding a slot right now.
    pub fn turns_in_flight(&self) -> usize {
        bor::health::turns_in_flight(&self.state)
    }

    pub fn client() -> awc::Client {
        awc::Client::builder().timeout(STREAM_TIMEOUT).finish()
    }

    /// `GET path`, with the admin token when given: status, headers and body.
    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        let authorization = token.map(|token| format!("Bearer {token}"));
        let headers: Vec<(&str, &str)> = authorization
            .iter()
            .map(|value| ("Authorization", value.as_str()))
            .collect();
        self.send("get", path, &headers).await
    }

    /// `method path` (`get`, `post`, …) with extra headers; POST and PATCH carry the
    /// JSON body `{}`. Status, headers and body.
    pub async fn send(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Reply {
        let method = awc::http::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
            .expect("an HTTP method");
        let with_body = matches!(method, awc::http::Method::POST | awc::http::Method::PATCH);
        let mut request = Self::client().request(method, format!("{}{path}", self.address));
        for &header in headers {
            request = request.insert_header(header);
        }
        let sent = if with_body {
            request
                .insert_header(("Content-Type", "application/json"))
                .send_body("{}")
                .await
        } else {
            request.send().await
        };
        Reply::read(sent.expect("the request is sent")).await
    }

    /// Asks `message` and reads the whole stream.
    pub async fn chat(&self, message: &str) -> ChatResponse {
        self.chat_json(json!({ "message": message })).await
    }

    pub async fn chat_json(&self, body: Value) -> ChatResponse {
        self.post_chat(Some("application/json"), body.to_string().into_bytes())
            .await
    }

    pub async fn post_chat(&self, content_type: Option<&str>, body: Vec<u8>) -> ChatResponse {
        let mut request = Self::client().post(format!("{}/api/chat", self.address));
        if let Some(content_type) = content_type {
            request = request.insert_header(("Content-Type", content_type));
        }
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let response = request.send_body(body).await.expect("the request is sent");
        read_chat_response(response).await
    }

    /// The LogActor's counters.
    pub async fn log_stats(&self) -> bor_actors::log::LogStats {
        self.state
            .log
            .send(bor_actors::log::GetLogStats)
            .await
            .expect("the log actor answers")
    }

    /// The LogActor's counters once its queue is empty (a row is committed a moment
    /// before its write's end reaches the LogActor).
    pub async fn drained_log_stats(&self) -> bor_actors::log::LogStats {
        let drained = eventually_within(Duration::from_secs(15), async || {
            self.log_stats().await.queued == 0
        })
        .await;
        let stats = self.log_stats().await;
        assert!(drained, "the LogActor's queue drained: {stats:?}");
        stats
    }

    /// The `query_log` rows, oldest first.
    pub async fn query_log(&self) -> Vec<QueryLogEntry> {
        bor::testing::query_log_rows(&self.pool).await
    }

    /// Waits until `query_log` holds `n` rows (rows are written just after the stream ends).
    pub async fn wait_for_rows(&self, n: usize) -> Vec<QueryLogEntry> {
        wait_for_rows(&self.pool, n).await
    }

    /// Stores a document of one chunk whose embedding is the mock's embedding of its
    /// text, straight into the database, and waits until the app's index has it (it
    /// hears of it through `NOTIFY`); returns (document id, chunk id).
    pub async fn insert_document(&self, title: &str, text: &str) -> (i64, i64) {
        let embedding = self.mock_embedding(text).await;
        let ids = self.insert_document_with(title, text, embedding).await;
        assert!(
            eventually(async || self.indexed_chunks(ids.0) == 1).await,
            "the app's index picked up document {}",
            ids.0
        );
        ids
    }

    /// Stores a document of one chunk with this embedding, straight into the database.
    pub async fn insert_document_with(
        &self,
        title: &str,
        text: &str,
        embedding: Vec<f32>,
    ) -> (i64, i64) {
        bor::testing::insert_one_chunk_document(&self.pool, title, text, &embedding).await
    }

    /// The embedding the mock gives `text` (what bor stores for it).
    pub async fn mock_embedding(&self, text: &str) -> Vec<f32> {
        let mut response = Self::client()
            .post(format!("{}/embeddings", self.mock.base_url()))
            .send_json(&json!({"model": "smollm2", "input": text}))
            .await
            .expect("the mock embeds");
        let body: Value = response.json().await.expect("embedding JSON");
        body["data"][0]["embedding"]
            .as_array()
            .expect("an embedding")
            .iter()
            .map(|x| x.as_f64().unwrap_or_default() as f32)
            .collect()
    }
}

/// The turn a `/api/chat` response names (`X-Turn-Id`).
pub fn turn_id_of(headers: &HeaderMap) -> String {
    headers
        .get("x-turn-id")
        .and_then(|value| value.to_str().ok())
        .expect("the response names its turn")
        .to_owned()
}

/// Reads a chat response within [`STREAM_TIMEOUT`]: the SSE frames of a stream, or
/// the JSON of a refusal.
pub async fn read_chat_response<S>(response: awc::ClientResponse<S>) -> ChatResponse
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, awc::error::PayloadError>> + Unpin,
{
    read_chat_response_within(response, STREAM_TIMEOUT).await
}

/// Like [`read_chat_response`], waiting up to `timeout` for the stream to end.
pub async fn read_chat_response_within<S>(
    mut response: awc::ClientResponse<S>,
    timeout: Duration,
) -> ChatResponse
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, awc::error::PayloadError>> + Unpin,
{
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let is_stream = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_stream {
        let json = response.json::<Value>().await.ok();
        return ChatResponse {
            status,
            headers,
            frames: Vec::new(),
            json,
        };
    }
    let mut events = response.eventsource();
    let mut frames = Vec::new();
    let read = async {
        while let Some(event) = events.next().await {
            let event = event.expect("a well-formed SSE stream");
            frames.push(Frame {
                event: event.event,
                data: serde_json::from_str(&event.data).expect("frame data is JSON"),
            });
        }
    };
    tokio::time::timeout(timeout, read)
        .await
        .expect("the stream ended in time");
    ChatResponse {
        status,
        headers,
        frames,
        json: None,
    }
}

/// The `query_log` rows, oldest first, once there are `n` (rows are written just after a
/// stream ends), or whatever is there after five seconds.
pub async fn wait_for_rows(pool: &DbPool, n: usize) -> Vec<QueryLogEntry> {
    let mut rows = Vec::new();
    eventually(async || {
        rows = bor::testing::query_log_rows(pool).await;
        rows.len() >= n
    })
    .await;
    rows
}

/// About `chars` characters of words no other `turn` holds (`w<turn>q<i>`, `i` from 0),
/// to grow a conversation's search words as fast as a text can.
pub fn distinct_words(turn: usize, chars: usize) -> String {
    let mut text = String::new();
    for i in 0.. {
        if text.len() >= chars {
            break;
        }
        text.push_str(&format!("w{turn}q{i} "));
    }
    text.trim_end().to_owned()
}

/// A question with a mock directive line.
pub fn directed(question: &str, directive: Value) -> String {
    format!("{question}\nMOCK {directive}")
}

/// Polls `condition` every 10 ms for up to five seconds: the one way a test waits for
/// something that happens after a response (a row written, an index updated).
pub async fn eventually(condition: impl AsyncFnMut() -> bool) -> bool {
    eventually_within(Duration::from_secs(5), condition).await
}

/// [`eventually`] with a time limit of its own.
pub async fn eventually_within(limit: Duration, mut condition: impl AsyncFnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if condition().await {
            return true;
        }
        actix_web::rt::time::sleep(Duration::from_millis(10)).await;
    }
    condition().await
}

/// A file of the format readers' real-tool fixtures (`formats/tests/fixtures`).
pub fn format_fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../formats/tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Writes `section` (which starts with `start` and ends with `end`) into the file at
/// `path` (`bench/RESULTS.md`) in place of the text between those markers, or at its
/// end when they are not there yet: how each benchmark keeps its own section.
pub fn write_results_section(
    path: &std::path::Path,
    start: &str,
    end: &str,
    section: &str,
) -> std::io::Result<()> {
    let existing = std::fs::read_to_string(path).unwrap_or_else(|_| "# Benchmarks\n".to_owned());
    let updated = match (existing.find(start), existing.find(end)) {
        (Some(from), Some(to)) if from < to => format!(
            "{}{}{}",
            &existing[..from],
            section.trim_end(),
            &existing[to + end.len()..]
        ),
        _ => format!("{}\n\n{}\n", existing.trim_end(), section.trim_end()),
    };
    std::fs::write(path, updated)
}
