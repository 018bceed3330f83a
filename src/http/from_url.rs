//! `POST /api/admin/documents/url` `{"url","crawl"?}`: the admin page's "Add from URL".
//! The page (or, with `crawl`, up to that many pages of its site) is fetched and stored
//! as `bor import https://…` does (`import/pages.rs`); each page is listed as stored or
//! skipped with the reason (docs/PROTOCOL.md, "Document routes").

use actix_web::{HttpRequest, HttpResponse, post, web};
use serde::Deserialize;
use utoipa::ToSchema;

use super::Admin;
use super::body::{RequestBody, read_json_body};
use super::error::{ApiError, ErrorBody};
use super::import_report::ImportReport;
use crate::audit::{self, Action, Event};
use crate::auth::Caller;
use crate::import::InCollection;
use crate::import::pages::import_address;
use crate::knowledge::ingest::{IngestError, Unobserved};
use crate::state::AppState;
use crate::web::crawl::MAX_CRAWL_PAGES;
use crate::web::{FetchSettings, Fetcher};

/// Largest accepted body: an address and a number.
const MAX_URL_BODY_BYTES: usize = 16 * 1024;

/// A page to add.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(expecting = "a JSON object with a `url`")]
pub struct AddFromUrl {
    /// An `http://` or `https://` address.
    url: String,
    /// Add up to this many pages of the site (its sitemap, else its links), 1 to 100,000.
    crawl: Option<u32>,
    /// The collection to store the pages into (`default` when absent).
    #[serde(default)]
    collection: Option<String>,
}

impl RequestBody for AddFromUrl {}

/// `POST /api/admin/documents/url`: 200 `{"documents","skipped","notes"}`.
#[utoipa::path(
    tag = "documents",
    security(("admin_token" = [])),
    request_body(content = AddFromUrl, content_type = "application/json"),
    responses(
        (status = 200, description = "the pages stored and those skipped, with why", body = ImportReport),
        (status = 400, description = "`invalid_json`: malformed, no `url`, or `crawl` out of 1..=100000", body = ErrorBody),
        (status = 503, description = "`unavailable`: the database or the embedding model is down", body = ErrorBody),
    )
)]
#[post("/api/admin/documents/url")]
pub async fn add_from_url(
    _: Admin,
    caller: Caller,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: AddFromUrl = read_json_body(
        &request,
        payload,
        MAX_URL_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    if body.url.trim().is_empty() {
        return Err(ApiError::InvalidJson("`url` is empty".to_owned()));
    }
    if body
        .crawl
        .is_some_and(|pages| !(1..=MAX_CRAWL_PAGES).contains(&pages))
    {
        return Err(ApiError::InvalidJson(format!(
            "`crawl` must be from 1 to {MAX_CRAWL_PAGES}"
        )));
    }
    let collection_id = caller.readable.writable(body.collection.as_deref())?;
    let added_by = caller.adder();
    let library = state.library.clone();
    let settings = FetchSettings::from_config(&state.config);
    // On a task of its own, so that a client that goes away does not cut a page's
    // transaction short.
    let imported = actix_web::rt::spawn(async move {
        let fetcher = Fetcher::new(settings);
        let mut report = ImportReport::of_pages();
        let crawl = body.crawl.map(|pages| pages as usize);
        let address = body.url.trim();
        let sink = InCollection {
            sink: &library,
            collection_id,
            added_by,
        };
        import_address(&sink, &fetcher, address, crawl, &Unobserved, &mut report)
            .await
            .map(|()| report)
    })
    .await
    .map_err(|error| ApiError::internal("running the import task", error.to_string()))?;
    match imported {
        Ok(report) => {
            for page in report
                .documents
                .iter()
                .filter(|page| page.status != "unchanged")
            {
                let added = Event::of(&request, Action::DocumentAdded, page.source.name()).with(
                    serde_json::json!({"document_id": page.id, "collection_id": collection_id}),
                );
                audit::record(&state.pool, added).await;
            }
            Ok(HttpResponse::Ok().json(report))
        }
        Err(IngestError::Database(error)) => Err(error.into()),
        Err(error) => Err(ApiError::unavailable("importing a page", error.to_string())),
    }
}
