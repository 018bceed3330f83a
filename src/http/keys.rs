//! API keys for scripts and OpenAI clients (docs/PROTOCOL.md, "Accounts"): the caller's
//! own, listed, made (the key shown once, with an optional expiry) and revoked; and
//! anyone's, listed and revoked by an admin. The OAuth clients a person allowed
//! (docs/MCP.md, "OAuth") are listed and revoked beside them.

use actix_web::{HttpRequest, HttpResponse, delete, get, post, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::admin::Admin;
use super::auth::MAX_AUTH_BODY_BYTES;
use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use crate::audit::{self, Action, Event};
use crate::auth::{Caller, Via, secret};
use crate::db::api_keys::{self, ApiKeySummary, NewApiKey};
use crate::db::{oauth, users};
use crate::state::AppState;

/// Characters a key's name has at most.
pub const MAX_KEY_NAME_CHARS: usize = 100;

/// The keys a caller with a user of their own may manage: the service token has none.
fn key_owner(caller: &Caller) -> Result<Uuid, ApiError> {
    match caller.via {
        Via::ServiceToken => Err(ApiError::Forbidden),
        _ => Ok(caller.user_id),
    }
}

/// What a listed credential is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyKind {
    /// An API key (`bor_…`).
    ApiKey,
    /// An OAuth client the person allowed: its `name` is the client's, and revoking it
    /// ends every token it holds (`bor_oat_…`, `bor_ort_…`).
    Oauth,
}

/// A key or an OAuth grant, as a list shows it.
#[derive(Serialize, ToSchema)]
pub struct ListedKey {
    #[serde(flatten)]
    key: ApiKeySummary,
    kind: KeyKind,
}

#[derive(Serialize, ToSchema)]
pub struct KeyList {
    keys: Vec<ListedKey>,
}

/// The keys and OAuth grants of `owner`, newest first.
async fn keys_of(state: &AppState, owner: Uuid) -> Result<KeyList, ApiError> {
    let mut conn = state.pool.get().await?;
    let keys = api_keys::of_user(&mut conn, owner).await?;
    let grants = oauth::grants_of_user(&mut conn, owner).await?;
    let mut listed: Vec<ListedKey> = keys
        .into_iter()
        .map(|key| ListedKey {
            key,
            kind: KeyKind::ApiKey,
        })
        .chain(grants.into_iter().map(|(grant, client)| ListedKey {
            key: ApiKeySummary {
                id: grant.id,
                name: client,
                prefix: secret::ACCESS_TOKEN_PREFIX.to_owned(),
                created_at: grant.created_at,
                last_used_at: grant.last_used_at,
                expires_at: None,
            },
            kind: KeyKind::Oauth,
        }))
        .collect();
    listed.sort_by_key(|listed| std::cmp::Reverse(listed.key.created_at));
    Ok(KeyList { keys: listed })
}

/// `GET /api/keys`: the caller's keys and the OAuth clients they allowed, newest first
/// (never a key or token itself).
#[utoipa::path(
    tag = "accounts",
    responses(
        (status = 200, description = "the caller's keys", body = KeyList),
        (status = 401, description = "`unauthorized`", body = ErrorBody),
    )
)]
#[get("/api/keys")]
pub async fn list(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let owner = key_owner(&caller)?;
    Ok(HttpResponse::Ok().json(keys_of(&state, owner).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKeyBody {
    /// What the key is for (1 to 100 characters).
    name: String,
    /// When the key stops working (RFC 3339, in the future); absent: never.
    expires_at: Option<DateTime<Utc>>,
}

impl RequestBody for NewKeyBody {}

/// A new key: the only time the key itself is shown.
#[derive(Serialize, ToSchema)]
pub struct NewKey {
    id: Uuid,
    name: String,
    /// `bor_…`, for `Authorization: Bearer`.
    key: String,
    /// When the key stops working; `null`: never.
    expires_at: Option<DateTime<Utc>>,
}

/// `POST /api/keys` `{"name","expires_at"?}`: 201 `{"id","name","key","expires_at"}`;
/// past `expires_at` the key answers 401.
#[utoipa::path(
    tag = "accounts",
    request_body = NewKeyBody,
    responses(
        (status = 201, description = "made; the key is shown this once", body = NewKey),
        (status = 400, description = "`invalid_json` (an `expires_at` that is not a time in the future), or `invalid_name`: empty or over 100 characters", body = ErrorBody),
        (status = 401, description = "`unauthorized`", body = ErrorBody),
        (status = 403, description = "`forbidden_origin`: from another site", body = ErrorBody),
    )
)]
#[post("/api/keys")]
pub async fn create(
    caller: Caller,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let owner = key_owner(&caller)?;
    let body: NewKeyBody = read_json_body(
        &request,
        payload,
        MAX_AUTH_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let name = body.name.trim();
    if name.is_empty() || name.chars().count() > MAX_KEY_NAME_CHARS {
        return Err(ApiError::InvalidName(format!(
            "a key's name has 1 to {MAX_KEY_NAME_CHARS} characters"
        )));
    }
    if body
        .expires_at
        .is_some_and(|expires_at| expires_at <= Utc::now())
    {
        return Err(ApiError::InvalidJson(
            "expires_at: a key's expiry must be in the future".to_owned(),
        ));
    }
    let issued = secret::new_api_key()
        .map_err(|error| ApiError::internal("making an API key", error.to_string()))?;
    let new = NewApiKey {
        id: Uuid::new_v4(),
        user_id: owner,
        name,
        prefix: secret::visible_prefix(&issued.token),
        key_sha256: &issued.sha256,
        expires_at: body.expires_at,
    };
    let mut conn = state.pool.get().await?;
    api_keys::insert(&mut conn, &new).await?;
    if let Some(row) = api_keys::find(&mut conn, new.id).await? {
        state.accounts.cache.remember_key(&row);
    }
    let made = Event::of(&request, Action::KeyCreated, name)
        .with(serde_json::json!({"key_id": new.id, "expires_at": body.expires_at}));
    audit::record(&state.pool, made).await;
    Ok(HttpResponse::Created().json(NewKey {
        id: new.id,
        name: name.to_owned(),
        key: issued.token,
        expires_at: body.expires_at,
    }))
}

/// `DELETE /api/keys/{id}`: 204; the key (or every token of the OAuth grant) answers
/// 401 at once, on every instance. Another person's key is 404 like an absent one.
#[utoipa::path(
    tag = "accounts",
    params(("id" = String, Path, description = "the key's id")),
    responses(
        (status = 204, description = "revoked"),
        (status = 401, description = "`unauthorized`", body = ErrorBody),
        (status = 403, description = "`forbidden_origin`: from another site", body = ErrorBody),
        (status = 404, description = "`not_found`: no such key of the caller's", body = ErrorBody),
    )
)]
#[delete("/api/keys/{id}")]
pub async fn revoke(
    caller: Caller,
    request: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let owner = key_owner(&caller)?;
    revoke_key_of(&state, &request, owner, &id).await
}

/// Revokes key `key_id` (as the path gives it) of `owner`: 204, else 404.
async fn revoke_key_of(
    state: &AppState,
    request: &HttpRequest,
    owner: Uuid,
    key_id: &str,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::NotFound("no such key".to_owned());
    let id = Uuid::parse_str(key_id).map_err(|_| not_found())?;
    let mut conn = state.pool.get().await?;
    let Some(name) = api_keys::find(&mut conn, id)
        .await?
        .filter(|key| key.user_id == owner)
        .map(|key| key.name)
    else {
        return revoke_grant_of(state, request, owner, id).await;
    };
    if !api_keys::delete_of_user(&mut conn, id, owner).await? {
        return Err(not_found());
    }
    state.accounts.cache.forget_key(id);
    let revoked = Event::of(request, Action::KeyRevoked, name)
        .with(serde_json::json!({"key_id": id, "owner_id": owner}));
    audit::record(&state.pool, revoked).await;
    Ok(HttpResponse::NoContent().finish())
}

/// Revokes the OAuth grant `id` of `owner` with every token it holds: 204, else 404.
async fn revoke_grant_of(
    state: &AppState,
    request: &HttpRequest,
    owner: Uuid,
    id: Uuid,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::NotFound("no such key".to_owned());
    let mut conn = state.pool.get().await?;
    let grant = oauth::find_grant(&mut conn, id)
        .await?
        .filter(|grant| grant.user_id == owner)
        .ok_or_else(not_found)?;
    if !oauth::delete_grant(&mut conn, id).await? {
        return Err(not_found());
    }
    state.accounts.cache.forget_tokens_of_grant(id);
    let client = oauth::find_client(&mut conn, &grant.client_id)
        .await?
        .map_or_else(|| grant.client_id.clone(), |client| client.name);
    let revoked = Event::of(request, Action::OAuthTokensRevoked, client)
        .with(serde_json::json!({"grant_id": id, "client_id": grant.client_id, "owner_id": owner}));
    audit::record(&state.pool, revoked).await;
    Ok(HttpResponse::NoContent().finish())
}

/// The user the path names, when they exist.
async fn existing_user(state: &AppState, id: &str) -> Result<Uuid, ApiError> {
    let not_found = || ApiError::NotFound("no such user".to_owned());
    let id = Uuid::parse_str(id).map_err(|_| not_found())?;
    let mut conn = state.pool.get().await?;
    users::find(&mut conn, id).await?.ok_or_else(not_found)?;
    Ok(id)
}

/// `GET /api/admin/users/{id}/keys`: that person's keys, newest first, with when each
/// was last used (never the keys themselves).
#[utoipa::path(
    tag = "accounts",
    security(("admin_token" = [])),
    params(("id" = String, Path, description = "the user's id")),
    responses(
        (status = 200, description = "the user's keys", body = KeyList),
        (status = 404, description = "`not_found`: no such user", body = ErrorBody),
    )
)]
#[get("/api/admin/users/{id}/keys")]
pub async fn list_of_user(
    _: Admin,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let owner = existing_user(&state, &id).await?;
    Ok(HttpResponse::Ok().json(keys_of(&state, owner).await?))
}

/// `DELETE /api/admin/users/{id}/keys/{key_id}`: 204; the key answers 401 at once, on
/// every instance.
#[utoipa::path(
    tag = "accounts",
    security(("admin_token" = [])),
    params(
        ("id" = String, Path, description = "the user's id"),
        ("key_id" = String, Path, description = "the key's id"),
    ),
    responses(
        (status = 204, description = "revoked"),
        (status = 404, description = "`not_found`: no such user, or no such key of theirs", body = ErrorBody),
    )
)]
#[delete("/api/admin/users/{id}/keys/{key_id}")]
pub async fn revoke_of_user(
    _: Admin,
    request: HttpRequest,
    path: web::Path<(String, String)>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let (id, key_id) = path.into_inner();
    let owner = existing_user(&state, &id).await?;
    revoke_key_of(&state, &request, owner, &key_id).await
}
