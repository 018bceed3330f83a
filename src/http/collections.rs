//! Collections and their grants (docs/PROTOCOL.md, "Collections"): `GET
//! /api/collections` lists what the caller may read; admins make, describe and delete
//! collections and set who may read or write each (`/api/admin/collections`). Every
//! change is read again at once here (the others hear of it through `NOTIFY`).

use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, put, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::admin::Admin;
use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use crate::audit::{self, Action, Event};
use crate::auth::Caller;
use crate::auth::access::Refusal;
use crate::db::collections::{self, CollectionSummary, DEFAULT_COLLECTION, NAME_RULE};
use crate::db::grants::{self, Access, Grantee, NamedGrant};
use crate::db::{groups, users};
use crate::state::AppState;

/// Largest accepted body of these routes.
const MAX_BODY_BYTES: usize = 64 * 1024;
/// Most grants one collection may have.
pub const MAX_GRANTS: usize = 1000;
/// Longest description, in characters.
const MAX_DESCRIPTION_CHARS: usize = 1000;

/// A collection as its readers see it.
#[derive(Serialize, ToSchema)]
pub struct CollectionView {
    name: String,
    description: String,
    documents: i64,
    chunks: i64,
    /// The caller's: `read` or `write`.
    access: Access,
}

#[derive(Serialize, ToSchema)]
pub struct CollectionList {
    collections: Vec<CollectionView>,
}

/// `GET /api/collections`: the collections the caller may read, by name.
#[utoipa::path(
    tag = "collections",
    responses(
        (status = 200, description = "the readable collections, with the caller's access", body = CollectionList),
        (status = 401, description = "`unauthorized`", body = ErrorBody),
    )
)]
#[get("/api/collections")]
pub async fn readable(
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let summaries = collections::summaries(&mut *state.pool.get().await?).await?;
    let collections = summaries
        .into_iter()
        .filter_map(|summary| {
            let access = caller.readable.access_to(summary.collection.id)?;
            Some(CollectionView {
                name: summary.collection.name,
                description: summary.collection.description,
                documents: summary.documents,
                chunks: summary.chunks,
                access,
            })
        })
        .collect();
    Ok(HttpResponse::Ok().json(CollectionList { collections }))
}

/// A grant as the admin API shows and takes it: to a user or to a group.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantView {
    /// A username (not with `group`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user: Option<String>,
    /// A group's name (not with `user`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    group: Option<String>,
    access: Access,
}

/// A collection as admins see it, with its grants.
#[derive(Serialize, ToSchema)]
pub struct AdminCollectionView {
    name: String,
    description: String,
    documents: i64,
    chunks: i64,
    created_at: DateTime<Utc>,
    grants: Vec<GrantView>,
}

#[derive(Serialize, ToSchema)]
pub struct AdminCollectionList {
    collections: Vec<AdminCollectionView>,
}

#[derive(Serialize, ToSchema)]
pub struct OneCollection {
    collection: AdminCollectionView,
}

fn admin_view(summary: CollectionSummary, grants: &[NamedGrant]) -> AdminCollectionView {
    let id = summary.collection.id;
    AdminCollectionView {
        name: summary.collection.name,
        description: summary.collection.description,
        documents: summary.documents,
        chunks: summary.chunks,
        created_at: summary.collection.created_at,
        grants: grants
            .iter()
            .filter(|grant| grant.collection_id == id)
            .map(|grant| GrantView {
                user: grant.user.clone(),
                group: grant.group.clone(),
                access: grant.access,
            })
            .collect(),
    }
}

/// Every collection with its counts and grants, by name.
async fn admin_views(state: &AppState) -> Result<Vec<AdminCollectionView>, ApiError> {
    let mut conn = state.pool.get().await?;
    let summaries = collections::summaries(&mut conn).await?;
    let grants = grants::all_named(&mut conn).await?;
    Ok(summaries
        .into_iter()
        .map(|summary| admin_view(summary, &grants))
        .collect())
}

/// The collection `name` as admins see it; 404 when there is none.
async fn admin_view_of(state: &AppState, name: &str) -> Result<AdminCollectionView, ApiError> {
    admin_views(state)
        .await?
        .into_iter()
        .find(|view| view.name == name)
        .ok_or_else(|| Refusal::NoCollection(name.to_owned()).into())
}

/// `GET /api/admin/collections`: every collection with its grants.
#[utoipa::path(
    tag = "collections",
    security(("admin_token" = [])),
    responses(
        (status = 200, description = "every collection, by name", body = AdminCollectionList),
    )
)]
#[get("/api/admin/collections")]
pub async fn list(_: Admin, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(AdminCollectionList {
        collections: admin_views(&state).await?,
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewCollectionBody {
    /// 1 to 64 characters, each `a-z`, `0-9`, `_` or `-`.
    name: String,
    #[serde(default)]
    description: String,
}

impl RequestBody for NewCollectionBody {
    fn refusal(field: Option<&str>, message: String) -> ApiError {
        match field {
            Some("name") => ApiError::InvalidCollection(message),
            _ => ApiError::InvalidJson(message),
        }
    }
}

fn check_description(description: &str) -> Result<String, ApiError> {
    let description = description.trim();
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(ApiError::InvalidJson(format!(
            "`description` is longer than {MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    Ok(description.to_owned())
}

/// `POST /api/admin/collections` `{"name","description"?}`: 201 with the collection.
#[utoipa::path(
    tag = "collections",
    security(("admin_token" = [])),
    request_body = NewCollectionBody,
    responses(
        (status = 201, description = "made (no grants yet: only admins read it)", body = OneCollection),
        (status = 400, description = "`invalid_collection`: the name breaks the rule; `invalid_json`", body = ErrorBody),
        (status = 409, description = "`name_taken`: a collection of that name exists", body = ErrorBody),
    )
)]
#[post("/api/admin/collections")]
pub async fn create(
    _: Admin,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: NewCollectionBody = read_json_body(
        &request,
        payload,
        MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    if !collections::is_valid_name(&body.name) {
        return Err(ApiError::InvalidCollection(format!(
            "{:?}: {NAME_RULE}",
            body.name
        )));
    }
    let description = check_description(&body.description)?;
    let made = collections::create(&mut *state.pool.get().await?, &body.name, &description).await?;
    if made.is_none() {
        return Err(ApiError::NameTaken(format!(
            "a collection {} exists",
            body.name
        )));
    }
    state.accounts.access.refresh().await?;
    let made = Event::of(&request, Action::CollectionCreated, &body.name);
    audit::record(&state.pool, made).await;
    Ok(HttpResponse::Created().json(OneCollection {
        collection: admin_view_of(&state, &body.name).await?,
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectionChangesBody {
    description: String,
}

impl RequestBody for CollectionChangesBody {}

/// `PATCH /api/admin/collections/{name}` `{"description"}`: the collection.
#[utoipa::path(
    tag = "collections",
    security(("admin_token" = [])),
    params(("name" = String, Path, description = "the collection's name")),
    request_body = CollectionChangesBody,
    responses(
        (status = 200, description = "changed", body = OneCollection),
        (status = 400, description = "`invalid_json`", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
    )
)]
#[patch("/api/admin/collections/{name}")]
pub async fn update(
    _: Admin,
    name: web::Path<String>,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: CollectionChangesBody = read_json_body(
        &request,
        payload,
        MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let description = check_description(&body.description)?;
    collections::set_description(&mut *state.pool.get().await?, &name, &description)
        .await?
        .ok_or_else(|| Refusal::NoCollection(name.clone()))?;
    let changed = Event::of(&request, Action::CollectionChanged, name.as_str())
        .with(serde_json::json!({ "description": description }));
    audit::record(&state.pool, changed).await;
    Ok(HttpResponse::Ok().json(OneCollection {
        collection: admin_view_of(&state, &name).await?,
    }))
}

/// `DELETE /api/admin/collections/{name}`: 204; its documents and chunks go with it, in
/// one transaction, and from every instance's index. `default` stays: it is where a
/// document goes when no collection is named.
#[utoipa::path(
    tag = "collections",
    security(("admin_token" = [])),
    params(("name" = String, Path, description = "the collection's name")),
    responses(
        (status = 204, description = "deleted with its documents"),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 409, description = "`built_in`: the `default` collection cannot be deleted", body = ErrorBody),
    )
)]
#[delete("/api/admin/collections/{name}")]
pub async fn remove(
    _: Admin,
    request: HttpRequest,
    name: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    if name.as_str() == DEFAULT_COLLECTION {
        return Err(ApiError::BuiltIn(format!(
            "the collection {DEFAULT_COLLECTION} cannot be deleted: documents added without a collection go there"
        )));
    }
    let deleted = collections::delete(&mut *state.pool.get().await?, &name)
        .await?
        .ok_or_else(|| Refusal::NoCollection(name.clone()))?;
    state.library.index().refresh_documents(&deleted).await?;
    state.accounts.access.refresh().await?;
    let removed = Event::of(&request, Action::CollectionDeleted, name.as_str())
        .with(serde_json::json!({ "documents": deleted.len() }));
    audit::record(&state.pool, removed).await;
    Ok(HttpResponse::NoContent().finish())
}

/// The body of `PUT …/grants`: every grant the collection is to have.
#[derive(Deserialize, ToSchema)]
#[serde(transparent)]
pub struct GrantsBody(Vec<GrantView>);

impl RequestBody for GrantsBody {
    const IS_ARRAY: bool = true;
}

/// `PUT /api/admin/collections/{name}/grants` `[{"user"|"group", "access"}]`: replaces
/// the collection's grants; the collection with them.
#[utoipa::path(
    tag = "collections",
    security(("admin_token" = [])),
    params(("name" = String, Path, description = "the collection's name")),
    request_body = GrantsBody,
    responses(
        (status = 200, description = "the grants replaced", body = OneCollection),
        (status = 400, description = "`unknown_name`: no such user or group (named); `invalid_json`", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
    )
)]
#[put("/api/admin/collections/{name}/grants")]
pub async fn set_grants(
    _: Admin,
    name: web::Path<String>,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let GrantsBody(wanted) = read_json_body(
        &request,
        payload,
        MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    if wanted.len() > MAX_GRANTS {
        return Err(ApiError::InvalidJson(format!(
            "a collection has at most {MAX_GRANTS} grants"
        )));
    }
    let mut conn = state.pool.get().await?;
    let collection = collections::by_name(&mut conn, &name)
        .await?
        .ok_or_else(|| Refusal::NoCollection(name.clone()))?;
    let mut resolved: Vec<(Grantee, Access)> = Vec::with_capacity(wanted.len());
    for (at, grant) in wanted.iter().enumerate() {
        let grantee = match (&grant.user, &grant.group) {
            (Some(username), None) => Grantee::User(
                users::find_by_username(&mut conn, username)
                    .await?
                    .ok_or_else(|| ApiError::UnknownName(format!("no user {username}")))?
                    .id,
            ),
            (None, Some(group)) => Grantee::Group(
                groups::by_name(&mut conn, group)
                    .await?
                    .ok_or_else(|| ApiError::UnknownName(format!("no group {group}")))?
                    .id,
            ),
            _ => {
                return Err(ApiError::InvalidJson(format!(
                    "[{at}]: a grant names a `user` or a `group`, one of them"
                )));
            }
        };
        // The same grantee twice: the greater access stands.
        match resolved.iter_mut().find(|(known, _)| *known == grantee) {
            Some(known) => known.1 = known.1.max(grant.access),
            None => resolved.push((grantee, grant.access)),
        }
    }
    grants::replace(&mut conn, collection.id, &resolved).await?;
    drop(conn);
    state.accounts.access.refresh().await?;
    let set = Event::of(&request, Action::GrantsSet, name.as_str())
        .with(serde_json::json!({ "grants": wanted }));
    audit::record(&state.pool, set).await;
    Ok(HttpResponse::Ok().json(OneCollection {
        collection: admin_view_of(&state, &name).await?,
    }))
}
