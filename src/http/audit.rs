//! `GET /api/admin/audit`: the audit trail, newest first, filtered and paged
//! (docs/PROTOCOL.md, "Audit trail"). No route changes or deletes an entry.

use actix_web::{HttpResponse, get, web};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::admin::Admin;
use super::error::{ApiError, ErrorBody};
use super::params;
use crate::audit::Action;
use crate::db::audit::{self as stored, AuditEntry, AuditFilter};
use crate::state::AppState;

/// Entries on a page at most, and by default.
const MAX_PAGE: i64 = 500;
const DEFAULT_PAGE: i64 = 100;

#[derive(Debug, Deserialize, IntoParams)]
pub struct AuditQuery {
    /// One action (`signed_in`, `sign_in_failed`, `key_created`, …).
    action: Option<String>,
    /// The actor's username (or `service token`, `admin token`, `anonymous`).
    actor: Option<String>,
    /// At or after (RFC 3339).
    since: Option<String>,
    /// Before (RFC 3339).
    until: Option<String>,
    /// The previous page's `next_before`: older entries.
    before: Option<String>,
    /// 1..=500, default 100.
    limit: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AuditPage {
    entries: Vec<AuditEntry>,
    /// Pass as `before` for the next (older) page; `null` on the last.
    next_before: Option<i64>,
}

impl AuditQuery {
    fn filter(&self) -> Result<AuditFilter, ApiError> {
        if let Some(action) = &self.action
            && !Action::ALL.iter().any(|known| known.as_str() == action)
        {
            return Err(ApiError::InvalidJson(format!(
                "`action`: no such action {action:?}"
            )));
        }
        let before = self
            .before
            .as_deref()
            .map(|before| {
                before.parse::<i64>().map_err(|_| {
                    ApiError::InvalidJson("`before` must be a whole number".to_owned())
                })
            })
            .transpose()?;
        Ok(AuditFilter {
            action: self.action.clone(),
            actor: self.actor.clone(),
            since: params::moment("since", self.since.as_deref())?,
            until: params::moment("until", self.until.as_deref())?,
            before,
            limit: params::limit(self.limit.as_deref(), DEFAULT_PAGE, MAX_PAGE)?,
        })
    }
}

/// The audit trail, newest first.
#[utoipa::path(
    tag = "accounts",
    params(AuditQuery),
    responses(
        (status = 200, description = "a page of entries, newest first", body = AuditPage),
        (status = 400, description = "`invalid_json`: a filter that does not parse, or an unknown action", body = ErrorBody),
    )
)]
#[get("/api/admin/audit")]
pub async fn audit_trail(
    _: Admin,
    query: web::Query<AuditQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let filter = query.filter()?;
    let entries = stored::list(&mut *state.pool.get().await?, &filter).await?;
    let next_before = (entries.len() as i64 == filter.limit)
        .then(|| entries.last().map(|entry| entry.id))
        .flatten();
    Ok(HttpResponse::Ok().json(AuditPage {
        entries,
        next_before,
    }))
}
