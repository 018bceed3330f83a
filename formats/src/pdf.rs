//! PDF (`.pdf`, and any file that starts with `%PDF-`): the text layer, page by page,
//! and OCR for the pages that hold too little text.
//!
//! `pdf-extract` (over `lopdf`) decodes the fonts and lays out each character; this
//! module takes the characters with their positions ([`glyphs`]) and rebuilds lines,
//! columns, headings and paragraphs ([`layout`]), drops running headers and footers,
//! resolves ligatures (ﬁ → fi) and rejoins words hyphenated at a line end. The title
//! is the document's Title, else the largest heading of its first page with text,
//! else its first heading. A page whose text layer holds fewer than
//! [`Ocr::min_chars`](crate::Ocr::min_chars) characters is rendered and read by OCR
//! ([`crate::ocr`]), and what OCR read takes the place of its text layer; each page
//! records where its text came from. With OCR off, a PDF without text (scanned pages)
//! is refused as having no text layer. An encrypted PDF is refused unless it opens
//! with the empty password (as files that only restrict printing or copying do).
//! Before parsing, the compressed streams are measured ([`guard`]), so a
//! decompression bomb is refused.

mod content;
mod glyphs;
mod guard;
mod layout;
mod work;

use std::sync::Arc;
use std::time::{Duration, Instant};

use pdf_extract::{Document, Object};

use crate::ocr::{self, OcrEngine, OcrPage, PageSource, Rendering, Scratch};
use crate::text::MarkdownText;
use crate::{ExtractedDocument, FormatReader, Limits, ReadError, worker};
use glyphs::{Collector, PagePieces};
use layout::Block;
use work::Work;

pub(crate) const CONTENT_TYPE: &str = "application/pdf";
const KIND: &str = "PDF";
/// Fewer non-blank characters than this in the whole file: no text layer.
const MIN_TEXT_CHARS: usize = 4;

pub(crate) struct PdfReader;

impl FormatReader for PdfReader {
    fn content_type(&self) -> &'static str {
        CONTENT_TYPE
    }

    fn read(&self, bytes: &[u8], limits: &Limits) -> Result<ExtractedDocument, ReadError> {
        let layer = read_layer(bytes, limits)?;
        let reads = read_scanned_pages(bytes, &layer.pages, limits);
        write_pages(layer, reads, limits)
    }
}

/// Reads a PDF as [`read_document`](crate::read_document) does: the text layer and the
/// writing of the text on worker threads under the deadline, OCR between them on the
/// calling thread (each page bounded on its own).
pub(crate) fn read_in_steps(
    bytes: Vec<u8>,
    limits: &Limits,
) -> Result<ExtractedDocument, ReadError> {
    let bytes = Arc::new(bytes);
    let layer = {
        let (bytes, limits) = (Arc::clone(&bytes), limits.clone());
        worker::run_with_deadline(limits.deadline, KIND, move || read_layer(&bytes, &limits))?
    };
    let reads = read_scanned_pages(&bytes, &layer.pages, limits);
    drop(bytes);
    let job_limits = limits.clone();
    worker::run_with_deadline(limits.deadline, KIND, move || {
        write_pages(layer, reads, &job_limits)
    })
}

/// The text layer of a PDF, page by page.
struct Layer {
    pages: Vec<PagePieces>,
    title: Option<String>,
}

fn read_layer(bytes: &[u8], limits: &Limits) -> Result<Layer, ReadError> {
    guard::check_unpacked_size(bytes, limits)?;
    let mut document = Document::load_mem(bytes).map_err(|error| load_error(&error))?;
    if document.is_encrypted() && document.decrypt("").is_err() {
        return Err(ReadError::Encrypted { kind: KIND });
    }
    let page_count = count_pages(&document, limits.max_pages)?;
    if page_count == 0 {
        return Err(ReadError::malformed(KIND, "it has no pages"));
    }
    let mut collector = Collector::new(limits);
    let mut work = Work::new(limits);
    for (number, page) in document.get_pages() {
        let replaced = work.prepare_page(&mut document, page)?;
        let laid_out = pdf_extract::output_doc_page(&document, &mut collector, number);
        replaced.restore(&mut document);
        // A page cut short by an error is kept as far as it went.
        let _ = collector.finish_page();
        if let Some(reason) = collector.overflow.take() {
            return Err(reason);
        }
        if let Err(error) = laid_out {
            if collector.pages.is_empty() {
                return Err(ReadError::malformed(KIND, error));
            }
            break;
        }
    }
    Ok(Layer {
        title: info_title(&document),
        pages: collector.pages,
    })
}

/// What became of a page's text.
#[derive(Debug)]
enum PageRead {
    /// Its text layer is its text.
    Text,
    /// Read by OCR.
    Ocr(OcrPage),
    /// Neither: the reason.
    Skipped(String),
    /// Not read: OCR stopped before it, at this bound.
    Stopped(OcrStop),
}

/// The bound at which OCR stopped reading a document's pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OcrStop {
    /// [`ocr::Ocr::max_pages`] pages were read.
    PageCap,
    /// The pages read took [`ocr::Ocr::document_timeout`].
    TimeBound,
}

/// The non-blank characters of a page's text layer.
fn layer_chars(page: &PagePieces) -> usize {
    page.pieces
        .iter()
        .map(|piece| piece.text.chars().filter(|c| !c.is_whitespace()).count())
        .sum()
}

/// Reads the pages with too little text by OCR, at most [`Ocr::max_pages`] of them
/// and none once those read took [`Ocr::document_timeout`] (blocking: runs `pdftoppm`
/// and `tesseract`). What OCR read replaces a page's text layer when it holds at least
/// twice the layer's characters; else the layer stays.
fn read_scanned_pages(bytes: &[u8], pages: &[PagePieces], limits: &Limits) -> Vec<PageRead> {
    let ocr = &limits.ocr;
    let scanned = |page: &PagePieces| layer_chars(page) < ocr.min_chars;
    if !ocr.is_on() {
        return pages
            .iter()
            .map(|page| match layer_chars(page) {
                0 => PageRead::Skipped("it has no text layer, and OCR is off".to_owned()),
                _ => PageRead::Text,
            })
            .collect();
    }
    if !pages.iter().any(scanned) {
        return pages.iter().map(|_| PageRead::Text).collect();
    }
    let pdf = Scratch::new().and_then(|scratch| {
        let path = scratch.write("document.pdf", bytes)?;
        Ok((scratch, path))
    });
    let started = Instant::now();
    let mut read = 0;
    pages
        .iter()
        .enumerate()
        .map(|(index, page)| {
            if !scanned(page) {
                return PageRead::Text;
            }
            if read >= ocr.max_pages {
                return PageRead::Stopped(OcrStop::PageCap);
            }
            if read > 0 && started.elapsed() >= ocr.document_timeout {
                return PageRead::Stopped(OcrStop::TimeBound);
            }
            read += 1;
            let result = pdf
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|(scratch, path)| read_page(scratch, path, index + 1, page, &limits.ocr));
            match result {
                // A short typed page (a closing line, a title page) reads the same by
                // OCR: its text layer, with its headings and exact characters, stays.
                Ok(read) if read.chars() < 2 * layer_chars(page) => PageRead::Text,
                Ok(read) => PageRead::Ocr(read),
                Err(reason) => PageRead::Skipped(reason),
            }
        })
        .collect()
}

/// Renders page `number` and reads it; its rendering is removed once read.
fn read_page(
    scratch: &Scratch,
    pdf: &std::path::Path,
    number: usize,
    page: &PagePieces,
    ocr: &ocr::Ocr,
) -> Result<OcrPage, String> {
    let (width, height) = ocr.page_pixels(page.width, page.height);
    if let Some(reason) = ocr.refuse_pixels(width, height) {
        return Err(format!(
            "the page is {:.0} × {:.0} points, at {} DPI {reason}",
            page.width, page.height, ocr.dpi
        ));
    }
    let size = (width, height);
    match &ocr.engine {
        OcrEngine::Vision(transcriber) => {
            let image = ocr::render_pdf_page(scratch, pdf, number, size, Rendering::Jpeg, ocr)?;
            let bytes = std::fs::read(&image)
                .map_err(|error| format!("the rendered page is missing ({error})"));
            let _ = std::fs::remove_file(&image);
            transcriber
                .transcribe(&bytes?, "image/jpeg")
                .map(|text| OcrPage::of_transcript(&text))
        }
        _ => {
            let image = ocr::render_pdf_page(scratch, pdf, number, size, Rendering::Pgm, ocr)?;
            let pages = ocr::read_image(&image, Some(ocr.dpi), ocr);
            let _ = std::fs::remove_file(&image);
            pages.map(|pages| pages.into_iter().next().unwrap_or_default())
        }
    }
}

/// The pages of the page tree, each node visited once: a tree that loops back on
/// itself (which would make the parser walk it without end) is refused, and so is one
/// with more than `max_pages` pages.
fn count_pages(document: &Document, max_pages: usize) -> Result<usize, ReadError> {
    let root = document
        .catalog()
        .and_then(|catalog| catalog.get(b"Pages"))
        .and_then(Object::as_reference)
        .map_err(|_| ReadError::malformed(KIND, "it has no page tree"))?;
    let mut visited = std::collections::HashSet::new();
    let mut pending = vec![root];
    let mut pages = 0;
    while let Some(id) = pending.pop() {
        if !visited.insert(id) {
            return Err(ReadError::malformed(
                KIND,
                "its page tree loops back on itself (or lists a page twice)",
            ));
        }
        let Ok(node) = document.get_dictionary(id) else {
            continue;
        };
        match node.get(b"Type").and_then(Object::as_name) {
            Ok(b"Pages") => {
                let kids = node
                    .get(b"Kids")
                    .and_then(Object::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                pending.extend(kids.iter().filter_map(|kid| kid.as_reference().ok()));
            }
            _ => pages += 1,
        }
        if pages > max_pages {
            return Err(ReadError::TooLarge(format!(
                "it has more than the {max_pages} pages read"
            )));
        }
    }
    Ok(pages)
}

fn load_error(error: &pdf_extract::Error) -> ReadError {
    let detail = error.to_string();
    if detail.to_ascii_lowercase().contains("encrypt")
        || detail.to_ascii_lowercase().contains("password")
    {
        ReadError::Encrypted { kind: KIND }
    } else {
        ReadError::malformed(KIND, detail)
    }
}

fn write_pages(
    layer: Layer,
    reads: Vec<PageRead>,
    limits: &Limits,
) -> Result<ExtractedDocument, ReadError> {
    let Layer { pages, title } = layer;
    let widths: Vec<f64> = pages.iter().map(|page| page.width).collect();
    let mut pages: Vec<Vec<layout::Piece>> = pages.into_iter().map(|page| page.pieces).collect();
    // What OCR read takes the place of the little text a page's layer holds.
    for (pieces, read) in pages.iter_mut().zip(&reads) {
        if matches!(read, PageRead::Ocr(page) if !page.paragraphs.is_empty()) {
            pieces.clear();
        }
    }
    for piece in pages.iter_mut().flatten() {
        piece.text = resolve_ligatures(&piece.text);
    }
    let characters: usize = pages
        .iter()
        .flatten()
        .map(|piece| piece.text.chars().filter(|c| !c.is_whitespace()).count())
        .sum();
    let ocr_words = reads
        .iter()
        .any(|read| matches!(read, PageRead::Ocr(page) if !page.paragraphs.is_empty()));
    if characters < MIN_TEXT_CHARS && !ocr_words {
        return Err(no_text(&reads, limits));
    }
    layout::drop_running_furniture(&mut pages);
    let body = layout::body_size(&pages);
    let heading_sizes = layout::heading_sizes(&pages, body);
    let mut sources = Vec::with_capacity(reads.len());
    let mut page_blocks: Vec<Vec<Block>> = Vec::with_capacity(reads.len());
    let mut stop_said = false;
    for ((pieces, width), read) in pages.iter().zip(widths).zip(reads) {
        let (blocks, source) = match read {
            PageRead::Text => (
                layout::blocks(pieces, width, &heading_sizes),
                PageSource::Text,
            ),
            PageRead::Ocr(page) if page.paragraphs.is_empty() => (
                layout::blocks(pieces, width, &heading_sizes),
                PageSource::Ocr {
                    confidence: page.confidence,
                },
            ),
            PageRead::Ocr(page) => (
                page.paragraph_texts().map(Block::Paragraph).collect(),
                PageSource::Ocr {
                    confidence: page.confidence,
                },
            ),
            PageRead::Skipped(reason) => (
                layout::blocks(pieces, width, &heading_sizes),
                PageSource::Skipped { reason },
            ),
            PageRead::Stopped(stop) => {
                let mut blocks = layout::blocks(pieces, width, &heading_sizes);
                if !stop_said {
                    stop_said = true;
                    blocks.insert(
                        0,
                        Block::Paragraph(format!(
                            "[OCR stopped here: it reads {}, and the pages from {} on were not read.]",
                            stop_rule(stop, limits),
                            page_blocks.len() + 1
                        )),
                    );
                }
                (
                    blocks,
                    PageSource::Skipped {
                        reason: stop_reason(stop, limits),
                    },
                )
            }
        };
        page_blocks.push(blocks);
        sources.push(source);
    }
    for page in 1..page_blocks.len() {
        let (before, after) = page_blocks.split_at_mut(page);
        if let (Some(previous), Some(next)) = (before.last_mut(), after.first_mut()) {
            layout::join_across_pages(previous, next);
        }
    }
    let title = title.or_else(|| first_page_title(&page_blocks));
    let mut text = MarkdownText::new(limits.max_text_bytes);
    for blocks in page_blocks {
        text.start_page();
        for block in blocks {
            match block {
                Block::Heading(level, heading) => text.heading(level, &heading)?,
                Block::Paragraph(paragraph) => text.paragraph(&paragraph)?,
                Block::Line(line) => text.line(&line)?,
            }
        }
        text.end_lines();
    }
    let mut document = text.finish(title, CONTENT_TYPE)?;
    document.pages = sources;
    Ok(document)
}

/// What OCR does at most, said where it stopped: "at most 200 pages of a document".
fn stop_rule(stop: OcrStop, limits: &Limits) -> String {
    match stop {
        OcrStop::PageCap => format!(
            "at most {} of a document",
            pages_phrase(limits.ocr.max_pages)
        ),
        OcrStop::TimeBound => format!(
            "a document's pages for at most {}",
            duration_phrase(limits.ocr.document_timeout)
        ),
    }
}

/// The reason a page OCR stopped before is skipped.
fn stop_reason(stop: OcrStop, limits: &Limits) -> String {
    match stop {
        OcrStop::PageCap => format!(
            "past OCR's cap of {} a document",
            pages_phrase(limits.ocr.max_pages)
        ),
        OcrStop::TimeBound => format!(
            "past OCR's time bound of {} a document",
            duration_phrase(limits.ocr.document_timeout)
        ),
    }
}

/// "30 min", "90 s", "1 min 30 s", "0 s".
fn duration_phrase(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match (seconds / 60, seconds % 60) {
        (0, seconds) => format!("{seconds} s"),
        (minutes, 0) => format!("{minutes} min"),
        (minutes, seconds) => format!("{minutes} min {seconds} s"),
    }
}

/// "1 page", "200 pages".
fn pages_phrase(count: usize) -> String {
    match count {
        1 => "1 page".to_owned(),
        _ => format!("{count} pages"),
    }
}

/// Why a PDF with no text at all is refused.
fn no_text(reads: &[PageRead], limits: &Limits) -> ReadError {
    if !limits.ocr.is_on() {
        return ReadError::NoTextLayer;
    }
    if reads.iter().any(|read| matches!(read, PageRead::Ocr(_))) {
        return ReadError::NoWords;
    }
    let reason = reads.iter().find_map(|read| match read {
        PageRead::Skipped(reason) => Some(reason.clone()),
        PageRead::Stopped(stop) => Some(stop_reason(*stop, limits)),
        _ => None,
    });
    ReadError::NothingRead(reason.unwrap_or_else(|| "its pages hold no text".to_owned()))
}

/// The largest text of the first page with text, when it is set larger than the body:
/// the title of a PDF whose metadata names none (the line under it is not).
fn first_page_title(page_blocks: &[Vec<Block>]) -> Option<String> {
    let blocks = page_blocks.iter().find(|blocks| !blocks.is_empty())?;
    let headings = blocks.iter().filter_map(|block| match block {
        Block::Heading(level, text) => Some((*level, text)),
        _ => None,
    });
    let (_, largest) = headings.min_by_key(|(level, _)| *level)?;
    Some(largest.clone())
}

/// Typographic ligatures as the letters they join.
fn resolve_ligatures(text: &str) -> String {
    if !text.chars().any(|c| ('\u{FB00}'..='\u{FB06}').contains(&c)) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 4);
    for c in text.chars() {
        match c {
            '\u{FB00}' => out.push_str("ff"),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FB02}' => out.push_str("fl"),
            '\u{FB03}' => out.push_str("ffi"),
            '\u{FB04}' => out.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => out.push_str("st"),
            other => out.push(other),
        }
    }
    out
}

/// The Title of the document information dictionary.
fn info_title(document: &Document) -> Option<String> {
    let info = document.trailer.get(b"Info").ok()?;
    let info = match info {
        Object::Reference(id) => document.get_object(*id).ok()?,
        other => other,
    };
    let title = info.as_dict().ok()?.get(b"Title").ok()?;
    let title = match title {
        Object::Reference(id) => document.get_object(*id).ok()?,
        other => other,
    };
    match title {
        Object::String(bytes, _) => Some(decode_text_string(bytes)),
        _ => None,
    }
    .filter(|title| !title.trim().is_empty())
}

/// A PDF text string: UTF-16 with a byte order mark, UTF-8 with one, else
/// PDFDocEncoding (read as Latin-1, which it matches for letters).
fn decode_text_string(bytes: &[u8]) -> String {
    if let Some(utf16) = bytes.strip_prefix(b"\xFE\xFF") {
        let units: Vec<u16> = utf16
            .chunks_exact(2)
            .map(|pair| u16::from_be_bytes([pair[0], pair[1]]))
            .collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(utf8) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return String::from_utf8_lossy(utf8).into_owned();
    }
    bytes.iter().map(|&b| char::from(b)).collect()
}

#[cfg(test)]
mod tests {
    use super::{decode_text_string, resolve_ligatures};

    #[test]
    fn ligatures_become_their_letters() {
        assert_eq!(
            resolve_ligatures("e\u{FB03}cient \u{FB02}ow o\u{FB00}"),
            "efficient flow off"
        );
    }

    #[test]
    fn text_strings_decode_by_their_byte_order_mark() {
        assert_eq!(decode_text_string(b"\xFE\xFF\x00H\x00i"), "Hi");
        assert_eq!(decode_text_string(b"Caf\xE9"), "Café");
    }
}
