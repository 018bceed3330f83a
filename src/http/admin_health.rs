//! `GET /api/admin/health`: readiness for operators (admin token). Every dependency is
//! probed at once under a short timeout, so the answer comes within about a second
//! even when one hangs. 503 when the service is `down`, else 200.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpResponse, get, web};

use super::admin::Admin;
use crate::health::{self, HealthReport, Status};
use crate::state::AppState;

/// Readiness for operators.
///
/// The database, the LLM server, the knowledge base, turns, the log queue, the
/// configuration (secrets left out) and uptime. `down` when the database is
/// unreachable; `degraded` when the LLM server is unreachable, a configured model is
/// not listed, or rows wait in the log queue; else `ok`.
#[utoipa::path(
    tag = "operations",
    security(("admin_token" = [])),
    responses(
        (status = 200, description = "`ok` or `degraded`", body = HealthReport),
        (status = 503, description = "`down`: the database is unreachable", body = HealthReport),
    )
)]
#[get("/api/admin/health")]
pub async fn admin_health(_: Admin, state: web::Data<AppState>) -> HttpResponse {
    let report = health::report(&state).await;
    let status = match report.status {
        Status::Down => StatusCode::SERVICE_UNAVAILABLE,
        Status::Ok | Status::Degraded => StatusCode::OK,
    };
    HttpResponse::build(status)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(report)
}
