//! Feedback (docs/PROTOCOL.md, "Feedback"): the asker rates their turn; admins review
//! the rated turns, search as the asker would to find the passages that should have
//! been found, name them (the instance's evaluation set), and run that set.

use std::collections::HashMap;
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, delete, get, post, put, web};
use bor_actors::log::Flush;
use bor_actors::metrics::metrics;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::admin::Admin;
use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use super::params;
use super::search::{SearchBody, SearchResponse, search_as, search_failure};
use crate::auth::Caller;
use crate::auth::access::Refusal;
use crate::db::feedback::{
    self as stored, CollectionRatings, EvalRun, ReviewFilter, ReviewRow, StoredFeedback,
};
use crate::db::users::Role;
use crate::eval::feedback::{FeedbackEvalError, FeedbackEvaluation, evaluate_feedback};
use crate::feedback::{FeedbackBody, Rating, Reason};
use crate::state::AppState;

/// The largest body of the feedback routes (a comment is at most 2,000 characters).
const MAX_FEEDBACK_BODY_BYTES: usize = 32 * 1024;
/// How long a rating waits for its turn's row to be written, when it is still queued.
const ROW_WAIT: Duration = Duration::from_secs(5);
/// Rated turns listed at most, and by default.
const MAX_LISTED: i64 = 1_000;
const DEFAULT_LISTED: i64 = 200;
/// Passages one turn may name.
const MAX_EXPECTED: usize = 20;
/// Runs of the evaluation set listed.
const RUNS_LISTED: i64 = 20;

impl From<FeedbackEvalError> for ApiError {
    fn from(error: FeedbackEvalError) -> Self {
        match error {
            FeedbackEvalError::Database(error) => error.into(),
            FeedbackEvalError::Search { source, .. } => search_failure(source),
        }
    }
}

impl RequestBody for FeedbackBody {
    fn refusal(_: Option<&str>, message: String) -> ApiError {
        ApiError::InvalidFeedback(message)
    }
}

/// The turn `id` if the caller asked it (another's, or one that does not exist, is
/// `not_found` alike). A turn that just ended may still have its row queued: the log
/// is flushed once, bounded, before the turn is called absent.
async fn own_turn(state: &AppState, caller: &Caller, id: &str) -> Result<Uuid, ApiError> {
    let absent = || ApiError::from(Refusal::NoTurn(id.to_owned()));
    let owner = caller.user_row().ok_or(ApiError::NotSignedIn)?;
    let turn_id = Uuid::parse_str(id).map_err(|_| absent())?;
    let mut asker = stored::asker(&mut *state.pool.get().await?, turn_id).await?;
    if asker.is_none() {
        // A timeout or a gone actor leaves the turn absent, as it is to the database.
        let _ = tokio::time::timeout(ROW_WAIT, state.log.send(Flush)).await;
        asker = stored::asker(&mut *state.pool.get().await?, turn_id).await?;
    }
    match asker {
        Some(Some(asker)) if asker == owner => Ok(turn_id),
        _ => Err(absent()),
    }
}

/// `PUT /api/turns/{turn_id}/feedback`: the caller rates their turn (again: the new
/// rating, reason and comment replace the old).
#[utoipa::path(
    tag = "feedback",
    params(("turn_id" = String, Path, description = "the turn's id (`X-Turn-Id`, `done.turn_id`, `/v1`'s `bor.turn_id`)")),
    request_body(content = FeedbackBody, content_type = "application/json"),
    responses(
        (status = 200, description = "the rating as stored", body = StoredFeedback),
        (status = 400, description = "`invalid_feedback`: an unknown rating or reason, a reason with `up`, a comment over 2,000 characters", body = ErrorBody),
        (status = 404, description = "`not_found`: no such turn, or another person's", body = ErrorBody),
    )
)]
#[put("/api/turns/{turn_id}/feedback")]
pub async fn rate(
    caller: Caller,
    path: web::Path<String>,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: FeedbackBody = read_json_body(
        &request,
        payload,
        MAX_FEEDBACK_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let feedback = body.checked().map_err(ApiError::InvalidFeedback)?;
    let turn_id = own_turn(&state, &caller, &path).await?;
    let stored = stored::upsert(
        &mut *state.pool.get().await?,
        turn_id,
        caller.user_id,
        &feedback,
    )
    .await?;
    metrics().count_feedback(
        feedback.rating.as_str(),
        feedback.reason.map_or("none", Reason::as_str),
    );
    Ok(HttpResponse::Ok().json(stored))
}

/// `DELETE /api/turns/{turn_id}/feedback`: the caller takes their rating back.
#[utoipa::path(
    tag = "feedback",
    params(("turn_id" = String, Path, description = "the turn's id")),
    responses(
        (status = 204, description = "no rating is left (there may have been none)"),
        (status = 404, description = "`not_found`: no such turn, or another person's", body = ErrorBody),
    )
)]
#[delete("/api/turns/{turn_id}/feedback")]
pub async fn unrate(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let turn_id = own_turn(&state, &caller, &path).await?;
    stored::delete(&mut *state.pool.get().await?, turn_id, caller.user_id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The filters of `GET /api/admin/feedback`.
#[derive(Debug, Deserialize, IntoParams)]
pub struct ReviewQuery {
    /// `up` or `down`.
    rating: Option<String>,
    /// One of the reasons.
    reason: Option<String>,
    /// Turns one of whose sources is in this collection.
    collection: Option<String>,
    /// Rated at or after (RFC 3339).
    since: Option<String>,
    /// 1..=1000, default 200.
    limit: Option<String>,
}

/// A filter's word (`up`, `missing_source`, …) as its value.
fn word<T: serde::de::DeserializeOwned>(name: &str, value: &str) -> Result<T, ApiError> {
    serde_json::from_value(serde_json::Value::String(value.to_owned()))
        .map_err(|_| ApiError::InvalidJson(format!("`{name}`: no such {name} {value:?}")))
}

impl ReviewQuery {
    fn filter(&self, state: &AppState) -> Result<ReviewFilter, ApiError> {
        let collection_id = match &self.collection {
            None => None,
            Some(name) => Some(
                state
                    .accounts
                    .access
                    .readable(None, Role::Admin)
                    .named(name)
                    .map(|(id, _)| id)
                    .ok_or_else(|| ApiError::from(Refusal::NoCollection(name.clone())))?,
            ),
        };
        Ok(ReviewFilter {
            rating: self
                .rating
                .as_deref()
                .map(|value| word("rating", value))
                .transpose()?,
            reason: self
                .reason
                .as_deref()
                .map(|value| word("reason", value))
                .transpose()?,
            collection_id,
            since: params::moment("since", self.since.as_deref())?,
            limit: params::limit(self.limit.as_deref(), DEFAULT_LISTED, MAX_LISTED)?,
        })
    }
}

/// A source of a rated turn as the review queue shows it: the row's, with the
/// document's collection and source (both `null` once the document is deleted).
#[derive(Debug, Serialize, ToSchema)]
struct ReviewSource {
    #[serde(flatten)]
    #[schema(value_type = Object)]
    source: serde_json::Value,
    collection: Option<String>,
    /// The document's file or address.
    path: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
struct ReviewedTurn {
    turn_id: Uuid,
    rating: Rating,
    reason: Option<Reason>,
    comment: String,
    rated_at: DateTime<Utc>,
    asked_at: DateTime<Utc>,
    /// The asker's username.
    asker: String,
    question: String,
    /// What retrieval searched (`null` on rows from before it was recorded).
    searched_query: Option<String>,
    answer: String,
    /// `grounded` or `deflected`, as the turn went.
    path: String,
    sources: Vec<ReviewSource>,
    /// The passages an admin named as the ones that should have been found; `[]`:
    /// none yet (the turn is not in the evaluation set).
    expected_chunk_ids: Vec<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ReviewList {
    feedback: Vec<ReviewedTurn>,
    /// Every rating counted by the collections of its turn's sources.
    by_collection: Vec<CollectionRatings>,
}

/// `GET /api/admin/feedback`: the review queue, newest rating first (also its export).
#[utoipa::path(
    tag = "feedback",
    params(ReviewQuery),
    responses(
        (status = 200, description = "the rated turns and the ratings per collection", body = ReviewList),
        (status = 400, description = "`invalid_json`: a filter that does not parse", body = ErrorBody),
        (status = 404, description = "`not_found`: no such collection", body = ErrorBody),
    )
)]
#[get("/api/admin/feedback")]
pub async fn review(
    _: Admin,
    query: web::Query<ReviewQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let filter = query.filter(&state)?;
    let mut conn = state.pool.get().await?;
    let rows = stored::review(&mut conn, &filter).await?;
    let document_ids: Vec<i64> = rows
        .iter()
        .flat_map(|row| sources_of(&row.sources))
        .filter_map(|source| source.get("document_id")?.as_i64())
        .collect();
    let places: HashMap<i64, stored::DocumentPlace> = stored::places(&mut conn, &document_ids)
        .await?
        .into_iter()
        .map(|place| (place.document_id, place))
        .collect();
    let by_collection = stored::ratings_by_collection(&mut conn).await?;
    let feedback = rows.into_iter().map(|row| reviewed(row, &places)).collect();
    Ok(HttpResponse::Ok().json(ReviewList {
        feedback,
        by_collection,
    }))
}

fn sources_of(sources: &serde_json::Value) -> &[serde_json::Value] {
    sources.as_array().map_or(&[], Vec::as_slice)
}

fn reviewed(row: ReviewRow, places: &HashMap<i64, stored::DocumentPlace>) -> ReviewedTurn {
    let sources = sources_of(&row.sources)
        .iter()
        .map(|source| {
            let place = source
                .get("document_id")
                .and_then(serde_json::Value::as_i64)
                .and_then(|id| places.get(&id));
            ReviewSource {
                source: source.clone(),
                collection: place.map(|place| place.collection.clone()),
                path: place.and_then(|place| place.source.clone()),
            }
        })
        .collect();
    ReviewedTurn {
        turn_id: row.turn_id,
        rating: row.rating.0,
        reason: row.reason.map(|word| word.0),
        comment: row.comment,
        rated_at: row.rated_at,
        asked_at: row.asked_at,
        asker: row.asker,
        question: row.question,
        searched_query: row.searched_query,
        answer: row.answer,
        path: row.path,
        sources,
        expected_chunk_ids: row.expected_chunk_ids.unwrap_or_default(),
    }
}

/// The rated turn `id` with its asker's readable collections: what an admin searches
/// and names passages among. An unrated turn is `not_found`.
async fn rated_turn(
    state: &AppState,
    id: &str,
) -> Result<(Uuid, stored::RatedTurn, crate::auth::Readable), ApiError> {
    let absent = || ApiError::from(Refusal::NoTurn(id.to_owned()));
    let turn_id = Uuid::parse_str(id).map_err(|_| absent())?;
    let turn = stored::rated_turn(&mut *state.pool.get().await?, turn_id)
        .await?
        .ok_or_else(absent)?;
    let readable = state
        .accounts
        .access
        .readable(Some(turn.asker), Role::from_stored(&turn.asker_role));
    Ok((turn_id, turn, readable))
}

/// `POST /api/admin/feedback/{turn_id}/search`: searches as the rated turn's asker
/// would (only what they can read), with each signal's score: where an admin finds
/// the passages that should have been found.
#[utoipa::path(
    tag = "feedback",
    params(("turn_id" = String, Path, description = "a rated turn's id")),
    request_body(content = SearchBody, content_type = "application/json"),
    responses(
        (status = 200, description = "the search, as `POST /api/search` answers it for the asker", body = SearchResponse),
        (status = 400, description = "as `POST /api/search`", body = ErrorBody),
        (status = 404, description = "`not_found`: no rated turn of that id, or a collection the asker cannot read", body = ErrorBody),
    )
)]
#[post("/api/admin/feedback/{turn_id}/search")]
pub async fn search_as_asker(
    _: Admin,
    path: web::Path<String>,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: SearchBody = read_json_body(
        &request,
        payload,
        super::question::MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let (_, _, readable) = rated_turn(&state, &path).await?;
    Ok(HttpResponse::Ok().json(search_as(&state, &readable, body).await?))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectedBody {
    /// The passages (chunk ids) that should have been found, each readable by the
    /// turn's asker; `[]` takes the turn out of the evaluation set.
    chunk_ids: Vec<i64>,
}

impl RequestBody for ExpectedBody {
    fn refusal(_: Option<&str>, message: String) -> ApiError {
        ApiError::InvalidFeedback(message)
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Expected {
    turn_id: Uuid,
    chunk_ids: Vec<i64>,
}

/// `PUT /api/admin/feedback/{turn_id}/expected`: names the passages that should have
/// been found for a rated turn.
#[utoipa::path(
    tag = "feedback",
    params(("turn_id" = String, Path, description = "a rated turn's id")),
    request_body(content = ExpectedBody, content_type = "application/json"),
    responses(
        (status = 200, description = "the passages as kept", body = Expected),
        (status = 400, description = "`invalid_feedback`: more than 20 passages, or one that does not exist or that the asker cannot read", body = ErrorBody),
        (status = 404, description = "`not_found`: no rated turn of that id", body = ErrorBody),
    )
)]
#[put("/api/admin/feedback/{turn_id}/expected")]
pub async fn set_expected(
    _: Admin,
    caller: Option<Caller>,
    path: web::Path<String>,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: ExpectedBody = read_json_body(
        &request,
        payload,
        MAX_FEEDBACK_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let mut chunk_ids = body.chunk_ids;
    chunk_ids.sort_unstable();
    chunk_ids.dedup();
    if chunk_ids.len() > MAX_EXPECTED {
        return Err(ApiError::InvalidFeedback(format!(
            "at most {MAX_EXPECTED} passages may be named"
        )));
    }
    let (turn_id, _, readable) = rated_turn(&state, &path).await?;
    let mut conn = state.pool.get().await?;
    let places: Vec<stored::ChunkPlace> = stored::chunk_places(&mut conn, &chunk_ids)
        .await?
        .into_iter()
        .filter(|place| readable.can_read(place.collection_id))
        .collect();
    let unknown: Vec<String> = chunk_ids
        .iter()
        .filter(|id| !places.iter().any(|place| place.chunk_id == **id))
        .map(i64::to_string)
        .collect();
    if !unknown.is_empty() {
        return Err(ApiError::InvalidFeedback(format!(
            "no passage the asker can read has the id {}",
            unknown.join(", ")
        )));
    }
    let marked_by = caller.and_then(|caller| caller.user_row());
    stored::set_expected(&mut conn, turn_id, &places, marked_by).await?;
    Ok(HttpResponse::Ok().json(Expected { turn_id, chunk_ids }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EvalRuns {
    /// Newest first, at most 20.
    runs: Vec<EvalRun>,
}

/// `GET /api/admin/eval/feedback`: the runs of the evaluation set, newest first.
#[utoipa::path(
    tag = "feedback",
    responses((status = 200, description = "the kept runs", body = EvalRuns))
)]
#[get("/api/admin/eval/feedback")]
pub async fn eval_runs(_: Admin, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let runs = stored::runs(&mut *state.pool.get().await?, RUNS_LISTED).await?;
    Ok(HttpResponse::Ok().json(EvalRuns { runs }))
}

/// `POST /api/admin/eval/feedback`: runs the evaluation set now with the running
/// settings and keeps the run.
#[utoipa::path(
    tag = "feedback",
    responses(
        (status = 200, description = "the run, with each query's outcome", body = FeedbackEvaluation),
        (status = 503, description = "`unavailable`: the embedding server or the database is unavailable", body = ErrorBody),
    )
)]
#[post("/api/admin/eval/feedback")]
pub async fn run_eval(_: Admin, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let evaluation = evaluate_feedback(
        &state.pool,
        &state.library,
        &state.accounts.access,
        &state.llm,
        state.turn.rerank,
        &state.config,
    )
    .await?;
    Ok(HttpResponse::Ok().json(evaluation))
}
