//! `RealModelApp`: bor on a fresh database in front of a real model server, with typed
//! helpers; a request-rewriting proxy; extra server instances a test may kill.

mod proxy;
mod server;

use std::sync::Arc;
use std::time::Duration;

use bor::db::DbPool;
use bor::db::query_log::QueryLogEntry;
use bor::testing::{TestDatabase, build_application};
pub use bor_actors::llm::EmbedPurpose;
use bor_actors::llm::{EmbedPrefixes, LlmClient, LlmSettings};
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use futures_util::stream::LocalBoxStream;
use serde_json::{Value, json};

pub use bor_test_support::{ChatResponse, Frame, wait_for_rows};
pub use proxy::{RewritingProxy, cap_answer_length, force_search_documents};
pub use server::ModelServer;

/// The longest a test waits for a turn's stream, or for one frame of it. A small CPU
/// model writes a few dozen tokens a second; answers that are not capped can be long.
pub const STREAM_TIMEOUT: Duration = Duration::from_secs(300);

/// The model name the server lists (its alias).
pub const MODEL: &str = "smollm2";

/// A question small models answer at length, so a stream is still running when a test
/// acts on it.
pub const LONG_QUESTION: &str = "Write a long story about a dragon who learns to read.";

/// The base URL of the shared model server, from `BOR_TEST_LLM_BASE_URL`.
pub fn shared_server_url() -> String {
    std::env::var("BOR_TEST_LLM_BASE_URL")
        .ok()
        .filter(|url| !url.is_empty())
        .expect("BOR_TEST_LLM_BASE_URL names the model server; `make test-real-model` sets it")
}

/// The chat server of the default local setup (Qwen2.5-Coder-0.5B), from
/// `BOR_TEST_CHAT_BASE_URL`.
pub fn default_chat_server_url() -> String {
    env_url("BOR_TEST_CHAT_BASE_URL")
}

/// The embeddings server of the default local setup (all-MiniLM-L6-v2), from
/// `BOR_TEST_EMBED_BASE_URL`.
pub fn default_embed_server_url() -> String {
    env_url("BOR_TEST_EMBED_BASE_URL")
}

fn env_url(variable: &str) -> String {
    std::env::var(variable)
        .ok()
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| {
            panic!("{variable} names a model server; `make test-real-model` sets it")
        })
}

/// bor's LLM client for `base_url` (no retries), to embed and list models as bor does.
pub fn llm_client(base_url: &str) -> LlmClient {
    LlmClient::new(Arc::new(LlmSettings {
        base_url: base_url.trim_end_matches('/').to_owned(),
        embed_base_url: base_url.trim_end_matches('/').to_owned(),
        api_key: None,
        chat_model: MODEL.to_owned(),
        embed_model: MODEL.to_owned(),
        embed_prefixes: EmbedPrefixes::default(),
        retries: 0,
        retry_delay: Duration::ZERO,
        connect_timeout: Duration::from_secs(10),
        read_timeout: STREAM_TIMEOUT,
        temperature: None,
        max_tokens: None,
        embeddings_fix: format!("embeddings go to {base_url}, the model server under test"),
        rerank: None,
        stream_usage: Default::default(),
    }))
}

/// Cosine similarity, as bor computes it.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

/// The frames of a turn as they arrive.
pub type FrameStream = LocalBoxStream<'static, Frame>;

/// The next frame, or `None` when the stream ended; panics when none comes in time.
pub async fn next_frame(frames: &mut FrameStream) -> Option<Frame> {
    tokio::time::timeout(STREAM_TIMEOUT, frames.next())
        .await
        .expect("a frame or the end of the stream in time")
}

/// The rest of the stream.
pub async fn rest_of(mut frames: FrameStream) -> Vec<Frame> {
    let mut rest = Vec::new();
    while let Some(frame) = next_frame(&mut frames).await {
        rest.push(frame);
    }
    rest
}

pub struct RealModelApp {
    pub address: String,
    pub pool: DbPool,
    /// The LLM base URL bor uses.
    pub llm_base_url: String,
    /// The app's database, dropped with the app.
    db: TestDatabase,
}

impl RealModelApp {
    /// bor on a fresh database, talking to `llm_base_url`; `vars` override the defaults.
    pub async fn spawn(llm_base_url: &str, vars: &[(&str, &str)]) -> RealModelApp {
        let db = TestDatabase::migrated().await;
        let defaults = [
            ("BOR_BIND", "127.0.0.1:0"),
            ("BOR_DATABASE_URL", db.url()),
            ("BOR_LLM_BASE_URL", llm_base_url),
            ("BOR_LLM_RETRY_DELAY", "0"),
            ("BOR_LLM_READ_TIMEOUT", "300"),
            ("BOR_SSE_KEEPALIVE", "1"),
            ("BOR_AUTH", "off"),
        ];
        let application = build_application(&defaults, vars).await;
        let address = format!("http://127.0.0.1:{}", application.port());
        actix_web::rt::spawn(application.run_until_stopped());
        RealModelApp {
            address,
            pool: db.pool(),
            llm_base_url: llm_base_url.to_owned(),
            db,
        }
    }

    /// The URL of the app's database, for a `bor` command beside it.
    pub fn database_url(&self) -> &str {
        self.db.url()
    }

    /// Asks `message` and returns the frames as they come.
    pub async fn open_chat(&self, message: &str) -> FrameStream {
        self.open_chat_json(json!({ "message": message })).await
    }

    /// Sends a whole chat body (e.g. with `history`) and returns the frames as they come.
    pub async fn open_chat_json(&self, body: Value) -> FrameStream {
        self.open_turn(body).await.1
    }

    /// Sends a chat body; the turn's id (`X-Turn-Id`) and its frames as they come.
    pub async fn open_turn(&self, body: Value) -> (String, FrameStream) {
        let response = awc::Client::builder()
            .timeout(STREAM_TIMEOUT)
            .finish()
            .post(format!("{}/api/chat", self.address))
            .insert_header(("Content-Type", "application/json"))
            .send_body(body.to_string())
            .await
            .expect("the chat request is sent");
        assert_eq!(response.status(), 200, "the turn streams");
        let turn_id = response
            .headers()
            .get("x-turn-id")
            .and_then(|value| value.to_str().ok())
            .expect("the turn's id")
            .to_owned();
        let frames = response
            .eventsource()
            .map(|event| {
                let event = event.expect("a well-formed SSE stream");
                Frame {
                    event: event.event,
                    data: serde_json::from_str(&event.data).expect("frame data is JSON"),
                }
            })
            .boxed_local();
        (turn_id, frames)
    }

    /// `POST /api/turns/{turn_id}/stop`; the status.
    pub async fn stop_turn(&self, turn_id: &str) -> u16 {
        awc::Client::new()
            .post(format!("{}/api/turns/{turn_id}/stop", self.address))
            .send()
            .await
            .expect("the stop is sent")
            .status()
            .as_u16()
    }

    /// POSTs `body` to an admin route with `token`; the status.
    pub async fn post_admin_json(&self, path: &str, token: &str, body: Value) -> u16 {
        awc::Client::builder()
            .timeout(STREAM_TIMEOUT)
            .finish()
            .post(format!("{}{path}", self.address))
            .bearer_auth(token)
            .send_json(&body)
            .await
            .expect("the admin request is answered")
            .status()
            .as_u16()
    }

    /// GETs `path` and reads its JSON body; panics unless the status is 200.
    pub async fn get_json(&self, path: &str) -> Value {
        let mut response = awc::Client::new()
            .get(format!("{}{path}", self.address))
            .send()
            .await
            .expect("the request is answered");
        assert_eq!(response.status(), 200, "GET {path}");
        response
            .json()
            .limit(16 * 1024 * 1024)
            .await
            .expect("a JSON body")
    }

    /// Asks `message` and reads the whole turn.
    pub async fn chat(&self, message: &str) -> ChatResponse {
        ChatResponse::of_frames(rest_of(self.open_chat(message).await).await)
    }

    /// Stores a document of one chunk whose embedding comes from the model server;
    /// returns (document id, chunk id, embedding).
    pub async fn insert_document(&self, title: &str, text: &str) -> (i64, i64, Vec<f32>) {
        let embedding = llm_client(&self.llm_base_url)
            .embed(EmbedPurpose::Document, vec![text.to_owned()], |_, _| {})
            .await
            .expect("the model server embeds the chunk")
            .remove(0);
        let (document_id, chunk_id) =
            bor::testing::insert_one_chunk_document(&self.pool, title, text, &embedding).await;
        (document_id, chunk_id, embedding)
    }

    /// The `query_log` rows, oldest first, once `n` are there (or after a few seconds).
    pub async fn wait_for_rows(&self, n: usize) -> Vec<QueryLogEntry> {
        wait_for_rows(&self.pool, n).await
    }

    pub async fn query_log(&self) -> Vec<QueryLogEntry> {
        bor::testing::query_log_rows(&self.pool).await
    }
}
