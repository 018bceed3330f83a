//! API keys for scripts and OpenAI clients (docs/PROTOCOL.md, "Accounts"): the caller's
//! own, listed, made (the key shown once) and revoked.

use actix_web::{HttpRequest, HttpResponse, delete, get, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::auth::MAX_AUTH_BODY_BYTES;
use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use crate::auth::{Caller, Via, secret};
use crate::db::api_keys::{self, ApiKeySummary, NewApiKey};
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

#[derive(Serialize, ToSchema)]
pub struct KeyList {
    keys: Vec<ApiKeySummary>,
}

/// `GET /api/keys`: the caller's keys, newest first (never the keys themselves).
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
    let mut conn = state.pool.get().await?;
    let keys = api_keys::of_user(&mut conn, owner).await?;
    Ok(HttpResponse::Ok().json(KeyList { keys }))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKeyBody {
    /// What the key is for (1 to 100 characters).
    name: String,
}

impl RequestBody for NewKeyBody {}

/// A new key: the only time the key itself is shown.
#[derive(Serialize, ToSchema)]
pub struct NewKey {
    id: Uuid,
    name: String,
    /// `bor_…`, for `Authorization: Bearer`.
    key: String,
}

/// `POST /api/keys` `{"name"}`: 201 `{"id","name","key"}`.
#[utoipa::path(
    tag = "accounts",
    request_body = NewKeyBody,
    responses(
        (status = 201, description = "made; the key is shown this once", body = NewKey),
        (status = 400, description = "`invalid_json`, or `invalid_name`: empty or over 100 characters", body = ErrorBody),
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
    let issued = secret::new_api_key()
        .map_err(|error| ApiError::internal("making an API key", error.to_string()))?;
    let new = NewApiKey {
        id: Uuid::new_v4(),
        user_id: owner,
        name,
        prefix: secret::visible_prefix(&issued.token),
        key_sha256: &issued.sha256,
    };
    let mut conn = state.pool.get().await?;
    api_keys::insert(&mut conn, &new).await?;
    if let Some(row) = api_keys::find(&mut conn, new.id).await? {
        state.accounts.cache.remember_key(&row);
    }
    Ok(HttpResponse::Created().json(NewKey {
        id: new.id,
        name: name.to_owned(),
        key: issued.token,
    }))
}

/// `DELETE /api/keys/{id}`: 204; the key answers 401 at once, on every instance.
/// Another person's key is 404 like an absent one.
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
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let owner = key_owner(&caller)?;
    let not_found = || ApiError::NotFound("no such key".to_owned());
    let id = Uuid::parse_str(&id).map_err(|_| not_found())?;
    let mut conn = state.pool.get().await?;
    if !api_keys::delete_of_user(&mut conn, id, owner).await? {
        return Err(not_found());
    }
    state.accounts.cache.forget_key(id);
    Ok(HttpResponse::NoContent().finish())
}
