//! `POST /api/search` (docs/PROTOCOL.md, "Search"): the retrieval a turn would do for a
//! query, without the chat model — the fused top with each signal's own score and
//! rank, whether a turn would be grounded, and how long embedding and ranking took. The
//! tool to see why an answer missed.

use std::collections::HashMap;

use actix_web::{HttpRequest, HttpResponse, post, web};
use bor_actors::knowledge::ChunkHit;
use bor_actors::llm::LlmClient;
use bor_actors::question::searched_query;
use bor_actors::record::snippet_of;
use bor_actors::rerank::order_by_score;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use super::question::{HistoryEntry, MAX_BODY_BYTES, checked_question, history_messages};
use crate::auth::{Caller, Readable};
use crate::knowledge::search::{RerankOutcome, SearchError, SearchOutcome, SearchQuery};
use crate::knowledge::{RANKED_PER_SIGNAL, RankedChunk};
use crate::state::AppState;

/// The body of `POST /api/search`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(expecting = "a JSON object with a `query`")]
pub struct SearchBody {
    /// Not empty after trimming, at most `BOR_MAX_MESSAGE_CHARS` characters.
    query: String,
    /// Results, 1 to 50; absent, `BOR_RETRIEVAL_TOP_K` (what a turn retrieves).
    #[serde(default)]
    top_k: Option<usize>,
    /// Only these collections (each readable by the caller); absent, every readable one.
    #[serde(default)]
    collections: Option<Vec<String>>,
    /// The conversation before the query, oldest first, at most 20 entries: searched as
    /// a turn of it would search (`query` in the response).
    #[serde(default)]
    history: Option<Vec<HistoryEntry>>,
}

/// A `history` that does not fit is `invalid_history`, as on `/api/chat`.
impl RequestBody for SearchBody {
    fn refusal(field: Option<&str>, message: String) -> ApiError {
        match field {
            Some("history") => ApiError::InvalidHistory(message),
            _ => ApiError::InvalidJson(message),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SearchResponse {
    /// What was searched: the query, then the history's last question when there is
    /// one (what a turn of that conversation searches).
    query: String,
    /// Whether a turn asking this would be grounded (docs/PROTOCOL.md, "Grounded and
    /// deflected").
    grounded: bool,
    /// Best first: in re-ranked order when re-ranking is on and answered, else in
    /// fused order.
    results: Vec<SearchResult>,
    /// Why the fused order stands although re-ranking is on (the re-ranking server
    /// failed or was too slow); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    rerank_error: Option<String>,
    timings_ms: Timings,
}

#[derive(Debug, Serialize, ToSchema)]
struct SearchResult {
    chunk_id: i64,
    document_id: i64,
    /// The name of the document's collection.
    collection: String,
    title: String,
    /// The headings above the chunk, outermost first (`""` when none).
    heading: String,
    /// The PDF page the chunk starts on.
    page: Option<u32>,
    /// The chunk's text, whitespace collapsed, at most 300 characters.
    snippet: String,
    /// Its cosine similarity to the query (as a turn's `sources` give it).
    score: f32,
    signals: Signals,
}

/// Each ranking's place for the chunk; `null` where a signal did not rank it among its
/// best 50.
#[derive(Debug, Serialize, ToSchema)]
struct Signals {
    /// Cosine similarity of the embeddings.
    vector: Option<Signal>,
    /// BM25 of the query's words.
    full_text: Option<Signal>,
    /// The mean of the two signals' scores, each min-max scaled over its list: 0 to 1
    /// (docs/RETRIEVAL.md, "Hybrid ranking").
    fused: Signal,
    /// The re-ranking server's score and its rank among the candidates; absent when
    /// re-ranking is off or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    rerank: Option<Signal>,
}

#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
struct Signal {
    score: f64,
    /// From 1.
    rank: usize,
}

#[derive(Debug, Serialize, ToSchema)]
struct Timings {
    /// Embedding the query through the embedding server.
    embedding: f64,
    /// Ranking in memory: both signals and their fusion.
    retrieval: f64,
    /// Re-ranking the candidates on the re-ranking server; absent when it is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    rerank: Option<f64>,
}

/// Each chunk's place in `ranking`.
fn places(ranking: &[RankedChunk]) -> HashMap<i64, Signal> {
    ranking
        .iter()
        .enumerate()
        .map(|(index, chunk)| {
            let signal = Signal {
                score: chunk.score,
                rank: index + 1,
            };
            (chunk.chunk_id, signal)
        })
        .collect()
}

/// Each hit's re-ranking score and its rank by it (`scores[i]` is `hits[i]`'s).
fn rerank_places(hits: &[ChunkHit], scores: &[f32]) -> HashMap<i64, Signal> {
    order_by_score(scores)
        .into_iter()
        .enumerate()
        .filter_map(|(index, position)| {
            let signal = Signal {
                score: f64::from(*scores.get(position)?),
                rank: index + 1,
            };
            Some((hits.get(position)?.chunk_id, signal))
        })
        .collect()
}

/// Runs `query` as `POST /api/search` and the MCP `search` tool do, and gives the name
/// of each hit's collection (by document id) with its outcome.
pub(super) async fn search_with_collections(
    state: &AppState,
    query: SearchQuery,
) -> Result<(SearchOutcome, HashMap<i64, String>), ApiError> {
    let llm = LlmClient::new(state.llm.clone());
    let outcome = state
        .library
        .measured_search(&llm, state.turn.rerank, query)
        .await
        .map_err(search_failure)?;
    let document_ids: Vec<i64> = outcome
        .retrieval
        .hits
        .iter()
        .map(|hit| hit.document_id)
        .collect();
    let collections =
        crate::db::documents::collection_names(&mut *state.pool.get().await?, &document_ids)
            .await?;
    Ok((outcome, collections))
}

/// Searches the knowledge base as a turn would.
#[utoipa::path(
    tag = "documents",
    request_body(content = SearchBody, content_type = "application/json"),
    responses(
        (status = 200, description = "the fused top with each signal's score and rank", body = SearchResponse),
        (status = 400, description = "`invalid_json` (also a `top_k` outside 1 to 50), `invalid_history`, `empty_message` or `message_too_long`", body = ErrorBody),
        (status = 404, description = "`not_found`: a collection named is absent, or not readable by the caller", body = ErrorBody),
        (status = 413, description = "`body_too_large`: the body is over 256 KiB", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`: the body is not JSON", body = ErrorBody),
        (status = 503, description = "`unavailable`: the embedding server or the database is unavailable", body = ErrorBody),
    )
)]
#[post("/api/search")]
pub async fn search(
    caller: Caller,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: SearchBody = read_json_body(
        &request,
        payload,
        MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    Ok(HttpResponse::Ok().json(search_as(&state, &caller.readable, body).await?))
}

/// A search that could not be done, as the API answers it.
pub(super) fn search_failure(error: SearchError) -> ApiError {
    match error {
        SearchError::Embedding(error) => ApiError::embedding(error),
        SearchError::NoVector => {
            ApiError::unavailable("embedding the query", "the response held no vector")
        }
        SearchError::Database(error) => error.into(),
    }
}

/// The search of `body` among the collections `readable` lets it read: `/api/search`'s
/// for its caller, and the review queue's for a rated turn's asker.
pub(super) async fn search_as(
    state: &AppState,
    readable: &Readable,
    body: SearchBody,
) -> Result<SearchResponse, ApiError> {
    let question = checked_question(&body.query, state.config.max_message_chars)?;
    let history = history_messages(body.history.unwrap_or_default())?;
    let query = searched_query(question, &history);
    let top_k = body.top_k.unwrap_or(state.turn.top_k);
    if !(1..=RANKED_PER_SIGNAL).contains(&top_k) {
        return Err(ApiError::InvalidJson(format!(
            "`top_k` must be from 1 to {RANKED_PER_SIGNAL}"
        )));
    }
    let scope = readable.scope(body.collections.as_deref())?;

    let searched = SearchQuery {
        text: query.clone(),
        keep: top_k,
        scope,
    };
    let (outcome, collections) = search_with_collections(state, searched).await?;
    let rerank_ms = outcome.rerank.ms();
    let SearchOutcome {
        rankings,
        retrieval,
        rerank,
        embedding_ms,
        retrieval_ms,
    } = outcome;
    let (reranked, rerank_error) = match rerank {
        RerankOutcome::NotAsked => (HashMap::new(), None),
        RerankOutcome::Scored {
            candidates, scores, ..
        } => (rerank_places(&candidates, &scores), None),
        RerankOutcome::Failed { failure, .. } => {
            tracing::warn!(error = %bor_actors::error_chain(&failure), "re-ranking failed; the fused order is used");
            (HashMap::new(), Some(failure.to_string()))
        }
    };

    let (vector, full_text, fused) = (
        places(&rankings.by_cosine),
        places(&rankings.by_text),
        places(&rankings.fused),
    );
    let results = retrieval
        .hits
        .iter()
        .filter_map(|hit| {
            let signals = Signals {
                vector: vector.get(&hit.chunk_id).copied(),
                full_text: full_text.get(&hit.chunk_id).copied(),
                fused: fused.get(&hit.chunk_id).copied()?,
                rerank: reranked.get(&hit.chunk_id).copied(),
            };
            Some(SearchResult {
                chunk_id: hit.chunk_id,
                document_id: hit.document_id,
                collection: collections.get(&hit.document_id).cloned()?,
                title: hit.title.clone(),
                heading: hit.heading.clone(),
                page: hit.page,
                snippet: snippet_of(&hit.text),
                score: hit.score,
                signals,
            })
        })
        .collect();
    Ok(SearchResponse {
        query,
        grounded: retrieval.is_grounded(state.turn.deflect_threshold),
        results,
        rerank_error,
        timings_ms: Timings {
            embedding: embedding_ms,
            retrieval: retrieval_ms,
            rerank: rerank_ms,
        },
    })
}
