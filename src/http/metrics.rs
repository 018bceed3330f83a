//! `GET /metrics`: the process's metrics in the Prometheus text format. Gauges that
//! describe the present (turns in flight, the log queue, the frames kept, the database
//! pool) are read at scrape time.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpResponse, ResponseError, get, web};
use bor_actors::frame_hub::GetHubStats;
use bor_actors::log::GetLogStats;
use bor_actors::metrics::{CONTENT_TYPE, metrics};

use super::error::ApiError;
use crate::health::turns_in_flight;
use crate::state::AppState;

/// How long a scrape waits for the LogActor's queue depth, and for the frame hub's
/// figures.
const LOG_STATS_TIMEOUT: Duration = Duration::from_millis(500);

/// Metrics in the Prometheus text format.
#[utoipa::path(
    tag = "operations",
    responses((status = 200, description = "Prometheus text format (version 0.0.4)", content_type = "text/plain", body = String))
)]
#[get("/metrics")]
pub async fn scrape(state: web::Data<AppState>) -> HttpResponse {
    let metrics = metrics();
    metrics.set_turns_in_flight(turns_in_flight(&state));
    match tokio::time::timeout(LOG_STATS_TIMEOUT, state.log.send(GetLogStats)).await {
        Ok(Ok(stats)) => metrics.set_log_queue_depth(stats.queued),
        _ => tracing::warn!("the log actor did not report its queue for the metrics"),
    }
    match tokio::time::timeout(LOG_STATS_TIMEOUT, state.frame_hub.send(GetHubStats)).await {
        Ok(Ok(kept)) => metrics.set_frames_kept(kept.turns, kept.bytes),
        _ => tracing::warn!("the frame hub did not report what it keeps for the metrics"),
    }
    let (histories, bytes) = state.histories.cache().size();
    metrics.set_history_cache(histories, bytes);
    let pool = state.pool.status();
    metrics.set_db_pool(pool.max_size, pool.size, pool.available, pool.waiting);
    match metrics.encode() {
        Ok(text) => HttpResponse::Ok()
            .content_type(CONTENT_TYPE)
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .body(text),
        Err(error) => ApiError::internal("encoding the metrics", error).error_response(),
    }
}
