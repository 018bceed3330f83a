//! The people, managed by admins (docs/PROTOCOL.md, "Accounts"): `GET`/`POST
//! /api/admin/users`, `PATCH`/`DELETE /api/admin/users/{id}`. The last admin who is not
//! disabled cannot be removed, demoted or disabled (409 `last_admin`).

use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::admin::Admin;
use super::auth::MAX_AUTH_BODY_BYTES;
use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use crate::audit::{self, Action, Event};
use crate::auth::{AdminUserView, people};
use crate::db::groups;
use crate::db::users::{self, Role, UserChanges};
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct UserList {
    users: Vec<AdminUserView>,
}

/// `GET /api/admin/users`: every user, by username, with their groups.
#[utoipa::path(
    tag = "accounts",
    security(("admin_token" = [])),
    responses(
        (status = 200, description = "the users", body = UserList),
    )
)]
#[get("/api/admin/users")]
pub async fn list(_: Admin, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await?;
    let rows = users::list(&mut conn).await?;
    let memberships = groups::memberships(&mut conn).await?;
    let users = rows
        .iter()
        .map(|row| AdminUserView {
            groups: memberships
                .iter()
                .filter(|(user, _)| *user == row.id)
                .map(|(_, group)| group.clone())
                .collect(),
            ..AdminUserView::from(row)
        })
        .collect();
    Ok(HttpResponse::Ok().json(UserList { users }))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewUserBody {
    username: String,
    role: Role,
    /// Made up (and returned) when not given.
    password: Option<String>,
    /// The username when not given.
    display_name: Option<String>,
}

impl RequestBody for NewUserBody {}

/// A user made: with the generated password when none was given (shown this once).
#[derive(Serialize, ToSchema)]
pub struct CreatedUser {
    user: AdminUserView,
    #[serde(skip_serializing_if = "Option::is_none")]
    password: Option<String>,
}

/// `POST /api/admin/users` `{"username","role","password"?,"display_name"?}`: 201.
#[utoipa::path(
    tag = "accounts",
    security(("admin_token" = [])),
    request_body = NewUserBody,
    responses(
        (status = 201, description = "made; `password` when it was generated", body = CreatedUser),
        (status = 400, description = "`invalid_json`, `invalid_username` or `invalid_password`", body = ErrorBody),
        (status = 409, description = "`username_taken`", body = ErrorBody),
    )
)]
#[post("/api/admin/users")]
pub async fn create(
    _: Admin,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: NewUserBody = read_json_body(
        &request,
        payload,
        MAX_AUTH_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let mut conn = state.pool.get().await?;
    let (row, password) = people::create_user(
        &mut conn,
        &body.username,
        body.display_name.as_deref(),
        body.role,
        body.password,
    )
    .await?;
    state.accounts.cache.remember_user(&row);
    let made = Event::of(&request, Action::UserCreated, &row.username)
        .with(serde_json::json!({"user_id": row.id, "role": row.role}));
    audit::record(&state.pool, made).await;
    Ok(HttpResponse::Created().json(CreatedUser {
        user: AdminUserView::from(&row),
        password,
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UserPatchBody {
    role: Option<Role>,
    disabled: Option<bool>,
    password: Option<String>,
    display_name: Option<String>,
}

impl RequestBody for UserPatchBody {}

fn user_id(id: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(id).map_err(|_| ApiError::NotFound("no such user".to_owned()))
}

/// `PATCH /api/admin/users/{id}` (`role`, `disabled`, `password`, `display_name`): the
/// user as they are now. Disabling them or a new password ends their sessions and
/// revokes their keys for good, at once on every instance (re-enabling brings none
/// back).
#[utoipa::path(
    tag = "accounts",
    security(("admin_token" = [])),
    params(("id" = String, Path, description = "the user's id")),
    request_body = UserPatchBody,
    responses(
        (status = 200, description = "changed", body = AdminUserView),
        (status = 400, description = "`invalid_json`, `invalid_username` or `invalid_password`", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 409, description = "`last_admin`: the last admin would be demoted or disabled", body = ErrorBody),
    )
)]
#[patch("/api/admin/users/{id}")]
pub async fn update(
    _: Admin,
    id: web::Path<String>,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let id = user_id(&id)?;
    let body: UserPatchBody = read_json_body(
        &request,
        payload,
        MAX_AUTH_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    if let Some(name) = &body.display_name {
        people::check_display_name(name)?;
    }
    let password_hash = match body.password {
        Some(password) => Some(people::new_password_hash(password).await?),
        None => None,
    };
    // What changed, by name only: a new password is said, never shown.
    let changed_fields = serde_json::json!({
        "role": body.role,
        "disabled": body.disabled,
        "display_name": body.display_name.is_some(),
        "password": password_hash.is_some(),
    });
    let changes = UserChanges {
        display_name: body.display_name.map(|name| name.trim().to_owned()),
        password_hash,
        role: body.role.map(|role| role.as_str().to_owned()),
        disabled: body.disabled,
    };
    let mut conn = state.pool.get().await?;
    let row = people::update_user(&mut conn, Some(&state.accounts.cache), id, &changes).await?;
    let changed = Event::of(&request, Action::UserChanged, &row.username).with(changed_fields);
    audit::record(&state.pool, changed).await;
    Ok(HttpResponse::Ok().json(AdminUserView::from(&row)))
}

/// `DELETE /api/admin/users/{id}`: 204; their sessions and keys go with them.
#[utoipa::path(
    tag = "accounts",
    security(("admin_token" = [])),
    params(("id" = String, Path, description = "the user's id")),
    responses(
        (status = 204, description = "deleted"),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 409, description = "`last_admin`: the last admin would be deleted", body = ErrorBody),
    )
)]
#[delete("/api/admin/users/{id}")]
pub async fn remove(
    _: Admin,
    request: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let id = user_id(&id)?;
    let mut conn = state.pool.get().await?;
    let username = users::find(&mut conn, id).await?.map(|user| user.username);
    people::delete_user(&mut conn, &state.accounts.cache, id).await?;
    let deleted = Event::of(&request, Action::UserDeleted, username.unwrap_or_default())
        .with(serde_json::json!({"user_id": id}));
    audit::record(&state.pool, deleted).await;
    Ok(HttpResponse::NoContent().finish())
}
