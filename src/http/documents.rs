//! The documents API (docs/PROTOCOL.md, "Document routes"): `GET /api/documents` and
//! `GET /api/documents/{id}` (the caller's readable collections only: another document
//! is unknown, exactly as an absent one), `POST /api/documents` and `DELETE
//! /api/documents/{id}` for the writers of a collection, the same two under
//! `/api/admin/` for admins, and `POST /api/admin/reindex` (reloads this instance's
//! vector index from the database, for rows written by other means).

use actix_web::{HttpRequest, HttpResponse, delete, get, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Admin;
use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use crate::audit::{self, Action, Event};
use crate::auth::Caller;
use crate::db::documents::{self, DocumentSummary};
use crate::db::grants::Access;
use crate::knowledge::ingest::{IngestError, IngestOutcome, SourceDocument};
use crate::state::AppState;

/// Largest accepted document body.
pub const MAX_DOCUMENT_BODY_BYTES: usize = 4 * 1024 * 1024;

/// A document to store (the body of `POST /api/admin/documents`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(expecting = "a JSON object with a `title` and a `content`")]
pub struct NewDocumentBody {
    /// Not empty after trimming.
    title: String,
    /// Markdown or plain text; not blank.
    content: String,
    /// The collection to store it into (`default` when absent).
    #[serde(default)]
    collection: Option<String>,
}

impl RequestBody for NewDocumentBody {}

/// A stored document.
#[derive(Serialize, ToSchema)]
struct StoredDocument {
    id: i64,
    chunks: usize,
}

/// What the reloaded vector index holds.
#[derive(Serialize, ToSchema)]
struct IndexSummary {
    documents: usize,
    chunks: usize,
    /// The embedding dimension of the index; `null` when it is empty.
    dimension: Option<usize>,
    /// Chunks refused for a dimension other than the current model's (`bor reembed` embeds them anew).
    dimension_mismatch: usize,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct ListQuery {
    /// Only this collection's documents.
    collection: Option<String>,
}

/// `GET /api/documents`: `[{"id","title","chunks","created_at","summary","collection"}]`,
/// oldest first, of the collections the caller may read.
#[utoipa::path(
    tag = "documents",
    params(ListQuery),
    responses(
        (status = 200, description = "every readable document, oldest first", body = [DocumentSummary]),
        (status = 404, description = "`not_found`: `collection` is absent, or not readable by the caller", body = ErrorBody),
        (status = 503, description = "`unavailable`: the database is down", body = ErrorBody),
    )
)]
#[get("/api/documents")]
pub async fn list(
    caller: Caller,
    query: web::Query<ListQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let named = query.collection.clone().map(|name| vec![name]);
    let scope = caller.readable.scope(named.as_deref())?;
    let documents = state
        .library
        .documents(scope.as_ref())
        .await
        .map_err(ApiError::from)?;
    Ok(HttpResponse::Ok().json(documents))
}

/// A document with its chunks, as its passage page shows it.
#[derive(Serialize, ToSchema)]
pub struct DocumentPassages {
    id: i64,
    title: String,
    /// The file it was imported from (its name only, but for admins: the server's
    /// folders are not a member's to see), or its web address; `null` when posted
    /// directly.
    source: Option<String>,
    /// The kind, as a media type.
    content_type: String,
    created_at: chrono::DateTime<chrono::Utc>,
    /// `null` until a summary is written.
    summary: Option<String>,
    chunks: Vec<Passage>,
}

/// One chunk of a document.
#[derive(Serialize, ToSchema)]
struct Passage {
    id: i64,
    ord: i32,
    /// The headings above it, outermost first (`""` when none).
    heading: String,
    /// The PDF page it starts on.
    page: Option<i32>,
    /// Whether OCR read the page it starts on (a scanned page or an image).
    ocr: bool,
    text: String,
}

/// `GET /api/documents/{id}`: the document and its chunks in order (docs/PROTOCOL.md,
/// "Sources and citations").
#[utoipa::path(
    tag = "documents",
    params(("id" = i64, Path, description = "the document's id")),
    responses(
        (status = 200, description = "the document, chunk by chunk", body = DocumentPassages),
        (status = 404, description = "`not_found`: no such document, or not a number", body = ErrorBody),
        (status = 503, description = "`unavailable`: the database is down", body = ErrorBody),
    )
)]
#[get("/api/documents/{id}")]
pub async fn passages(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::NotFound(format!("no document {}", id.as_str()));
    let document_id: i64 = id.parse().map_err(|_| not_found())?;
    let (document, chunks) = state
        .library
        .document(document_id, |collection| {
            caller.readable.can_read(collection)
        })
        .await
        .map_err(ApiError::from)?
        .ok_or_else(not_found)?;
    let ocr_pages = documents::ocr_pages(&document.page_sources);
    Ok(HttpResponse::Ok().json(DocumentPassages {
        id: document.id,
        title: document.title,
        source: document
            .source
            .map(|source| source_shown_to(&caller, source)),
        content_type: document.content_type,
        created_at: document.created_at,
        summary: document.summary,
        chunks: chunks
            .into_iter()
            .map(|chunk| Passage {
                id: chunk.id,
                ord: chunk.ord,
                heading: chunk.heading,
                page: chunk.page,
                ocr: chunk.page.is_some_and(|page| ocr_pages.contains(&page)),
                text: chunk.text,
            })
            .collect(),
    }))
}

/// A document's source as `caller` sees it: whole for an admin and for a web address;
/// else a file's name without the server's folders.
pub(super) fn source_shown_to(caller: &Caller, source: String) -> String {
    let is_address = source.starts_with("https://") || source.starts_with("http://");
    if caller.is_admin() || is_address {
        return source;
    }
    source
        .rsplit(['/', '\\'])
        .next()
        .map(str::to_owned)
        .unwrap_or(source)
}

/// `POST /api/documents` `{"title","content","collection"?}`: 201 `{"id","chunks"}`
/// when stored, 200 with the existing id when the same content is already in the
/// collection. With `multipart/form-data`, an optional `collection` part, then one or
/// more `file` parts of any kind bor reads: 200
/// `{"documents":[{"file","id","title","chunks","status"}],"skipped":[{"file","reason"}]}`.
/// The caller must be able to write the collection (`default` when none is named).
#[utoipa::path(
    tag = "documents",
    request_body(content = NewDocumentBody, content_type = "application/json",
        description = "or multipart/form-data: a `collection` part, then one or more `file` parts (each up to BOR_MAX_UPLOAD_BYTES)"),
    responses(
        (status = 201, description = "stored and indexed", body = StoredDocument),
        (status = 200, description = "an upload: the files stored and those skipped, with why", body = super::import_report::ImportReport),
        (status = 400, description = "`invalid_json`: malformed, or an empty title or content", body = ErrorBody),
        (status = 401, description = "`unauthorized`", body = ErrorBody),
        (status = 403, description = "`forbidden`: the caller may read the collection but not write it", body = ErrorBody),
        (status = 404, description = "`not_found`: no such collection, or one the caller cannot read", body = ErrorBody),
        (status = 413, description = "`body_too_large`: over 4 MiB", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`: the body is not JSON", body = ErrorBody),
        (status = 503, description = "`unavailable`: the database or the embedding model is down", body = ErrorBody),
    )
)]
#[post("/api/documents")]
pub async fn add(
    caller: Caller,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    add_documents(&caller, &request, payload, &state).await
}

/// `POST /api/admin/documents`: as `POST /api/documents`, for admins and the service
/// token.
#[utoipa::path(
    tag = "documents",
    security(("admin_token" = [])),
    request_body(content = NewDocumentBody, content_type = "application/json",
        description = "or multipart/form-data: a `collection` part, then one or more `file` parts"),
    responses(
        (status = 201, description = "stored and indexed", body = StoredDocument),
        (status = 200, description = "an upload, or the same content already stored", body = super::import_report::ImportReport),
        (status = 400, description = "`invalid_json`", body = ErrorBody),
        (status = 404, description = "`not_found`: no such collection", body = ErrorBody),
        (status = 413, description = "`body_too_large`: over 4 MiB", body = ErrorBody),
        (status = 503, description = "`unavailable`: the database or the embedding model is down", body = ErrorBody),
    )
)]
#[post("/api/admin/documents")]
pub async fn admin_add(
    _: Admin,
    caller: Caller,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    add_documents(&caller, &request, payload, &state).await
}

async fn add_documents(
    caller: &Caller,
    request: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
) -> Result<HttpResponse, ApiError> {
    if super::upload::is_multipart(request) {
        return super::upload::upload(request, payload, state, caller).await;
    }
    let body: NewDocumentBody = read_json_body(
        request,
        payload,
        MAX_DOCUMENT_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let collection_id = caller.readable.writable(body.collection.as_deref())?;
    let document = parse_document(body)?
        .in_collection(Some(collection_id))
        .added_by(caller.adder());
    let title = document.title.clone();
    // On a task of its own, so that a client that goes away does not cut the
    // transaction short.
    let library = state.library.clone();
    let outcome = actix_web::rt::spawn(async move { library.add_document(&document).await })
        .await
        .map_err(|error| ApiError::internal("the import task", error))?
        .map_err(ingest_error)?;
    let body = StoredDocument {
        id: outcome.id(),
        chunks: outcome.chunks(),
    };
    Ok(match outcome {
        IngestOutcome::Created { .. } | IngestOutcome::Replaced { .. } => {
            let added = Event::of(request, Action::DocumentAdded, title)
                .with(serde_json::json!({"document_id": body.id, "collection_id": collection_id}));
            audit::record(&state.pool, added).await;
            HttpResponse::Created().json(body)
        }
        IngestOutcome::Unchanged { .. } | IngestOutcome::Refreshed { .. } => {
            HttpResponse::Ok().json(body)
        }
    })
}

/// `DELETE /api/documents/{id}`: 204 for a writer of its collection; 404 when absent,
/// not a number, or in a collection the caller cannot read; 403 when they can only
/// read it.
#[utoipa::path(
    tag = "documents",
    params(("id" = i64, Path, description = "the document's id")),
    responses(
        (status = 204, description = "deleted, with its chunks"),
        (status = 401, description = "`unauthorized`", body = ErrorBody),
        (status = 403, description = "`forbidden`: the caller may read its collection but not write it", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
    )
)]
#[delete("/api/documents/{id}")]
pub async fn delete(
    caller: Caller,
    request: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    delete_document(&caller, &request, &id, &state).await
}

/// `DELETE /api/admin/documents/{id}`: as `DELETE /api/documents/{id}`, for admins and
/// the service token.
#[utoipa::path(
    tag = "documents",
    security(("admin_token" = [])),
    params(("id" = i64, Path, description = "the document's id")),
    responses(
        (status = 204, description = "deleted, with its chunks"),
        (status = 404, description = "`not_found`: no such document, or not a number", body = ErrorBody),
    )
)]
#[delete("/api/admin/documents/{id}")]
pub async fn admin_delete(
    _: Admin,
    caller: Caller,
    request: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    delete_document(&caller, &request, &id, &state).await
}

async fn delete_document(
    caller: &Caller,
    request: &HttpRequest,
    id: &str,
    state: &AppState,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::NotFound(format!("no document {id}"));
    let document_id: i64 = id.parse().map_err(|_| not_found())?;
    let collection_id = state
        .library
        .collection_of(document_id)
        .await?
        .ok_or_else(not_found)?;
    match caller.readable.access_to(collection_id) {
        None => return Err(not_found()),
        Some(Access::Read) => {
            return Err(ApiError::NotWritable(format!(
                "document {id} can be read, not deleted, by you"
            )));
        }
        Some(Access::Write) => {}
    }
    if state
        .library
        .delete_document(document_id)
        .await
        .map_err(ApiError::from)?
    {
        let deleted = Event::of(request, Action::DocumentDeleted, id)
            .with(serde_json::json!({"document_id": document_id, "collection_id": collection_id}));
        audit::record(&state.pool, deleted).await;
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(not_found())
    }
}

/// `POST /api/admin/reindex`: what the reloaded index holds.
#[utoipa::path(
    tag = "documents",
    security(("admin_token" = [])),
    responses(
        (status = 200, description = "the index was reloaded from the database", body = IndexSummary),
    )
)]
#[post("/api/admin/reindex")]
pub async fn reindex(_: Admin, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let stats = state.library.reindex().await.map_err(ApiError::from)?;
    Ok(HttpResponse::Ok().json(IndexSummary {
        documents: stats.documents,
        chunks: stats.chunks,
        dimension: stats.dimension,
        dimension_mismatch: stats.dimension_mismatch,
    }))
}

/// `{"title","content"}`, both non-empty strings; the title is trimmed.
/// The document to store: a title and a content that are not blank.
pub fn parse_document(body: NewDocumentBody) -> Result<SourceDocument, ApiError> {
    let title = body.title.trim();
    if title.is_empty() {
        return Err(ApiError::InvalidJson("`title` is empty".to_owned()));
    }
    if body.content.trim().is_empty() {
        return Err(ApiError::InvalidJson("`content` is empty".to_owned()));
    }
    Ok(SourceDocument::markdown(
        title.to_owned(),
        None,
        body.content,
    ))
}

fn ingest_error(error: IngestError) -> ApiError {
    match error {
        IngestError::Empty => ApiError::InvalidJson("`content` is empty".to_owned()),
        IngestError::Database(error) => error.into(),
        IngestError::Embedding(error) => ApiError::embedding(error),
        other => ApiError::unavailable("importing a document", other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::body::parse_json_body;
    use serde_json::{Value, json};

    fn parse(body: Value) -> Result<SourceDocument, ApiError> {
        parse_document(parse_json_body(&serde_json::to_vec(&body).unwrap())?)
    }

    #[test]
    fn a_document_needs_a_title_and_content() {
        let document = parse(json!({"title": " Notes ", "content": "# Hi\ntext"})).unwrap();
        assert_eq!(document.title, "Notes");
        assert_eq!(document.content, "# Hi\ntext");
        assert_eq!(document.source, None);
        let message = |body: Value| parse(body).unwrap_err().to_string();
        assert_eq!(message(json!({"title": "t"})), "missing field `content`");
        assert_eq!(
            message(json!({"title": " ", "content": "c"})),
            "`title` is empty"
        );
        assert_eq!(
            message(json!({"title": "t", "content": "\n\t"})),
            "`content` is empty"
        );
        assert_eq!(
            message(json!({"title": 1, "content": "c"})),
            "title: invalid type: integer `1`, expected a string"
        );
        assert_eq!(message(json!(["t", "c"])), "the body must be a JSON object");
        for body in [
            json!({"title": "t"}),
            json!(["t", "c"]),
            json!({"title": 1}),
        ] {
            assert_eq!(parse(body).unwrap_err().code(), "invalid_json");
        }
    }
}
