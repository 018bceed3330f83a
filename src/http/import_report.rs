//! What an import of files or of web pages answers (docs/PROTOCOL.md, "Documents"):
//! the documents stored (or found unchanged), those left out with why, and for web
//! pages what a person should know about the crawl. An upload names each by its `file`,
//! a URL import by its `url`.

use serde::Serialize;
use utoipa::ToSchema;

use crate::import::pages::{PageListener, PageReport};
use crate::knowledge::ingest::IngestOutcome;

/// The answer to an import.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct ImportReport {
    pub documents: Vec<ImportedDocument>,
    pub skipped: Vec<LeftOut>,
    /// Web pages only: what a person should know about the crawl (a sitemap that
    /// could not be read); absent from an upload's answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<String>>,
}

impl ImportReport {
    /// The report of a URL import, whose notes are always given.
    pub fn of_pages() -> ImportReport {
        ImportReport {
            notes: Some(Vec::new()),
            ..ImportReport::default()
        }
    }
}

/// Where a document came from: the file's name as the client sent it, or the page's
/// address (its document's source).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    File(String),
    Url(String),
}

impl Source {
    /// The file's name or the page's address.
    pub fn name(&self) -> &str {
        match self {
            Source::File(name) | Source::Url(name) => name,
        }
    }
}

/// A document stored (or found already stored).
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportedDocument {
    #[serde(flatten)]
    pub source: Source,
    pub id: i64,
    pub title: String,
    pub chunks: usize,
    /// `imported`, `unchanged` or `replaced`.
    #[schema(example = "imported")]
    pub status: &'static str,
    /// Uploaded files only: the pages read by OCR and those not read.
    #[serde(flatten)]
    pub pages: Option<PagesRead>,
}

/// The pages of an uploaded file read by OCR and those not read.
#[derive(Debug, Serialize, ToSchema)]
pub struct PagesRead {
    /// Pages read by OCR (docs/FORMATS.md, "OCR").
    pub ocr_pages: usize,
    /// Pages not read, with the reason (OCR off, too many pixels, too slow, past the
    /// page cap, …).
    pub skipped_pages: Vec<SkippedPage>,
}

/// A page of a document that was not read.
#[derive(Debug, Serialize, ToSchema)]
pub struct SkippedPage {
    /// From 1.
    pub page: u32,
    pub reason: String,
}

/// A file or page left out, and why (a person reads the reason).
#[derive(Debug, Serialize, ToSchema)]
pub struct LeftOut {
    #[serde(flatten)]
    pub source: Source,
    pub reason: String,
}

/// The word an import's answer gives for what storing a document did.
pub fn status_of(outcome: &IngestOutcome) -> &'static str {
    match outcome {
        IngestOutcome::Created { .. } => "imported",
        // The same text, embedded anew for the current model: nothing a person changed.
        IngestOutcome::Unchanged { .. } | IngestOutcome::Refreshed { .. } => "unchanged",
        IngestOutcome::Replaced { .. } => "replaced",
    }
}

impl PageListener for ImportReport {
    fn page(&mut self, report: PageReport) {
        match report {
            PageReport::Stored {
                url,
                title,
                outcome,
            } => self.documents.push(ImportedDocument {
                source: Source::Url(url),
                id: outcome.id(),
                title,
                chunks: outcome.chunks(),
                status: status_of(&outcome),
                pages: None,
            }),
            PageReport::NotModified {
                url,
                id,
                title,
                chunks,
            } => self.documents.push(ImportedDocument {
                source: Source::Url(url),
                id,
                title,
                chunks,
                status: "unchanged",
                pages: None,
            }),
            PageReport::Skipped { url, reason } => self.skipped.push(LeftOut {
                source: Source::Url(url),
                reason,
            }),
        }
    }

    fn note(&mut self, note: &str) {
        self.notes
            .get_or_insert_with(Vec::new)
            .push(note.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_and_pages_answer_in_their_own_words() {
        let mut upload = ImportReport::default();
        upload.documents.push(ImportedDocument {
            source: Source::File("a.pdf".to_owned()),
            id: 1,
            title: "A".to_owned(),
            chunks: 2,
            status: "imported",
            pages: Some(PagesRead {
                ocr_pages: 1,
                skipped_pages: Vec::new(),
            }),
        });
        upload.skipped.push(LeftOut {
            source: Source::File("b.bin".to_owned()),
            reason: "no".to_owned(),
        });
        assert_eq!(
            serde_json::to_value(&upload).ok(),
            Some(serde_json::json!({
                "documents": [{"file": "a.pdf", "id": 1, "title": "A", "chunks": 2,
                    "status": "imported", "ocr_pages": 1, "skipped_pages": []}],
                "skipped": [{"file": "b.bin", "reason": "no"}],
            }))
        );
        let mut pages = ImportReport::of_pages();
        pages.page(PageReport::Skipped {
            url: "https://example.org/".to_owned(),
            reason: "gone".to_owned(),
        });
        assert_eq!(
            serde_json::to_value(&pages).ok(),
            Some(serde_json::json!({
                "documents": [],
                "skipped": [{"url": "https://example.org/", "reason": "gone"}],
                "notes": [],
            }))
        );
    }
}
