//! What was used, per day and per user, key, collection and model
//! (docs/PROTOCOL.md, "Usage and limits"): `GET /api/admin/usage` for everyone's,
//! `GET /api/usage` for the caller's own; JSON, or CSV with `?format=csv`.

use std::collections::HashMap;
use std::fmt::Write as _;

use actix_web::http::header;
use actix_web::{HttpResponse, get, web};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::admin::Admin;
use super::error::{ApiError, ErrorBody};
use super::params;
use crate::auth::Caller;
use crate::db::usage::{self as stored, UsageLine};
use crate::state::AppState;

/// Days a report covers when `since` is not given.
const DEFAULT_DAYS: i64 = 30;
/// The longest period one report covers.
const MAX_DAYS: i64 = 366;

#[derive(Debug, Deserialize, IntoParams)]
pub struct UsageQuery {
    /// At or after (RFC 3339); by default 30 days before `until`.
    since: Option<String>,
    /// Before (RFC 3339); by default now.
    until: Option<String>,
    /// `json` (the default) or `csv`.
    format: Option<String>,
}

/// One day's use by one user, key, collection or model.
#[derive(Debug, Serialize, ToSchema)]
pub struct UsageRow {
    /// `YYYY-MM-DD`, UTC.
    day: String,
    /// `user`, `key`, `collection` or `model`.
    dimension: String,
    /// The user's or key's id, the collection's id, or the model's name.
    id: String,
    /// The username, key name, collection name or model (the id of one deleted since).
    name: String,
    turns: i64,
    /// Tokens in (prompts) and out (completions).
    prompt_tokens: i64,
    completion_tokens: i64,
    /// The share of the tokens that is bor's estimate (the server reported none), 0 to 1.
    estimated_share: f64,
    /// The shares of the turns answered from the documents and of those that were not.
    grounded_share: f64,
    deflected_share: f64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct UsageReport {
    since: DateTime<Utc>,
    until: DateTime<Utc>,
    /// By day, then dimension, then id. A turn counts once per dimension, and once
    /// for each collection it drew on.
    rows: Vec<UsageRow>,
}

fn share(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

impl UsageQuery {
    fn period(&self) -> Result<(DateTime<Utc>, DateTime<Utc>), ApiError> {
        let until = params::moment("until", self.until.as_deref())?.unwrap_or_else(Utc::now);
        let since = params::moment("since", self.since.as_deref())?
            .unwrap_or(until - Duration::days(DEFAULT_DAYS));
        if since > until {
            return Err(ApiError::InvalidJson(
                "`since` must not be after `until`".to_owned(),
            ));
        }
        if until - since > Duration::days(MAX_DAYS) {
            return Err(ApiError::InvalidJson(format!(
                "a report covers at most {MAX_DAYS} days"
            )));
        }
        Ok((since, until))
    }

    fn csv(&self) -> Result<bool, ApiError> {
        match self.format.as_deref() {
            None | Some("json") => Ok(false),
            Some("csv") => Ok(true),
            Some(_) => Err(ApiError::InvalidFormat(
                "`format` is `json` or `csv`".to_owned(),
            )),
        }
    }
}

async fn report(
    state: &AppState,
    query: &UsageQuery,
    user: Option<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let csv = query.csv()?;
    let (since, until) = query.period()?;
    let mut conn = state.pool.get().await?;
    let lines = stored::report(&mut conn, since, until, user).await?;
    let names = stored::report_names(&mut conn, &lines).await?;
    let rows: Vec<UsageRow> = lines.into_iter().map(|line| row_of(line, &names)).collect();
    if csv {
        return Ok(HttpResponse::Ok()
            .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
            .insert_header((
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"bor-usage.csv\"",
            ))
            .body(csv_of(&rows)));
    }
    Ok(HttpResponse::Ok().json(UsageReport { since, until, rows }))
}

fn row_of(line: UsageLine, names: &HashMap<(String, String), String>) -> UsageRow {
    let tokens = line.prompt_tokens.saturating_add(line.completion_tokens);
    let name = names
        .get(&(line.dimension.clone(), line.id.clone()))
        .cloned()
        .unwrap_or_else(|| line.id.clone());
    UsageRow {
        estimated_share: share(line.estimated_tokens, tokens),
        grounded_share: share(line.grounded, line.turns),
        deflected_share: share(line.deflected, line.turns),
        day: line.day,
        dimension: line.dimension,
        id: line.id,
        name,
        turns: line.turns,
        prompt_tokens: line.prompt_tokens,
        completion_tokens: line.completion_tokens,
    }
}

/// The rows as CSV (RFC 4180): a header line, then one line per row.
fn csv_of(rows: &[UsageRow]) -> String {
    let mut text = String::from(
        "day,dimension,id,name,turns,prompt_tokens,completion_tokens,estimated_share,grounded_share,deflected_share\r\n",
    );
    for row in rows {
        let _ = write!(
            text,
            "{},{},{},{},{},{},{},{:.4},{:.4},{:.4}\r\n",
            row.day,
            row.dimension,
            csv_field(&row.id),
            csv_field(&row.name),
            row.turns,
            row.prompt_tokens,
            row.completion_tokens,
            row.estimated_share,
            row.grounded_share,
            row.deflected_share,
        );
    }
    text
}

/// A field quoted when it holds a comma, a quote or a line break; a leading `=`, `+`,
/// `-` or `@` is kept from being read as a formula by a spreadsheet.
fn csv_field(value: &str) -> String {
    let value = if value.starts_with(['=', '+', '-', '@']) {
        format!("'{value}")
    } else {
        value.to_owned()
    };
    if value.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value
    }
}

/// Everyone's use, per day and per user, key, collection and model.
#[utoipa::path(
    tag = "usage",
    security(("admin_token" = [])),
    params(UsageQuery),
    responses(
        (status = 200, description = "the report (JSON, or CSV with `format=csv`)", body = UsageReport),
        (status = 400, description = "`invalid_json`: a time that does not parse, or a period over 366 days; `invalid_format`: a format other than json or csv", body = ErrorBody),
    )
)]
#[get("/api/admin/usage")]
pub async fn everyones(
    _: Admin,
    query: web::Query<UsageQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    report(&state, &query, None).await
}

/// The caller's own use, per day and per key, collection and model.
#[utoipa::path(
    tag = "usage",
    params(UsageQuery),
    responses(
        (status = 200, description = "the report (JSON, or CSV with `format=csv`)", body = UsageReport),
        (status = 400, description = "`invalid_json`; `invalid_format`", body = ErrorBody),
    )
)]
#[get("/api/usage")]
pub async fn own(
    caller: Caller,
    query: web::Query<UsageQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let user = caller.user_row().ok_or(ApiError::NotSignedIn)?;
    report(&state, &query, Some(user)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_and_kept_from_formulas() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=SUM(A1)"), "'=SUM(A1)");
    }
}
