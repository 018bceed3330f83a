//! The conversations API (docs/PROTOCOL.md, "Conversations"): list and search, one
//! conversation with its turns, rename, pin, archive, delete, export; what they read and write is in
//! `crate::conversations` and `db::conversations`.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, delete, get, patch, web};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use crate::auth::Caller;
use crate::auth::access::Refusal;
use crate::conversations::{self, Conversation, Listing};
use crate::db::DbPool;
use crate::db::conversations::{self as stored, ConversationChanges, ConversationSummary};
use crate::state::AppState;
/// The longest title a conversation may be given, in characters.
const MAX_TITLE_CHARS: usize = 200;
/// The largest body of a change (a rename, a pin, an archive).
const MAX_CHANGE_BODY_BYTES: usize = 16 * 1024;

/// The query of `GET /api/conversations`.
#[derive(Debug, Deserialize, IntoParams)]
pub struct ListQuery {
    /// Keeps the conversations whose title, questions or answers hold every word of it
    /// (case-insensitive).
    q: Option<String>,
    /// 1..=200, default 50.
    limit: Option<String>,
    /// An `updated_at` of the previous page (RFC 3339): the conversations before it.
    before: Option<String>,
    /// With `before`, the `id` of the previous page's last conversation: conversations
    /// updated at that same moment and listed after it come too, so no page skips one.
    before_id: Option<String>,
    /// `true`: the archived conversations instead of the others (default `false`).
    archived: Option<String>,
    /// `true`: only the pinned ones; `false`: only the others; absent: both.
    pinned: Option<String>,
}

/// `GET /api/conversations`: newest first, searched and paged; the archived ones on
/// their own.
#[utoipa::path(
    tag = "conversations",
    params(ListQuery),
    responses(
        (status = 200, description = "the conversations, newest `updated_at` first", body = [ConversationSummary]),
        (status = 400, description = "`invalid_json`: a `limit`, `before`, `before_id`, `archived` or `pinned` that does not parse, or `before_id` without `before`", body = ErrorBody),
        (status = 503, description = "`unavailable`: the database is down", body = ErrorBody),
    )
)]
#[get("/api/conversations")]
pub async fn list(
    query: web::Query<ListQuery>,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let listing = Listing::parse(
        query.q.as_deref(),
        query.limit.as_deref(),
        query.before.as_deref(),
        query.before_id.as_deref(),
    )
    .map_err(ApiError::InvalidJson)?;
    let filter = conversations::list_filter(query.archived.as_deref(), query.pinned.as_deref())
        .map_err(ApiError::InvalidJson)?;
    let mut conn = connection(&state.pool).await?;
    let listed = stored::list(
        &mut conn,
        owner(&caller)?,
        filter,
        &listing.words,
        listing.limit,
        listing.start,
    )
    .await?;
    Ok(HttpResponse::Ok().json(listed))
}

/// `GET /api/conversations/{id}`: the conversation with its turns.
#[utoipa::path(
    tag = "conversations",
    params(("id" = String, Path, description = "the conversation's id (a UUID)")),
    responses(
        (status = 200, description = "the conversation, turns oldest first", body = Conversation),
        (status = 404, description = "`not_found`: no such conversation, or not a UUID", body = ErrorBody),
        (status = 503, description = "`unavailable`: the database is down", body = ErrorBody),
    )
)]
#[get("/api/conversations/{id}")]
pub async fn one(
    id: web::Path<String>,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let conversation = load(&state, &caller, &id).await?;
    Ok(HttpResponse::Ok().json(conversation))
}

/// The body of a change: any of its fields, at least one.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a JSON object with a `title`, `pinned` or `archived`"
)]
struct ChangeBody {
    /// The new title: 1 to 200 characters after trimming.
    title: Option<String>,
    /// `true` pins the conversation (the chat page lists it first), `false` unpins it.
    pinned: Option<bool>,
    /// `true` archives it (it leaves the list; `GET /api/conversations?archived=true`
    /// lists it), `false` brings it back.
    archived: Option<bool>,
}

/// A title that does not fit is `invalid_title`; any other misfit `invalid_json`.
impl RequestBody for ChangeBody {
    fn refusal(field: Option<&str>, message: String) -> ApiError {
        if field == Some("title") {
            ApiError::InvalidTitle(message)
        } else {
            ApiError::InvalidJson(message)
        }
    }
}

/// `PATCH /api/conversations/{id}` `{"title"?, "pinned"?, "archived"?}`: renamed,
/// pinned or unpinned, archived or brought back.
#[utoipa::path(
    tag = "conversations",
    params(("id" = String, Path, description = "the conversation's id (a UUID)")),
    request_body(content = ChangeBody, content_type = "application/json"),
    responses(
        (status = 200, description = "changed: the conversation as the list shows it", body = ConversationSummary),
        (status = 400, description = "`invalid_title`, or `invalid_json` (no field, an unknown one, or a `pinned` or `archived` that is not a boolean)", body = ErrorBody),
        (status = 404, description = "`not_found`: no such conversation of the caller's, or not a UUID", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`: the body is not JSON", body = ErrorBody),
        (status = 503, description = "`unavailable`: the database is down", body = ErrorBody),
    )
)]
#[patch("/api/conversations/{id}")]
pub async fn change(
    request: HttpRequest,
    payload: web::Payload,
    id: web::Path<String>,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let conversation_id = parse_id(&id)?;
    let body: ChangeBody = read_json_body(
        &request,
        payload,
        MAX_CHANGE_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let title = body.title.as_deref().map(checked_title).transpose()?;
    let changes = ConversationChanges {
        title: title.as_deref(),
        pinned: body.pinned,
        archived: body.archived,
    };
    if changes.is_empty() {
        return Err(ApiError::InvalidJson(
            "the body must hold a `title`, `pinned` or `archived`".to_owned(),
        ));
    }
    let mut conn = connection(&state.pool).await?;
    let changed = stored::change(&mut conn, owner(&caller)?, conversation_id, changes)
        .await?
        .ok_or_else(|| not_found(&id))?;
    Ok(HttpResponse::Ok().json(changed))
}

/// `DELETE /api/conversations/{id}`: the conversation and its turns' rows.
#[utoipa::path(
    tag = "conversations",
    params(("id" = String, Path, description = "the conversation's id (a UUID)")),
    responses(
        (status = 204, description = "deleted, with its turns"),
        (status = 404, description = "`not_found`: no such conversation, or not a UUID", body = ErrorBody),
        (status = 503, description = "`unavailable`: the database is down", body = ErrorBody),
    )
)]
#[delete("/api/conversations/{id}")]
pub async fn remove(
    id: web::Path<String>,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let conversation_id = parse_id(&id)?;
    let mut conn = connection(&state.pool).await?;
    if stored::delete(&mut conn, owner(&caller)?, conversation_id).await? {
        // Its announcement reaches this instance too, a moment later: a turn asked
        // right after the answer must not see the history deleted.
        state.histories.cache().forget(conversation_id);
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(not_found(&id))
    }
}

/// The query of an export.
#[derive(Debug, Deserialize, IntoParams)]
pub struct ExportQuery {
    /// `markdown` (default) or `json`.
    format: Option<String>,
}

/// `GET /api/conversations/{id}/export?format=markdown|json`: a file to keep.
#[utoipa::path(
    tag = "conversations",
    params(("id" = String, Path, description = "the conversation's id (a UUID)"), ExportQuery),
    responses(
        (status = 200, description = "`text/markdown` (title, each question and answer with its sources) or `application/json` (as `GET /api/conversations/{id}`), as an attachment"),
        (status = 400, description = "`invalid_format`", body = ErrorBody),
        (status = 404, description = "`not_found`: no such conversation, or not a UUID", body = ErrorBody),
        (status = 503, description = "`unavailable`: the database is down", body = ErrorBody),
    )
)]
#[get("/api/conversations/{id}/export")]
pub async fn export(
    id: web::Path<String>,
    query: web::Query<ExportQuery>,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let format = query.format.as_deref().unwrap_or("markdown");
    if !matches!(format, "markdown" | "json") {
        return Err(ApiError::InvalidFormat(
            "`format` must be markdown or json".to_owned(),
        ));
    }
    let conversation = load(&state, &caller, &id).await?;
    let (content_type, extension, body) = if format == "json" {
        let body = serde_json::to_vec_pretty(&conversation)
            .map_err(|error| ApiError::internal("exporting a conversation as JSON", error))?;
        ("application/json", "json", body)
    } else {
        let body = conversations::markdown(&conversation).into_bytes();
        ("text/markdown; charset=utf-8", "md", body)
    };
    Ok(HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!(
                "attachment; filename=\"conversation-{}.{extension}\"",
                conversation.id
            ),
        ))
        .body(body))
}

async fn load(state: &AppState, caller: &Caller, id: &str) -> Result<Conversation, ApiError> {
    conversations::load(&state.pool, owner(caller)?, parse_id(id)?)
        .await?
        .ok_or_else(|| not_found(id))
}

/// Whose conversations the caller sees: their own (a caller without a user row has
/// none).
fn owner(caller: &Caller) -> Result<Uuid, ApiError> {
    caller.user_row().ok_or(ApiError::NotSignedIn)
}

fn parse_id(id: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(id).map_err(|_| not_found(id))
}

/// Another person's conversation is answered as one that does not exist.
fn not_found(id: &str) -> ApiError {
    Refusal::NoConversation(id.to_owned()).into()
}

/// The title trimmed, 1 to [`MAX_TITLE_CHARS`] characters, storable.
fn checked_title(title: &str) -> Result<String, ApiError> {
    let title = title.trim();
    let length = title.chars().count();
    if length == 0 || length > MAX_TITLE_CHARS {
        return Err(ApiError::InvalidTitle(format!(
            "`title` must hold 1 to {MAX_TITLE_CHARS} characters"
        )));
    }
    Ok(crate::db::storable_text(title).into_owned())
}

async fn connection(pool: &DbPool) -> Result<crate::db::DbConnection, ApiError> {
    pool.get().await.map_err(ApiError::from)
}
