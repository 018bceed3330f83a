//! Limits on turns and tokens (docs/PROTOCOL.md, "Usage and limits"):
//! `GET`/`POST /api/admin/limits`, `DELETE /api/admin/limits/{id}`.

use actix_web::{HttpRequest, HttpResponse, delete, get, post, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;
use uuid::Uuid;

use super::admin::Admin;
use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use crate::audit::{self, Action, Event};
use crate::db::groups::{self, EVERYONE};
use crate::db::usage::{self as stored, LimitRow, NewLimit, SubjectNames};
use crate::db::{DbConnection, api_keys, users};
use crate::state::AppState;
use crate::usage::Subject;

const MAX_BODY_BYTES: usize = 16 * 1024;

/// A limit as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct LimitView {
    id: i64,
    /// `user`, `group`, `key` or `everyone`.
    subject: String,
    /// The username, group name or key name (`everyone` for everyone).
    name: String,
    /// The user's, group's or key's id; absent for everyone.
    #[serde(skip_serializing_if = "Option::is_none")]
    subject_id: Option<Uuid>,
    turns_per_day: Option<i64>,
    tokens_per_day: Option<i64>,
    tokens_per_month: Option<i64>,
    created_at: DateTime<Utc>,
}

impl LimitView {
    fn of(row: LimitRow, names: &SubjectNames) -> LimitView {
        let name = Subject::of_row(&row).map_or_else(String::new, |s| names.name_of(s.id()));
        LimitView {
            id: row.id,
            subject: row.subject,
            name,
            subject_id: row.subject_id,
            turns_per_day: row.turns_per_day,
            tokens_per_day: row.tokens_per_day,
            tokens_per_month: row.tokens_per_month,
            created_at: row.created_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct LimitList {
    limits: Vec<LimitView>,
}

/// `GET /api/admin/limits`: every limit, oldest first.
#[utoipa::path(
    tag = "usage",
    security(("admin_token" = [])),
    responses((status = 200, description = "the limits", body = LimitList))
)]
#[get("/api/admin/limits")]
pub async fn list(_: Admin, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await?;
    let rows = stored::all(&mut conn).await?;
    let names = stored::subject_names(&mut conn, &rows).await?;
    Ok(HttpResponse::Ok().json(LimitList {
        limits: rows
            .into_iter()
            .map(|row| LimitView::of(row, &names))
            .collect(),
    }))
}

/// The body of `POST /api/admin/limits`: one subject, and at least one measure.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitBody {
    /// A username.
    #[serde(default)]
    user: Option<String>,
    /// A group's name (`everyone` is the same as `"everyone": true`).
    #[serde(default)]
    group: Option<String>,
    /// An API key's id.
    #[serde(default)]
    key: Option<Uuid>,
    /// `true`: every person who has no limit of that measure of their own or of a group.
    #[serde(default)]
    everyone: Option<bool>,
    #[serde(default)]
    turns_per_day: Option<u64>,
    #[serde(default)]
    tokens_per_day: Option<u64>,
    #[serde(default)]
    tokens_per_month: Option<u64>,
}

impl RequestBody for LimitBody {}

fn invalid(message: &str) -> ApiError {
    ApiError::InvalidJson(message.to_owned())
}

/// The subject the body names, found.
async fn subject_of(state: &AppState, body: &LimitBody) -> Result<Subject, ApiError> {
    let named = [
        body.user.is_some(),
        body.group.is_some(),
        body.key.is_some(),
        body.everyone.is_some(),
    ];
    if named.iter().filter(|n| **n).count() != 1 {
        return Err(invalid(
            "name one of `user`, `group`, `key` or `everyone` for the limit",
        ));
    }
    let mut conn = state.pool.get().await?;
    if let Some(name) = &body.user {
        let user = users::find_by_username(&mut conn, name).await?;
        return user
            .map(|user| Subject::User(user.id))
            .ok_or_else(|| ApiError::UnknownName(format!("no user {name}")));
    }
    if let Some(name) = &body.group {
        if name == EVERYONE {
            return Ok(Subject::Everyone);
        }
        let group = groups::by_name(&mut conn, name).await?;
        return group
            .map(|group| Subject::Group(group.id))
            .ok_or_else(|| ApiError::UnknownName(format!("no group {name}")));
    }
    if let Some(id) = body.key {
        let key = api_keys::find(&mut conn, id).await?;
        return key
            .map(|key| Subject::Key(key.id))
            .ok_or_else(|| ApiError::UnknownName(format!("no API key {id}")));
    }
    match body.everyone {
        Some(true) => Ok(Subject::Everyone),
        _ => Err(invalid("`everyone` is `true` when given")),
    }
}

/// `POST /api/admin/limits`: sets the subject's limit (replacing the one it had).
#[utoipa::path(
    tag = "usage",
    security(("admin_token" = [])),
    request_body = LimitBody,
    responses(
        (status = 201, description = "set", body = LimitView),
        (status = 400, description = "`invalid_json`: no subject, two, no measure or a measure out of range; `unknown_name`: no such user, group or key", body = ErrorBody),
    )
)]
#[post("/api/admin/limits")]
pub async fn set(
    _: Admin,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: LimitBody = read_json_body(
        &request,
        payload,
        MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let measure = |value: Option<u64>| {
        value
            .map(|n| i64::try_from(n).map_err(|_| invalid("a limit is at most 2^63 - 1")))
            .transpose()
    };
    let limit = NewLimit {
        subject: "",
        subject_id: None,
        turns_per_day: measure(body.turns_per_day)?,
        tokens_per_day: measure(body.tokens_per_day)?,
        tokens_per_month: measure(body.tokens_per_month)?,
    };
    if limit.turns_per_day.is_none()
        && limit.tokens_per_day.is_none()
        && limit.tokens_per_month.is_none()
    {
        return Err(invalid(
            "give at least one of `turns_per_day`, `tokens_per_day` and `tokens_per_month`",
        ));
    }
    let subject = subject_of(&state, &body).await?;
    let limit = NewLimit {
        subject: subject.kind(),
        subject_id: subject.id(),
        ..limit
    };
    let mut conn = state.pool.get().await?;
    let row = stored::set(&mut conn, &limit).await?;
    let view = changed(&state, &request, conn, row, Action::LimitSet, |view| {
        json!({
            "id": view.id,
            "turns_per_day": view.turns_per_day,
            "tokens_per_day": view.tokens_per_day,
            "tokens_per_month": view.tokens_per_month,
        })
    })
    .await?;
    Ok(HttpResponse::Created().json(view))
}

/// `DELETE /api/admin/limits/{id}`: 204.
#[utoipa::path(
    tag = "usage",
    security(("admin_token" = [])),
    params(("id" = i64, Path, description = "the limit's id")),
    responses(
        (status = 204, description = "removed"),
        (status = 404, description = "`not_found`", body = ErrorBody),
    )
)]
#[delete("/api/admin/limits/{id}")]
pub async fn remove(
    _: Admin,
    request: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let no_limit = || ApiError::NotFound(format!("no limit {id}"));
    let number: i64 = id.parse().map_err(|_| no_limit())?;
    let mut conn = state.pool.get().await?;
    let Some(row) = stored::delete(&mut conn, number).await? else {
        return Err(no_limit());
    };
    changed(
        &state,
        &request,
        conn,
        row,
        Action::LimitRemoved,
        |view| json!({"id": view.id}),
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// After a limit was set or removed: this instance reads the limits again (the others
/// when the trigger's notification reaches them), and the trail says what changed
/// (`details` of the limit). The limit as the API shows it.
async fn changed(
    state: &AppState,
    request: &HttpRequest,
    mut conn: DbConnection,
    row: LimitRow,
    action: Action,
    details: fn(&LimitView) -> serde_json::Value,
) -> Result<LimitView, ApiError> {
    let names = stored::subject_names(&mut conn, std::slice::from_ref(&row)).await?;
    drop(conn);
    state.usage.read_limits().await?;
    let view = LimitView::of(row, &names);
    let subject = format!("{} {}", view.subject, view.name);
    let event = Event::of(request, action, subject).with(details(&view));
    audit::record(&state.pool, event).await;
    Ok(view)
}
