//! `GET /api/admin/watched-files`: what the watcher (`bor watch`, `BOR_WATCH`) last did
//! with the files it watches, as `bor check` shows it (docs/PROTOCOL.md, "Document
//! routes").

use actix_web::{HttpResponse, get, web};
use serde::Serialize;
use utoipa::ToSchema;

use super::Admin;
use super::error::{ApiError, ErrorBody};
use crate::db::watched_files::{self, FileState};
use crate::state::AppState;

/// Skipped files listed, the most recent first.
const SKIPPED_LISTED: i64 = 100;

/// The watched files by state, and those skipped with why.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct WatchedFiles {
    pub imported: i64,
    pub skipped: i64,
    pub removed: i64,
    /// At most 100, the most recent first.
    pub skipped_files: Vec<SkippedWatchedFile>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SkippedWatchedFile {
    pub path: String,
    pub reason: Option<String>,
}

/// `GET /api/admin/watched-files`: 200 `{"imported","skipped","removed","skipped_files"}`.
#[utoipa::path(
    tag = "documents",
    security(("admin_token" = [])),
    responses(
        (status = 200, description = "the watched files by state, and those skipped with why", body = WatchedFiles),
        (status = 503, description = "`unavailable`: the database is down", body = ErrorBody),
    )
)]
#[get("/api/admin/watched-files")]
pub async fn watched(_: Admin, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await?;
    let mut report = WatchedFiles::default();
    for (name, count) in watched_files::counts(&mut conn).await? {
        let slot = match name.as_str() {
            name if name == FileState::Imported.as_str() => &mut report.imported,
            name if name == FileState::Skipped.as_str() => &mut report.skipped,
            _ => &mut report.removed,
        };
        *slot = count;
    }
    report.skipped_files = watched_files::skipped(&mut conn, SKIPPED_LISTED)
        .await?
        .into_iter()
        .map(|(path, reason)| SkippedWatchedFile { path, reason })
        .collect();
    Ok(HttpResponse::Ok().json(report))
}
