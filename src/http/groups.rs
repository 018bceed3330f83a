//! Groups and their members, for the collections' grants (docs/PROTOCOL.md,
//! "Collections"): `GET`/`POST /api/admin/groups`, `DELETE /api/admin/groups/{name}`,
//! `PUT /api/admin/groups/{name}/members`. The built-in group `everyone` holds every
//! user: it is listed, granted like any group, and never changed or deleted.

use actix_web::{HttpRequest, HttpResponse, delete, get, post, put, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::admin::Admin;
use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use crate::audit::{self, Action, Event};
use crate::db::groups::{self, EVERYONE};
use crate::db::users;
use crate::state::AppState;

const MAX_BODY_BYTES: usize = 256 * 1024;
/// Most members one request may name.
const MAX_MEMBERS: usize = 10_000;

#[derive(Serialize, ToSchema)]
pub struct GroupView {
    name: String,
    /// `everyone`: every user, without a list.
    built_in: bool,
    /// Usernames, by name (empty for `everyone`).
    members: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub struct GroupList {
    groups: Vec<GroupView>,
}

#[derive(Serialize, ToSchema)]
pub struct OneGroup {
    group: GroupView,
}

async fn views(state: &AppState) -> Result<Vec<GroupView>, ApiError> {
    let mut conn = state.pool.get().await?;
    let all = groups::all(&mut conn).await?;
    let members = groups::member_names(&mut conn).await?;
    Ok(all
        .into_iter()
        .map(|group| GroupView {
            built_in: group.name == EVERYONE,
            members: members
                .iter()
                .filter(|(id, _)| *id == group.id)
                .map(|(_, username)| username.clone())
                .collect(),
            name: group.name,
        })
        .collect())
}

async fn view_of(state: &AppState, name: &str) -> Result<GroupView, ApiError> {
    views(state)
        .await?
        .into_iter()
        .find(|group| group.name == name)
        .ok_or_else(|| no_group(name))
}

fn no_group(name: &str) -> ApiError {
    ApiError::NotFound(format!("no group {name}"))
}

fn refuse_built_in(name: &str) -> Result<(), ApiError> {
    if name == EVERYONE {
        return Err(ApiError::BuiltIn(format!(
            "the group {EVERYONE} is built in: it holds every user"
        )));
    }
    Ok(())
}

/// The group name rule ([`groups::name_fits`]) as a 400, when `name` does not fit it.
fn check_group_name(name: &str) -> Result<(), ApiError> {
    if groups::name_fits(name) {
        Ok(())
    } else {
        Err(ApiError::InvalidName(groups::NAME_RULE.to_owned()))
    }
}

/// `GET /api/admin/groups`: every group with its members, by name.
#[utoipa::path(
    tag = "collections",
    security(("admin_token" = [])),
    responses(
        (status = 200, description = "the groups", body = GroupList),
    )
)]
#[get("/api/admin/groups")]
pub async fn list(_: Admin, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(GroupList {
        groups: views(&state).await?,
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewGroupBody {
    name: String,
}

impl RequestBody for NewGroupBody {}

/// `POST /api/admin/groups` `{"name"}`: 201 with the group (no members yet).
#[utoipa::path(
    tag = "collections",
    security(("admin_token" = [])),
    request_body = NewGroupBody,
    responses(
        (status = 201, description = "made", body = OneGroup),
        (status = 400, description = "`invalid_name`; `invalid_json`", body = ErrorBody),
        (status = 409, description = "`name_taken`", body = ErrorBody),
    )
)]
#[post("/api/admin/groups")]
pub async fn create(
    _: Admin,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: NewGroupBody = read_json_body(
        &request,
        payload,
        MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    check_group_name(&body.name)?;
    if groups::create(&mut *state.pool.get().await?, &body.name)
        .await?
        .is_none()
    {
        return Err(ApiError::NameTaken(format!("a group {} exists", body.name)));
    }
    state.accounts.access.refresh().await?;
    audit::record(
        &state.pool,
        Event::of(&request, Action::GroupCreated, &body.name),
    )
    .await;
    Ok(HttpResponse::Created().json(OneGroup {
        group: view_of(&state, &body.name).await?,
    }))
}

/// `DELETE /api/admin/groups/{name}`: 204, with its memberships and grants.
#[utoipa::path(
    tag = "collections",
    security(("admin_token" = [])),
    params(("name" = String, Path, description = "the group's name")),
    responses(
        (status = 204, description = "deleted"),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 409, description = "`built_in`: `everyone`", body = ErrorBody),
    )
)]
#[delete("/api/admin/groups/{name}")]
pub async fn remove(
    _: Admin,
    request: HttpRequest,
    name: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    refuse_built_in(&name)?;
    if !groups::delete(&mut *state.pool.get().await?, &name).await? {
        return Err(no_group(&name));
    }
    state.accounts.access.refresh().await?;
    audit::record(
        &state.pool,
        Event::of(&request, Action::GroupDeleted, name.as_str()),
    )
    .await;
    Ok(HttpResponse::NoContent().finish())
}

/// The body of `PUT …/members`: every member's username.
#[derive(Deserialize, ToSchema)]
#[serde(transparent)]
pub struct MembersBody(Vec<String>);

impl RequestBody for MembersBody {
    const IS_ARRAY: bool = true;
}

/// `PUT /api/admin/groups/{name}/members` `["username",…]`: the group's members become
/// exactly these.
#[utoipa::path(
    tag = "collections",
    security(("admin_token" = [])),
    params(("name" = String, Path, description = "the group's name")),
    request_body = MembersBody,
    responses(
        (status = 200, description = "the members replaced", body = OneGroup),
        (status = 400, description = "`unknown_name`: no such user (named); `invalid_json`", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 409, description = "`built_in`: `everyone`", body = ErrorBody),
    )
)]
#[put("/api/admin/groups/{name}/members")]
pub async fn set_members(
    _: Admin,
    name: web::Path<String>,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let MembersBody(usernames) = read_json_body(
        &request,
        payload,
        MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    refuse_built_in(&name)?;
    if usernames.len() > MAX_MEMBERS {
        return Err(ApiError::InvalidJson(format!(
            "at most {MAX_MEMBERS} members at once"
        )));
    }
    let mut conn = state.pool.get().await?;
    let group = groups::by_name(&mut conn, &name)
        .await?
        .ok_or_else(|| no_group(&name))?;
    let mut ids = Vec::with_capacity(usernames.len());
    for username in &usernames {
        let user = users::find_by_username(&mut conn, username)
            .await?
            .ok_or_else(|| ApiError::UnknownName(format!("no user {username}")))?;
        ids.push(user.id);
    }
    groups::set_members(&mut conn, group.id, &ids).await?;
    drop(conn);
    state.accounts.access.refresh().await?;
    let set = Event::of(&request, Action::GroupMembersSet, name.as_str())
        .with(serde_json::json!({ "members": usernames }));
    audit::record(&state.pool, set).await;
    Ok(HttpResponse::Ok().json(OneGroup {
        group: view_of(&state, &name).await?,
    }))
}
