//! PDF (`.pdf`, and any file that starts with `%PDF-`): the text layer, page by page.
//!
//! `pdf-extract` (over `lopdf`) decodes the fonts and lays out each character; this
//! module takes the characters with their positions ([`glyphs`]) and rebuilds lines,
//! columns, headings and paragraphs ([`layout`]), drops running headers and footers,
//! resolves ligatures (ﬁ → fi) and rejoins words hyphenated at a line end. The title
//! is the document's Title, else the largest heading of its first page with text,
//! else its first heading. A PDF without text (scanned pages)
//! is refused as having no text layer; an encrypted one unless it opens with the empty
//! password (as files that only restrict printing or copying do). Before parsing, the
//! compressed streams are measured ([`guard`]), so a decompression bomb is refused.

mod content;
mod glyphs;
mod guard;
mod layout;
mod work;

use pdf_extract::{Document, Object};

use crate::text::MarkdownText;
use crate::{ExtractedDocument, FormatReader, Limits, ReadError};
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
        let title = info_title(&document);
        write_pages(collector.pages, limits, title)
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
    pages: Vec<PagePieces>,
    limits: &Limits,
    title: Option<String>,
) -> Result<ExtractedDocument, ReadError> {
    let widths: Vec<f64> = pages.iter().map(|page| page.width).collect();
    let mut pages: Vec<Vec<layout::Piece>> = pages.into_iter().map(|page| page.pieces).collect();
    for piece in pages.iter_mut().flatten() {
        piece.text = resolve_ligatures(&piece.text);
    }
    let characters: usize = pages
        .iter()
        .flatten()
        .map(|piece| piece.text.chars().filter(|c| !c.is_whitespace()).count())
        .sum();
    if characters < MIN_TEXT_CHARS {
        return Err(ReadError::NoTextLayer);
    }
    layout::drop_running_furniture(&mut pages);
    let body = layout::body_size(&pages);
    let heading_sizes = layout::heading_sizes(&pages, body);
    let mut page_blocks: Vec<Vec<Block>> = pages
        .iter()
        .zip(widths)
        .map(|(pieces, width)| layout::blocks(pieces, width, &heading_sizes))
        .collect();
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
    text.finish(title, CONTENT_TYPE)
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
