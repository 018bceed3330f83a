//! The documents API (SPEC §3): `GET /api/documents`, and for admins
//! `POST /api/admin/documents`, `DELETE /api/admin/documents/{id}` and
//! `POST /api/admin/reindex` (reloads this instance's vector index from the database,
//! for rows written by other means).

use actix_web::{HttpRequest, HttpResponse, web};
use bor_actors::llm::LlmError;
use serde_json::{Value, json};

use super::Admin;
use super::body::read_json_body;
use super::error::ApiError;
use crate::db::DbError;
use crate::knowledge::chunking::TextFormat;
use crate::knowledge::ingest::{IngestError, IngestOutcome, SourceDocument};
use crate::state::AppState;

/// Largest accepted document body.
pub const MAX_DOCUMENT_BODY_BYTES: usize = 4 * 1024 * 1024;

/// `GET /api/documents`: `[{"id","title","chunks","created_at"}]`, oldest first.
pub async fn list(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let documents = state.library.documents().await.map_err(database_error)?;
    Ok(HttpResponse::Ok().json(documents))
}

/// `POST /api/admin/documents` `{"title","content"}`: 201 `{"id","chunks"}` when
/// stored, 200 with the existing id when the same content is already there.
pub async fn add(
    _: Admin,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body = read_json_body(&request, payload, MAX_DOCUMENT_BODY_BYTES).await?;
    let document = parse_document(&body)?;
    // On a task of its own, so that a client that goes away does not cut the
    // transaction short.
    let library = state.library.clone();
    let outcome = actix_web::rt::spawn(async move { library.add_document(&document).await })
        .await
        .map_err(|error| ApiError::Internal(format!("the import task failed: {error}")))?
        .map_err(ingest_error)?;
    let body = json!({"id": outcome.id(), "chunks": outcome.chunks()});
    Ok(match outcome {
        IngestOutcome::Created { .. } | IngestOutcome::Replaced { .. } => {
            HttpResponse::Created().json(body)
        }
        IngestOutcome::Unchanged { .. } | IngestOutcome::Refreshed { .. } => {
            HttpResponse::Ok().json(body)
        }
    })
}

/// `DELETE /api/admin/documents/{id}`: 204, or 404 when absent or not a number.
pub async fn delete(
    _: Admin,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::NotFound(format!("no document {}", id.as_str()));
    let document_id: i64 = id.parse().map_err(|_| not_found())?;
    if state
        .library
        .delete_document(document_id)
        .await
        .map_err(database_error)?
    {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(not_found())
    }
}

/// `POST /api/admin/reindex`: what the reloaded index holds.
pub async fn reindex(_: Admin, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let stats = state.library.reindex().await.map_err(database_error)?;
    Ok(HttpResponse::Ok().json(json!({
        "documents": stats.documents,
        "chunks": stats.chunks,
        "dimension": stats.dimension,
        "dimension_mismatch": stats.dimension_mismatch,
    })))
}

/// `{"title","content"}`, both non-empty strings; the title is trimmed.
pub fn parse_document(body: &Value) -> Result<SourceDocument, ApiError> {
    let field = |name: &str| match body.get(name) {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text.clone()),
        Some(Value::String(_)) => Err(ApiError::InvalidJson(format!("`{name}` is empty"))),
        Some(_) => Err(ApiError::InvalidJson(format!("`{name}` must be a string"))),
        None => Err(ApiError::InvalidJson(format!("`{name}` is missing"))),
    };
    if !body.is_object() {
        return Err(ApiError::InvalidJson(
            "the body must be a JSON object".to_owned(),
        ));
    }
    Ok(SourceDocument {
        title: field("title")?.trim().to_owned(),
        source: None,
        content: field("content")?,
        format: TextFormat::Markdown,
    })
}

fn database_error(error: DbError) -> ApiError {
    if error.is_unavailable() {
        ApiError::Unavailable(error.to_string())
    } else {
        ApiError::Internal(error.to_string())
    }
}

fn ingest_error(error: IngestError) -> ApiError {
    match error {
        IngestError::Empty => ApiError::InvalidJson("`content` is empty".to_owned()),
        IngestError::Database(error) => database_error(error),
        IngestError::Embedding(LlmError::Rejected(cause)) => {
            ApiError::Internal(format!("the embedding request was rejected: {cause}"))
        }
        other => ApiError::Unavailable(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_needs_a_title_and_content() {
        let document =
            parse_document(&json!({"title": " Notes ", "content": "# Hi\ntext"})).unwrap();
        assert_eq!(document.title, "Notes");
        assert_eq!(document.content, "# Hi\ntext");
        assert_eq!(document.source, None);
        let message = |body: Value| parse_document(&body).unwrap_err().to_string();
        assert_eq!(message(json!({"title": "t"})), "`content` is missing");
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
            "`title` must be a string"
        );
        assert_eq!(message(json!(["t", "c"])), "the body must be a JSON object");
    }
}
