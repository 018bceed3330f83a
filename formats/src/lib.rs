//! bor's document readers: the bytes of a file become Markdown-shaped text.
//!
//! One entry point, [`read_document`], tells the kind of a file from its content as
//! well as its name ([`Kind::detect`]), runs the reader of that kind on a worker thread
//! under a deadline, and returns an [`ExtractedDocument`] or a [`ReadError`] whose
//! message a person understands. Each kind is one module behind the
//! [`FormatReader`] trait; adding a kind is a file, a [`Kind`] variant and its
//! detection rule. `docs/FORMATS.md` says which crates read which kind, and why.
//!
//! Every read is bounded ([`Limits`]): input size, unpacked size (zip entries and
//! compressed PDF streams are read through a counting limit), nesting depth, pages,
//! extracted text and time.
//!
//! Scanned pages and images are read by OCR ([`Ocr`], module `ocr`): a PDF page whose
//! text layer holds too little text is rendered and read, page by page, and each page
//! says where its text came from ([`PageSource`]).

mod docx;
mod error;
mod html;
mod image;
mod kind;
mod limits;
mod markdown;
mod ocr;
mod pdf;
mod plain;
mod text;
mod worker;

pub use error::ReadError;
pub use html::{PageLinks, links as html_links};
pub use image::ImageFormat;
pub use kind::{Kind, SUPPORTED_EXTENSIONS};
pub use limits::Limits;
pub use ocr::{Ocr, OcrEngine, PageSource, Transcriber, check_renderer, check_tesseract};
pub use worker::{MAX_OVERDUE, overdue_reads};

/// A document read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractedDocument {
    /// The document's own title (PDF Title or else the largest heading of its first
    /// page, HTML `<title>`, Word title, else its first heading); `None` when it has
    /// none, and the caller names it after the file.
    pub title: Option<String>,
    /// The kind, as a media type: `text/markdown`, `text/plain`, `application/pdf`,
    /// `text/html`,
    /// `application/vnd.openxmlformats-officedocument.wordprocessingml.document`,
    /// `image/png`, `image/jpeg`, `image/tiff` or `image/webp`.
    pub content_type: &'static str,
    /// The text, Markdown-shaped: ATX headings (`#` to `######`), paragraphs separated
    /// by blank lines, table rows (cells joined by ` | `) and list items as lines.
    pub text: String,
    /// For a PDF or an image, the byte offset in `text` where page `i + 1` begins
    /// (`page_starts[0] == 0`); empty for kinds without pages.
    pub page_starts: Vec<usize>,
    /// For a PDF or an image, where the text of page `i + 1` came from; empty for kinds
    /// without pages.
    pub pages: Vec<PageSource>,
}

impl ExtractedDocument {
    /// The page (1-based) that holds the byte `offset` of `text`; `None` for kinds
    /// without pages.
    pub fn page_at(&self, offset: usize) -> Option<u32> {
        if self.page_starts.is_empty() {
            return None;
        }
        let pages_started = self.page_starts.partition_point(|&start| start <= offset);
        u32::try_from(pages_started.max(1)).ok()
    }
}

/// One kind of file: turns its bytes into a document.
pub trait FormatReader: Sync {
    /// The media type recorded for documents of this kind.
    fn content_type(&self) -> &'static str;

    /// Reads `bytes` within `limits` (all but the deadline, which
    /// [`read_document`] keeps).
    fn read(&self, bytes: &[u8], limits: &Limits) -> Result<ExtractedDocument, ReadError>;
}

/// Reads a file given by its bytes and name (the name only helps tell the kind).
///
/// Blocking: the reader runs on a worker thread and is given up after
/// `limits.deadline`; OCR runs on the calling thread between the steps of a PDF read,
/// each page within [`Ocr::page_timeout`]. Call it from a blocking context
/// (`spawn_blocking`) in async code.
pub fn read_document(
    bytes: Vec<u8>,
    file_name: &str,
    limits: &Limits,
) -> Result<ExtractedDocument, ReadError> {
    limits.check_input(bytes.len())?;
    let kind = Kind::detect(&bytes, file_name)?;
    match kind {
        Kind::Pdf => return pdf::read_in_steps(bytes, limits),
        // Nothing is decoded in this process: OCR's programs run bounded on their own.
        Kind::Image(_) => return kind.reader().read(&bytes, limits),
        _ => {}
    }
    let job_limits = limits.clone();
    worker::run_with_deadline(limits.deadline, kind.label(), move || {
        kind.reader().read(&bytes, &job_limits)
    })
}

/// Reads `bytes` as `kind` on the calling thread, without the deadline (OCR's own
/// bounds stay): for
/// benchmarks and fuzzing, where the caller bounds the time.
pub fn read_as(kind: Kind, bytes: &[u8], limits: &Limits) -> Result<ExtractedDocument, ReadError> {
    limits.check_input(bytes.len())?;
    kind.reader().read(bytes, limits)
}
