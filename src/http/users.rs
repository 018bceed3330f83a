//! The people, managed by admins (docs/PROTOCOL.md, "Accounts"): `GET`/`POST
//! /api/admin/users`, `PATCH`/`DELETE /api/admin/users/{id}`. The last admin who is not
//! disabled cannot be removed, demoted or disabled (409 `last_admin`).

use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};
use diesel_async::AsyncConnection;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::admin::Admin;
use super::auth::MAX_AUTH_BODY_BYTES;
use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use crate::audit::{self, Action, Event};
use crate::auth::password::{check_new_password, generate_password, hash_password};
use crate::auth::{AdminUserView, revoke_credentials, username};
use crate::db::users::{self, NewUser, Role, UserChanges, UserRow};
use crate::db::{DbError, groups};
use crate::state::AppState;

/// The username rule ([`username::fits`]).
pub fn check_username(name: &str) -> Result<(), ApiError> {
    if username::fits(name) {
        Ok(())
    } else {
        Err(ApiError::InvalidUsername(format!(
            "a username has {}",
            username::RULE
        )))
    }
}

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

/// Makes a user with `password` (a generated one when `None`, returned); shared by
/// the admin API and `bor user add`.
pub async fn create_user(
    conn: &mut diesel_async::AsyncPgConnection,
    username: &str,
    display_name: Option<&str>,
    role: Role,
    password: Option<String>,
) -> Result<(UserRow, Option<String>), ApiError> {
    check_username(username)?;
    let display_name = display_name.map(str::trim).unwrap_or(username);
    ApiError::check_display_name(display_name)?;
    let (password, generated) = match password {
        Some(password) => {
            check_new_password(&password).map_err(ApiError::InvalidPassword)?;
            (password, false)
        }
        None => (
            generate_password()
                .map_err(|error| ApiError::internal("generating a password", error.to_string()))?,
            true,
        ),
    };
    let to_hash = password.clone();
    let hash = web::block(move || hash_password(&to_hash))
        .await
        .map_err(|error| ApiError::internal("hashing a password", error.to_string()))?
        .map_err(|error| ApiError::internal("hashing a password", error.to_string()))?;
    let new = NewUser::new(username, display_name, Some(&hash), role);
    let row = users::insert(conn, &new)
        .await?
        .ok_or(ApiError::UsernameTaken)?;
    Ok((row, generated.then_some(password)))
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
    let (row, password) = create_user(
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

/// A change to a user that may leave bor without an admin.
enum Change<'a> {
    /// The changes, and whether they end the user's sessions and revoke their keys.
    Update(&'a UserChanges, bool),
    Delete,
}

/// What a guarded change did.
enum Guarded {
    /// The user as they are now (`None` once deleted).
    Done(Option<UserRow>),
    NotFound,
    LastAdmin,
}

/// Applies `change` to user `id` in a transaction, unless it would leave no admin
/// who is not disabled: `keeps_admin` says whether the user is one afterwards.
async fn guarded(
    conn: &mut diesel_async::AsyncPgConnection,
    id: Uuid,
    keeps_admin: bool,
    change: Change<'_>,
) -> Result<Option<UserRow>, ApiError> {
    let outcome = conn
        .transaction::<_, DbError, _>(async |conn| {
            let admins = users::lock_active_admins(conn).await?;
            let Some(user) = users::find(conn, id).await? else {
                return Ok(Guarded::NotFound);
            };
            let is_active_admin = user.role() == Role::Admin && !user.disabled;
            if is_active_admin && !keeps_admin && admins == [id] {
                return Ok(Guarded::LastAdmin);
            }
            Ok(Guarded::Done(match change {
                Change::Update(changes, revoke) => {
                    let row = users::update(conn, id, changes).await?;
                    if revoke {
                        revoke_credentials(conn, id).await?;
                    }
                    row
                }
                Change::Delete => {
                    users::delete(conn, id).await?;
                    None
                }
            }))
        })
        .await?;
    match outcome {
        Guarded::Done(row) => Ok(row),
        Guarded::NotFound => Err(ApiError::NotFound("no such user".to_owned())),
        Guarded::LastAdmin => Err(ApiError::LastAdmin),
    }
}

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
        ApiError::check_display_name(name)?;
    }
    let password_hash = match body.password {
        Some(password) => {
            check_new_password(&password).map_err(ApiError::InvalidPassword)?;
            let hash = web::block(move || hash_password(&password))
                .await
                .map_err(|error| ApiError::internal("hashing a password", error.to_string()))?
                .map_err(|error| ApiError::internal("hashing a password", error.to_string()))?;
            Some(hash)
        }
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
    let revoke = changes.password_hash.is_some() || body.disabled == Some(true);
    let demoted = body.role.is_some_and(|role| role != Role::Admin);
    let keeps_admin = !demoted && body.disabled != Some(true);
    let mut conn = state.pool.get().await?;
    let row = guarded(&mut conn, id, keeps_admin, Change::Update(&changes, revoke))
        .await?
        .ok_or_else(|| ApiError::NotFound("no such user".to_owned()))?;
    state.accounts.cache.remember_user(&row);
    if revoke {
        state.accounts.cache.forget_credentials_of(id);
    }
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
    guarded(&mut conn, id, false, Change::Delete).await?;
    state.accounts.cache.forget_user(id);
    let deleted = Event::of(&request, Action::UserDeleted, username.unwrap_or_default())
        .with(serde_json::json!({"user_id": id}));
    audit::record(&state.pool, deleted).await;
    Ok(HttpResponse::NoContent().finish())
}
