//! `POST /api/documents` (and `/api/admin/documents`) with `multipart/form-data`: an
//! optional `collection` part, then one or more `file` parts, each read by the format
//! reader of its kind and stored into that collection (docs/PROTOCOL.md, "Document
//! routes"). A file that cannot be read or stored is listed under `skipped` with the
//! reason; the others go on.

use std::time::Duration;

use actix_multipart::{Field, Multipart};
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;

use super::error::ApiError;
use super::import_report::{
    ImportReport, ImportedDocument, LeftOut, PagesRead, SkippedPage, Source, status_of,
};
use crate::audit::{self, Action, Event};
use crate::auth::Caller;
use crate::import::document_from_bytes;
use crate::knowledge::formats::Limits;
use crate::knowledge::ingest::{self, IngestError};
use crate::state::AppState;

/// Whether the request is a multipart upload (else it is the JSON form).
pub fn is_multipart(request: &HttpRequest) -> bool {
    request
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("multipart/form-data")
        })
}

/// Longest `collection` part read, in bytes.
const MAX_COLLECTION_PART_BYTES: usize = 256;

/// Reads every `file` part and stores it into the collection the `collection` part
/// names (before the files; `default` without one), which the caller must be able to
/// write. Each part's bytes must keep coming: a silence longer than
/// `BOR_REQUEST_BODY_TIMEOUT` ends the request with 408.
pub async fn upload(
    request: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
    caller: &Caller,
) -> Result<HttpResponse, ApiError> {
    let max_bytes = state.config.max_upload_bytes;
    let silence = state.config.request_body_timeout;
    let mut multipart = Multipart::new(request.headers(), payload);
    let mut report = ImportReport::default();
    let mut named: Option<String> = None;
    let mut target: Option<i64> = None;
    while let Some(field) = next_within(silence, multipart.next()).await? {
        let field =
            field.map_err(|error| ApiError::InvalidJson(format!("malformed upload: {error}")))?;
        if field.name() == Some("collection") {
            if target.is_some() {
                return Err(ApiError::InvalidJson(
                    "the `collection` part must come before the files".to_owned(),
                ));
            }
            let bytes = read_field(field, MAX_COLLECTION_PART_BYTES, silence)
                .await?
                .ok_or_else(|| {
                    ApiError::InvalidCollection("the collection name is too long".to_owned())
                })?;
            let name = String::from_utf8_lossy(&bytes).trim().to_owned();
            super::nul::check_text(&name, "the collection field")?;
            named = Some(name);
            continue;
        }
        if field.name() != Some("file") {
            drain(field, silence).await?;
            continue;
        }
        let collection_id = match target {
            Some(id) => id,
            None => *target.insert(caller.readable.writable(named.as_deref())?),
        };
        let file = file_name(&field);
        match read_field(field, max_bytes, silence).await? {
            Some(bytes) => store(state, caller, collection_id, file, bytes, &mut report).await,
            None => report.skipped.push(LeftOut {
                source: Source::File(file),
                reason: format!("larger than the {max_bytes} bytes allowed (BOR_MAX_UPLOAD_BYTES)"),
            }),
        }
    }
    if report.documents.is_empty() && report.skipped.is_empty() {
        return Err(ApiError::InvalidJson(
            "the upload has no `file` part".to_owned(),
        ));
    }
    for document in report.documents.iter().filter(|d| d.status != "unchanged") {
        let added = Event::of(request, Action::DocumentAdded, &document.title).with(
            serde_json::json!({"document_id": document.id, "file": document.source.name(), "status": document.status}),
        );
        audit::record(&state.pool, added).await;
    }
    Ok(HttpResponse::Ok().json(report))
}

/// The part's file name, without any folder a client put in it.
fn file_name(field: &Field) -> String {
    field
        .content_disposition()
        .and_then(|disposition| disposition.get_filename())
        .map(|name| name.rsplit(['/', '\\']).next().unwrap_or(name).to_owned())
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| "upload".to_owned())
}

/// The part's bytes; `None` when they pass `max_bytes` (the rest is read and dropped,
/// so the next part can be reached).
async fn read_field(
    mut field: Field,
    max_bytes: usize,
    silence: Duration,
) -> Result<Option<Vec<u8>>, ApiError> {
    let mut bytes = Vec::new();
    let mut too_large = false;
    while let Some(chunk) = next_within(silence, field.next()).await? {
        let chunk =
            chunk.map_err(|error| ApiError::InvalidJson(format!("malformed upload: {error}")))?;
        if too_large || bytes.len() + chunk.len() > max_bytes {
            too_large = true;
            bytes = Vec::new();
            continue;
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((!too_large).then_some(bytes))
}

async fn drain(mut field: Field, silence: Duration) -> Result<(), ApiError> {
    while let Some(chunk) = next_within(silence, field.next()).await? {
        chunk.map_err(|error| ApiError::InvalidJson(format!("malformed upload: {error}")))?;
    }
    Ok(())
}

/// The next item, unless the client is silent for longer than `silence`.
async fn next_within<T>(
    silence: Duration,
    next: impl Future<Output = Option<T>>,
) -> Result<Option<T>, ApiError> {
    tokio::time::timeout(silence, next)
        .await
        .map_err(|_| ApiError::BodyTimeout {
            seconds: silence.as_secs_f64(),
        })
}

/// Reads one file as a document and stores it, recording the result.
async fn store(
    state: &AppState,
    caller: &Caller,
    collection_id: i64,
    file: String,
    bytes: Vec<u8>,
    report: &mut ImportReport,
) {
    let limits = Limits {
        max_input_bytes: state.config.max_upload_bytes,
        ..crate::knowledge::read_limits(&state.config)
    };
    let name = file.clone();
    let read =
        tokio::task::spawn_blocking(move || document_from_bytes(bytes, &name, None, &limits))
            .await
            .unwrap_or_else(|error| Err(format!("the reader failed ({error})")));
    let document = match read {
        Ok(document) => document
            .in_collection(Some(collection_id))
            .added_by(caller.adder()),
        Err(reason) => {
            report.skipped.push(LeftOut {
                source: Source::File(file),
                reason,
            });
            return;
        }
    };
    let title = document.title.clone();
    let ingest::PagesRead { ocr, skipped } = document.pages_read();
    // On a task of its own, so that a client that goes away does not cut the
    // transaction short.
    let library = state.library.clone();
    let stored = actix_web::rt::spawn(async move { library.add_document(&document).await }).await;
    match stored {
        Ok(Ok(outcome)) => report.documents.push(ImportedDocument {
            source: Source::File(file),
            id: outcome.id(),
            title,
            chunks: outcome.chunks(),
            status: status_of(&outcome),
            pages: Some(PagesRead {
                ocr_pages: ocr,
                skipped_pages: skipped
                    .into_iter()
                    .map(|(page, reason)| SkippedPage { page, reason })
                    .collect(),
            }),
        }),
        Ok(Err(error)) => report.skipped.push(LeftOut {
            source: Source::File(file),
            reason: reason_of(&error),
        }),
        Err(error) => report.skipped.push(LeftOut {
            source: Source::File(file),
            reason: format!("the import failed ({error})"),
        }),
    }
}

/// What a person reads when a file could not be stored; causes that may name
/// internals go to the log.
fn reason_of(error: &IngestError) -> String {
    match error {
        IngestError::Empty => "empty: the document holds no text".to_owned(),
        IngestError::Embedding(_) | IngestError::BadEmbeddings(_) => {
            tracing::warn!(error = %bor_actors::error_chain(error), "an uploaded file could not be embedded");
            "the embedding model is unavailable — try again in a moment".to_owned()
        }
        other => {
            tracing::error!(error = %bor_actors::error_chain(other), "an uploaded file could not be stored");
            "it could not be stored — try again in a moment".to_owned()
        }
    }
}
