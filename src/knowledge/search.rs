//! One search as bor serves and measures it: the query embedded, each signal's ranking
//! and their fusion ([`KnowledgeService::search`]), then the cross-encoder's order when
//! re-ranking is configured, with the time each step took. `POST /api/search` answers
//! with it and `bor eval` measures it, so the figures are those of the code the API
//! runs.

use std::time::Instant;

use bor_actors::knowledge::{ChunkHit, Retrieval};
use bor_actors::llm::{EmbedPurpose, LlmClient, LlmError};
use bor_actors::rerank::{self, RerankSettings};

use super::index::CollectionFilter;
use super::rerank::{RerankFailure, rerank_scores};
use super::{KnowledgeService, RANKED_PER_SIGNAL, Rankings};
use crate::db::DbError;

/// What was searched for, and how much of it to keep.
#[derive(Debug, Clone)]
pub struct SearchQuery {
    /// The text searched (the question, with the conversation's earlier one on a
    /// follow-up: `bor_actors::question::searched_query`).
    pub text: String,
    /// Hits kept, best first.
    pub keep: usize,
    /// The collections searched (`None`: all).
    pub scope: Option<CollectionFilter>,
}

/// A search's outcome.
#[derive(Debug)]
pub struct SearchOutcome {
    /// Each signal's ranking of its best chunks (at least [`RANKED_PER_SIGNAL`]), and the
    /// fused one.
    pub rankings: Rankings,
    /// The best `keep` hits: in the cross-encoder's order when it scored them, else fused.
    pub retrieval: Retrieval,
    pub rerank: RerankOutcome,
    pub embedding_ms: f64,
    pub retrieval_ms: f64,
}

/// What re-ranking did.
#[derive(Debug)]
pub enum RerankOutcome {
    /// Re-ranking is off, or there was one candidate or none.
    NotAsked,
    /// The candidates (fused order) with one score each; `retrieval` holds their best.
    Scored {
        candidates: Vec<ChunkHit>,
        scores: Vec<f32>,
        ms: f64,
    },
    /// The server failed or was late: the fused order stands.
    Failed { failure: RerankFailure, ms: f64 },
}

impl RerankOutcome {
    pub fn ms(&self) -> Option<f64> {
        match self {
            RerankOutcome::NotAsked => None,
            RerankOutcome::Scored { ms, .. } | RerankOutcome::Failed { ms, .. } => Some(*ms),
        }
    }
}

/// Why a search gave no outcome.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("embedding the query: {0}")]
    Embedding(#[from] LlmError),
    #[error("embedding the query: the response held no vector")]
    NoVector,
    #[error(transparent)]
    Database(#[from] DbError),
}

impl KnowledgeService {
    /// Searches as `POST /api/search` does: embeds `query.text` with `llm`, ranks, and
    /// re-orders the candidates with `rerank` when it is set.
    pub async fn measured_search(
        &self,
        llm: &LlmClient,
        rerank: Option<RerankSettings>,
        query: SearchQuery,
    ) -> Result<SearchOutcome, SearchError> {
        let SearchQuery { text, keep, scope } = query;
        let started = Instant::now();
        let embedding = llm
            .embed(EmbedPurpose::Query, vec![text.clone()], |_, _| {})
            .await?
            .into_iter()
            .next()
            .ok_or(SearchError::NoVector)?;
        let embedding_ms = milliseconds_since(started);
        let started = Instant::now();
        let candidates = rerank::retrieved(rerank, keep);
        let (rankings, retrieval) = self
            .search(
                text.clone(),
                embedding,
                RANKED_PER_SIGNAL.max(candidates),
                candidates,
                scope,
            )
            .await?;
        let retrieval_ms = milliseconds_since(started);
        let Some(settings) = rerank::to_ask(rerank, &retrieval) else {
            return Ok(SearchOutcome {
                rankings,
                retrieval: retrieval.top(keep),
                rerank: RerankOutcome::NotAsked,
                embedding_ms,
                retrieval_ms,
            });
        };
        let started = Instant::now();
        let scored = rerank_scores(llm, settings, &text, &retrieval.hits).await;
        let ms = milliseconds_since(started);
        let (retrieval, rerank) = match scored {
            Ok(scores) => {
                let candidates = retrieval.hits.clone();
                let reranked = retrieval.reranked(&scores, keep);
                let outcome = RerankOutcome::Scored {
                    candidates,
                    scores,
                    ms,
                };
                (reranked, outcome)
            }
            Err(failure) => (retrieval.top(keep), RerankOutcome::Failed { failure, ms }),
        };
        Ok(SearchOutcome {
            rankings,
            retrieval,
            rerank,
            embedding_ms,
            retrieval_ms,
        })
    }
}

fn milliseconds_since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1e3
}
