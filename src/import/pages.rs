//! Web pages into the knowledge base: each page fetched (`crate::web`), read by the
//! reader of its kind, and stored with its URL as its source and the validators its
//! server sent, so that a page fetched again unchanged is not read again. A page that
//! cannot be fetched or read is named with the reason; the others go on; a page is
//! stored whole or not at all.

use url::Url;

use super::DocumentSink;
use super::files::document_from_bytes;
use crate::db::page_validators;
use crate::db::{chunks, documents};
use crate::knowledge::formats::{self, Limits};
use crate::knowledge::ingest::{IngestError, IngestOutcome, IngestProgress};
use crate::web::crawl::{Crawl, Next};
use crate::web::{Fetched, Fetcher, Overflow, Page};

/// What became of one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageReport {
    Stored {
        url: String,
        title: String,
        outcome: IngestOutcome,
    },
    /// The server says the stored version is current.
    NotModified {
        url: String,
        id: i64,
        title: String,
        chunks: usize,
    },
    Skipped {
        url: String,
        reason: String,
    },
}

/// Where `bor import` and the admin API hear of each page.
pub trait PageListener {
    fn page(&mut self, report: PageReport);
    /// Something about the crawl as a whole (a sitemap that could not be read).
    fn note(&mut self, _note: &str) {}
}

/// Imports the page `address`, or with `crawl` up to that many pages of its site. Stops
/// at the first failure that would fail every later page too (the LLM server or the
/// database being unavailable).
pub async fn import_address(
    sink: &impl DocumentSink,
    fetcher: &Fetcher,
    address: &str,
    crawl: Option<usize>,
    progress: &dyn IngestProgress,
    listener: &mut dyn PageListener,
) -> Result<(), IngestError> {
    let url = match Url::parse(address) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => url,
        Ok(_) | Err(_) => {
            listener.page(PageReport::Skipped {
                url: address.to_owned(),
                reason: "not a web address (only http:// and https:// are fetched)".to_owned(),
            });
            return Ok(());
        }
    };
    let Some(max) = crawl else {
        let (report, _) = import_page(sink, fetcher, &url, true, progress).await?;
        listener.page(report);
        return Ok(());
    };
    let mut crawl = Crawl::begin(fetcher, &url, max).await;
    for note in std::mem::take(&mut crawl.notes) {
        listener.note(&note);
    }
    // Following links needs each page's body, so such a crawl asks for pages in full
    // (an unchanged page is still not embedded again).
    let conditional = !crawl.follows_links();
    while let Some(next) = crawl.next_page() {
        match next {
            Next::Disallowed(url) => listener.page(PageReport::Skipped {
                url: url.to_string(),
                reason: "robots.txt does not allow it".to_owned(),
            }),
            Next::Fetch(url) => {
                let (report, page) =
                    import_page(sink, fetcher, &url, conditional, progress).await?;
                listener.page(report);
                if let Some(page) = page.filter(|_| crawl.follows_links()) {
                    let limits = Limits::with_max_input_bytes(fetcher.settings().max_bytes);
                    let read = tokio::task::spawn_blocking(move || {
                        formats::html_links(&page.bytes, &limits).map(|links| (page.url, links))
                    })
                    .await;
                    if let Ok(Ok((page_url, links))) = read {
                        crawl.add_links(&page_url, &links);
                    }
                }
            }
        }
    }
    Ok(())
}

/// Fetches, reads and stores one page; gives back the page when it was read as HTML
/// (for its links).
async fn import_page(
    sink: &impl DocumentSink,
    fetcher: &Fetcher,
    url: &Url,
    conditional: bool,
    progress: &dyn IngestProgress,
) -> Result<(PageReport, Option<Page>), IngestError> {
    let source = crate::web::fetch::without_fragment(url);
    let skipped = |reason: String| {
        Ok((
            PageReport::Skipped {
                url: source.clone(),
                reason,
            },
            None,
        ))
    };
    let known = if conditional {
        let mut conn = sink.pool().get().await?;
        page_validators::validators_of(&mut conn, &source).await?
    } else {
        None
    };
    let page = match fetcher.get(url, known.as_ref(), Overflow::Refuse).await {
        Ok(Fetched::Page(page)) => page,
        Ok(Fetched::NotModified) => return not_modified(sink, &source).await,
        Err(error) => return skipped(error.to_string()),
    };
    let Some(file_name) = file_name_of(&page) else {
        let kind = page.content_type.as_deref().unwrap_or("no Content-Type");
        return skipped(format!(
            "not a kind bor reads ({kind}; bor reads web pages, Markdown, plain text, PDF and Word documents)"
        ));
    };
    let read = {
        let (bytes, source, file_name) = (page.bytes.clone(), source.clone(), file_name.clone());
        let limits = Limits {
            max_input_bytes: fetcher.settings().max_bytes,
            ocr: fetcher.settings().ocr.clone(),
            ..Limits::default()
        };
        tokio::task::spawn_blocking(move || {
            document_from_bytes(bytes, &file_name, Some(source), &limits)
        })
        .await
    };
    let mut document = match read {
        Ok(Ok(document)) => document,
        Ok(Err(reason)) => return skipped(reason),
        Err(error) => return skipped(format!("unreadable ({error})")),
    };
    if document.title == file_name {
        document.title = source.clone();
    }
    let outcome = match sink.store(&document, progress).await {
        Ok(outcome) => outcome,
        Err(error @ (IngestError::Embedding(_) | IngestError::Database(_))) => return Err(error),
        Err(error) => return skipped(error.to_string()),
    };
    if !page.validators.is_empty() {
        let mut conn = sink.pool().get().await?;
        page_validators::set_validators(&mut conn, outcome.id(), &page.validators).await?;
    }
    let is_html = document.content_type == "text/html";
    let report = PageReport::Stored {
        url: source,
        title: document.title,
        outcome,
    };
    Ok((report, is_html.then_some(page)))
}

async fn not_modified(
    sink: &impl DocumentSink,
    source: &str,
) -> Result<(PageReport, Option<Page>), IngestError> {
    let mut conn = sink.pool().get().await?;
    let collection_id = super::sink_collection(&mut conn, sink).await?;
    let found = documents::ids_from_source(&mut conn, source, collection_id).await?;
    let document = match found.last() {
        Some(&id) => documents::find_document(&mut conn, id).await?,
        None => None,
    };
    // Validators are found through a stored document, which is gone only when it was
    // deleted meanwhile.
    let Some(document) = document else {
        let report = PageReport::Skipped {
            url: source.to_owned(),
            reason: "its stored version was deleted meanwhile; import it again".to_owned(),
        };
        return Ok((report, None));
    };
    let chunks = chunks::count_of(&mut conn, document.id).await?;
    let report = PageReport::NotModified {
        url: source.to_owned(),
        id: document.id,
        title: document.title,
        chunks,
    };
    Ok((report, None))
}

/// A file name that tells the reader the page's kind: the URL's own when it names a
/// kind read, else one from the media type; `None` for a kind bor does not read.
fn file_name_of(page: &Page) -> Option<String> {
    let last = page
        .url
        .path_segments()
        .and_then(|mut segments| segments.next_back())
        .unwrap_or_default();
    let by_type = match page.content_type.as_deref() {
        Some("text/html" | "application/xhtml+xml") => Some("html"),
        Some("text/markdown" | "text/x-markdown") => Some("md"),
        Some("text/plain") => Some("txt"),
        Some("application/pdf") => Some("pdf"),
        Some("application/vnd.openxmlformats-officedocument.wordprocessingml.document") => {
            Some("docx")
        }
        Some(_) => None,
        None => return formats::Kind::from_name(last).map(|_| last.to_owned()),
    }?;
    if formats::Kind::from_name(last).is_some() && by_type != "html" {
        return Some(last.to_owned());
    }
    Some(format!("page.{by_type}"))
}
