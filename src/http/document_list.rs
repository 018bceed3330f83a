//! `GET /api/admin/documents`: the admin page's document list (docs/PROTOCOL.md,
//! "Document routes"): newest first, searched, filtered and paged, with who added each.

use actix_web::{HttpResponse, get, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::admin::Admin;
use super::error::{ApiError, ErrorBody};
use super::params;
use crate::auth::access::Refusal;
use crate::db::collections;
use crate::db::document_list::{self, AddedBy, DocumentFilter, ListedDocument};
use crate::db::documents::Adder;
use crate::state::AppState;

/// Documents on a page at most, and by default.
const MAX_PAGE: i64 = 200;
const DEFAULT_PAGE: i64 = 50;

/// The query's parameters: an empty value is no filter, as a form sends an empty field.
#[derive(Debug, Deserialize, IntoParams)]
pub struct DocumentListQuery {
    /// Words found in the title or the source (a file path or web address), any case.
    q: Option<String>,
    /// Only this collection's documents (its name).
    collection: Option<String>,
    /// Only this kind, as a media type (`application/pdf`, `text/markdown`, …).
    kind: Option<String>,
    /// Only those a person added (their user id), or `none`: those no one signed in
    /// added (the service token, `bor import`, folder sync, and those from before bor
    /// recorded who added them).
    added_by: Option<String>,
    /// Added at or after (RFC 3339).
    since: Option<String>,
    /// Added before (RFC 3339).
    until: Option<String>,
    /// The previous page's `next_cursor`: older documents.
    cursor: Option<String>,
    /// 1..=200, default 50.
    limit: Option<String>,
}

/// `value`, unless it is absent or empty.
fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|value| !value.is_empty())
}

impl DocumentListQuery {
    fn added_by(&self) -> Result<Option<AddedBy>, ApiError> {
        given(&self.added_by)
            .map(|value| match value {
                "none" => Ok(AddedBy::NoOne),
                id => Uuid::parse_str(id).map(AddedBy::Person).map_err(|_| {
                    ApiError::InvalidJson("`added_by` must be a user id or `none`".to_owned())
                }),
            })
            .transpose()
    }

    fn cursor(&self) -> Result<Option<i64>, ApiError> {
        self.cursor
            .as_deref()
            .map(|cursor| {
                cursor.parse::<i64>().map_err(|_| {
                    ApiError::InvalidJson("`cursor` must be a whole number".to_owned())
                })
            })
            .transpose()
    }
}

/// How a document came in.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum Origin {
    /// Added by the person `added_by`.
    Person,
    /// Added by a person deleted since.
    DeletedPerson,
    /// Stored by the folder watcher (`bor watch`, `BOR_WATCH`), or its source is a file
    /// the watcher keeps in step.
    FolderSync,
    /// Stored by a command: `bor import`, `bor eval`.
    CommandLine,
    /// Stored through the admin API with the service token (`BOR_ADMIN_TOKEN`).
    ServiceToken,
    /// Not known: stored before bor recorded how documents came in.
    Unknown,
}

/// The person who added a document.
#[derive(Debug, Serialize, ToSchema)]
struct AddedByView {
    id: Uuid,
    username: String,
    display_name: String,
}

/// A document as the admin list shows it.
#[derive(Debug, Serialize, ToSchema)]
struct AdminDocumentView {
    id: i64,
    title: String,
    /// The file it was imported from, or its web address; `null` when posted directly.
    source: Option<String>,
    /// The kind, as a media type.
    content_type: String,
    created_at: DateTime<Utc>,
    collection: String,
    chunks: i64,
    /// `null` when no one signed in added it, or the person is deleted (`origin` says
    /// which).
    added_by: Option<AddedByView>,
    origin: Origin,
}

impl From<ListedDocument> for AdminDocumentView {
    fn from(document: ListedDocument) -> AdminDocumentView {
        let origin = match (
            &document.added_by,
            document.added_by_deleted,
            document.synced,
            document.adder,
        ) {
            (Some(_), ..) => Origin::Person,
            (None, true, ..) => Origin::DeletedPerson,
            // A file the watcher keeps in step, whoever stored it first.
            (None, false, true, _) | (.., Adder::FolderSync) => Origin::FolderSync,
            (.., Adder::ServiceToken) => Origin::ServiceToken,
            (.., Adder::CommandLine) => Origin::CommandLine,
            (.., Adder::Unknown | Adder::Person(_)) => Origin::Unknown,
        };
        AdminDocumentView {
            id: document.id,
            title: document.title,
            source: document.source,
            content_type: document.content_type,
            created_at: document.created_at,
            collection: document.collection,
            chunks: document.chunks,
            added_by: document
                .added_by
                .map(|(id, username, display_name)| AddedByView {
                    id,
                    username,
                    display_name,
                }),
            origin,
        }
    }
}

/// A page of the admin document list.
#[derive(Debug, Serialize, ToSchema)]
struct AdminDocumentPage {
    documents: Vec<AdminDocumentView>,
    /// How many documents match the filters, on every page.
    total: i64,
    /// Pass as `cursor` for the next (older) page; `null` on the last.
    next_cursor: Option<i64>,
}

/// Every document, newest first, filtered and a page at a time.
#[utoipa::path(
    tag = "documents",
    security(("admin_token" = [])),
    params(DocumentListQuery),
    responses(
        (status = 200, description = "a page of documents, newest first", body = AdminDocumentPage),
        (status = 400, description = "`invalid_json`: a filter, `cursor` or `limit` that does not parse", body = ErrorBody),
        (status = 404, description = "`not_found`: no such collection", body = ErrorBody),
    )
)]
#[get("/api/admin/documents")]
pub async fn admin_list(
    _: Admin,
    query: web::Query<DocumentListQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let limit = params::limit(query.limit.as_deref(), DEFAULT_PAGE, MAX_PAGE)?;
    let mut filter = DocumentFilter {
        text: query.q.clone(),
        collection_id: None,
        content_type: given(&query.kind).map(str::to_owned),
        added_by: query.added_by()?,
        since: params::moment("since", given(&query.since))?,
        until: params::moment("until", given(&query.until))?,
        before: query.cursor()?,
    };
    let mut conn = state.pool.get().await?;
    if let Some(name) = given(&query.collection) {
        let collection = collections::by_name(&mut conn, name)
            .await?
            .ok_or_else(|| Refusal::NoCollection(name.to_owned()))?;
        filter.collection_id = Some(collection.id);
    }
    let page = document_list::page(&mut conn, &filter, limit).await?;
    let next_cursor = page
        .more
        .then(|| page.documents.last().map(|document| document.id))
        .flatten();
    Ok(HttpResponse::Ok().json(AdminDocumentPage {
        documents: page
            .documents
            .into_iter()
            .map(AdminDocumentView::from)
            .collect(),
        total: page.total,
        next_cursor,
    }))
}
