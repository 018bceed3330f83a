//! One probe per dependency. Each runs under its own timeout and never fails: what went
//! wrong is part of its report.

use std::future::Future;
use std::time::{Duration, Instant};

use bor_actors::error_chain;
use bor_actors::llm::LlmClient;
use diesel::sql_types::Integer;
use diesel_async::RunQueryDsl;
use serde::Serialize;
use utoipa::ToSchema;

use crate::db::{self, DbPool};

/// The database: reachable, how fast, and its migrations.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DatabaseHealth {
    /// The URL, password hidden.
    pub url: String,
    pub reachable: bool,
    /// Time to get a connection and run `SELECT 1`.
    pub latency_ms: Option<f64>,
    pub migrations: Option<Migrations>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Migrations {
    pub applied: usize,
    /// Names of the migrations this binary has and the database lacks.
    pub pending: Vec<String>,
}

/// An LLM server: reachable, how fast, and whether it lists the models it is there for.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct LlmHealth {
    /// The base URL, credentials hidden.
    pub url: String,
    /// `GET {base}/models` answered with a model list.
    pub reachable: bool,
    pub latency_ms: Option<f64>,
    /// `null` on a server that serves only embeddings.
    pub chat_model: Option<ModelListing>,
    /// `null` on the chat server when the embeddings have a server of their own.
    pub embed_model: Option<ModelListing>,
    /// Every model id the server lists.
    pub models: Vec<String>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ModelListing {
    pub name: String,
    /// `null` when the server did not answer.
    pub listed: Option<bool>,
}

/// What the knowledge base holds, as the database says. (The place for what the
/// in-memory vector index knows, such as chunks skipped for a dimension other than the
/// embedding model's, is beside `embedding_dimension`.)
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct KnowledgeHealth {
    pub documents: Option<i64>,
    pub chunks: Option<i64>,
    /// The dimension most stored embeddings have.
    pub embedding_dimension: Option<i32>,
    /// Chunks the running service's index refused because their embeddings have
    /// another dimension than the current model's (`bor reembed` embeds them anew); `None`
    /// outside the running service.
    pub dimension_mismatch: Option<usize>,
    /// Chunks of the model's dimension (in the running service, the dimension its index
    /// holds; elsewhere `embedding_dimension`) that another embedding model or document
    /// prefix made than the one configured, as each chunk records it: retrieval compares
    /// their vectors with the model's although they are not alike (`bor reembed` embeds
    /// them anew). Chunks stored before embedders were recorded are not counted.
    pub other_embedder: Option<i64>,
    pub error: Option<String>,
}

/// Runs `probe` under `timeout`, measuring it; a timeout is an error that says so.
async fn timed<T, E: std::error::Error>(
    timeout: Duration,
    probe: impl Future<Output = Result<T, E>>,
) -> (Result<T, String>, f64) {
    let started = Instant::now();
    let result = match tokio::time::timeout(timeout, probe).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error_chain(&error)),
        Err(_) => Err(format!("no answer within {} ms", timeout.as_millis())),
    };
    (result, round_ms(started.elapsed()))
}

fn round_ms(elapsed: Duration) -> f64 {
    (elapsed.as_secs_f64() * 10_000.0).round() / 10.0
}

pub async fn database(pool: &DbPool, url: String, timeout: Duration) -> DatabaseHealth {
    let started = Instant::now();
    let probe = async {
        let mut conn = pool.get().await?;
        diesel::select(diesel::dsl::sql::<Integer>("1"))
            .execute(&mut conn)
            .await?;
        let latency = round_ms(started.elapsed());
        let status = db::migration_status(&mut conn).await?;
        Ok::<_, db::DbError>((latency, status))
    };
    match timed(timeout, probe).await {
        (Ok((latency, status)), _) => DatabaseHealth {
            url,
            reachable: true,
            latency_ms: Some(latency),
            migrations: Some(Migrations {
                applied: status.applied.len(),
                pending: status.pending,
            }),
            error: None,
        },
        (Err(error), _) => DatabaseHealth {
            url,
            reachable: false,
            latency_ms: None,
            migrations: None,
            error: Some(error),
        },
    }
}

/// `embedder`: what makes the vectors now ([`db::chunks::embedder`]); `dimension`: the
/// model's, when known.
pub async fn knowledge(
    pool: &DbPool,
    embedder: &str,
    dimension: Option<usize>,
    timeout: Duration,
) -> KnowledgeHealth {
    let probe = async {
        let mut conn = pool.get().await?;
        db::stats::knowledge_counts(&mut conn, embedder).await
    };
    match timed(timeout, probe).await {
        (Ok(counts), _) => KnowledgeHealth {
            documents: Some(counts.documents),
            chunks: Some(counts.chunks),
            embedding_dimension: counts.common_dimension(),
            dimension_mismatch: None,
            other_embedder: Some(counts.other_embedder(dimension)),
            error: None,
        },
        (Err(error), _) => KnowledgeHealth {
            documents: None,
            chunks: None,
            embedding_dimension: None,
            dimension_mismatch: None,
            other_embedder: None,
            error: Some(error),
        },
    }
}

/// Which of the configured models a server is there for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerRole {
    /// Chat and embeddings, one server.
    Both,
    Chat,
    Embeddings,
}

/// Lists the server's models (one attempt; dropping the request on timeout cancels it)
/// and looks for the models of its `role`.
pub async fn llm(llm: &LlmClient, role: ServerRole, url: String, timeout: Duration) -> LlmHealth {
    let settings = llm.settings();
    let (result, latency) = timed(timeout, llm.list_models()).await;
    let models = result.as_ref().ok().map(Vec::as_slice);
    let listing = |wanted: bool, name: &str| {
        wanted.then(|| ModelListing {
            name: name.to_owned(),
            listed: models.map(|models| models.iter().any(|model| model == name)),
        })
    };
    LlmHealth {
        url,
        reachable: models.is_some(),
        latency_ms: models.map(|_| latency),
        chat_model: listing(role != ServerRole::Embeddings, &settings.chat_model),
        embed_model: listing(role != ServerRole::Chat, &settings.embed_model),
        models: models.map(<[String]>::to_vec).unwrap_or_default(),
        error: result.err(),
    }
}
