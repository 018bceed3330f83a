//! Word documents (`.docx`): paragraphs in order, heading styles as headings, tables
//! as rows of cells joined by ` | `, list paragraphs as lines, footnotes at the end.
//!
//! Read with `zip` and `quick-xml` directly (docs/FORMATS.md says why): every part is
//! read through a counting limit, so a zip bomb stops at
//! [`Limits::max_unpacked_bytes`], and the XML nesting is bounded by
//! [`Limits::max_depth`]. The title is the document's own (`docProps/core.xml`), else
//! its first heading.

mod styles;
mod xml;

use std::io::{Cursor, Read};

use styles::HeadingStyles;
use xml::{Events, Item, attribute};
use zip::ZipArchive;

use crate::text::MarkdownText;
use crate::{ExtractedDocument, FormatReader, Limits, ReadError};

pub(crate) const CONTENT_TYPE: &str =
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
const KIND: &str = "Word document";
/// Most entries a Word document's archive may list (real ones have a few dozen).
const MAX_ENTRIES: usize = 10_000;

pub(crate) struct DocxReader;

impl FormatReader for DocxReader {
    fn content_type(&self) -> &'static str {
        CONTENT_TYPE
    }

    fn read(&self, bytes: &[u8], limits: &Limits) -> Result<ExtractedDocument, ReadError> {
        let mut parts = Parts::open(bytes, limits)?;
        let document = parts
            .read("word/document.xml")?
            .ok_or_else(|| ReadError::WrongKind {
                expected: "a Word document",
                found: "the archive has no word/document.xml".to_owned(),
            })?;
        let styles = match parts.read("word/styles.xml")? {
            Some(xml) => HeadingStyles::parse(&xml, limits.max_depth)?,
            None => HeadingStyles::default(),
        };
        let footnotes = parts.read("word/footnotes.xml")?;
        let title = match parts.read("docProps/core.xml")? {
            Some(xml) => core_title(&xml, limits.max_depth)?,
            None => None,
        };
        let mut text = MarkdownText::new(limits.max_text_bytes);
        write_body(&document, &styles, limits.max_depth, &mut text)?;
        if let Some(footnotes) = footnotes {
            write_footnotes(&footnotes, limits.max_depth, &mut text)?;
        }
        text.finish(title, CONTENT_TYPE)
    }
}

/// The archive, and how many bytes may still be unpacked from it.
struct Parts<'a> {
    archive: ZipArchive<Cursor<&'a [u8]>>,
    budget: u64,
}

impl<'a> Parts<'a> {
    fn open(bytes: &'a [u8], limits: &Limits) -> Result<Parts<'a>, ReadError> {
        check_entry_count(bytes)?;
        let archive = ZipArchive::new(Cursor::new(bytes)).map_err(|error| {
            ReadError::malformed(KIND, format!("a damaged zip archive ({error})"))
        })?;
        Ok(Parts {
            archive,
            budget: limits.max_unpacked_bytes,
        })
    }

    /// The text of the part `name`, `None` when there is none.
    fn read(&mut self, name: &str) -> Result<Option<String>, ReadError> {
        let Some(index) = self.archive.index_for_name(name) else {
            return Ok(None);
        };
        let budget = self.budget;
        let entry = self.archive.by_index(index).map_err(|error| match error {
            zip::result::ZipError::UnsupportedArchive(detail)
                if detail.contains("ncrypt") || detail.contains("assword") =>
            {
                ReadError::Encrypted { kind: KIND }
            }
            other => ReadError::malformed(
                KIND,
                format!("its part {name} cannot be unpacked ({other})"),
            ),
        })?;
        if entry.encrypted() {
            return Err(ReadError::Encrypted { kind: KIND });
        }
        let mut unpacked = Vec::new();
        entry
            .take(budget + 1)
            .read_to_end(&mut unpacked)
            .map_err(|error| {
                ReadError::malformed(KIND, format!("its part {name} is damaged ({error})"))
            })?;
        if unpacked.len() as u64 > budget {
            return Err(ReadError::TooLarge(format!(
                "it unpacks to more than {}",
                crate::limits::human_bytes(budget)
            )));
        }
        self.budget -= unpacked.len() as u64;
        let text = String::from_utf8(unpacked)
            .map_err(|_| ReadError::malformed(KIND, format!("its part {name} is not UTF-8")))?;
        Ok(Some(text))
    }
}

/// Refuses an archive whose directory lists more than [`MAX_ENTRIES`] entries, before
/// the directory is read into memory: the count is in the end-of-directory record, the
/// last 22 bytes of the archive unless a comment (at most 64 KiB) follows it.
pub(crate) fn check_entry_count(bytes: &[u8]) -> Result<(), ReadError> {
    const RECORD: usize = 22;
    let search_from = bytes.len().saturating_sub(RECORD + u16::MAX as usize);
    let Some(record) = memchr::memmem::rfind(&bytes[search_from..], b"PK\x05\x06")
        .map(|at| &bytes[search_from + at..])
    else {
        return Ok(());
    };
    let Some(count) = record
        .get(10..12)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
    else {
        return Ok(());
    };
    // 0xFFFF: the real count is in a ZIP64 record, which only archives far larger than
    // any document need.
    if usize::from(count) > MAX_ENTRIES {
        return Err(ReadError::malformed(
            KIND,
            format!("its archive lists {count} entries, more than {MAX_ENTRIES}"),
        ));
    }
    Ok(())
}

/// The `dc:title` of `docProps/core.xml`.
fn core_title(xml: &str, max_depth: usize) -> Result<Option<String>, ReadError> {
    let mut events = Events::new(xml, max_depth);
    let mut inside = false;
    let mut title = String::new();
    while let Some(item) = events.next()? {
        match item {
            Item::Open {
                element,
                empty: false,
            } if element.name().as_ref() == "dc:title" => inside = true,
            Item::Close(name) if name == "dc:title" => break,
            Item::Text(piece) if inside => title.push_str(&piece),
            _ => {}
        }
    }
    Ok(Some(title).filter(|title| !title.trim().is_empty()))
}

/// A paragraph being read.
#[derive(Default)]
struct Paragraph {
    text: String,
    style: Option<String>,
    outline_level: Option<usize>,
    listed: bool,
}

/// Where the walk over `document.xml` is.
#[derive(Default)]
struct Body {
    /// Open paragraphs: text boxes put paragraphs inside paragraphs.
    paragraphs: Vec<Paragraph>,
    /// Rows of the outermost open table; inner tables fold into its cells.
    tables: usize,
    row: Option<Vec<String>>,
    in_text: bool,
    /// Inside `mc:Fallback`, which repeats what `mc:Choice` holds.
    fallback: usize,
}

fn write_body(
    xml: &str,
    styles: &HeadingStyles,
    max_depth: usize,
    text: &mut MarkdownText,
) -> Result<(), ReadError> {
    let mut events = Events::new(xml, max_depth);
    let mut body = Body::default();
    while let Some(item) = events.next()? {
        match item {
            Item::Open { element, empty } => {
                let name = element.name();
                let name = name.as_ref();
                if name == "mc:Fallback" && !empty {
                    body.fallback += 1;
                }
                if body.fallback > 0 {
                    continue;
                }
                match name {
                    "w:p" if !empty => body.paragraphs.push(Paragraph::default()),
                    "w:pStyle" => {
                        if let Some(paragraph) = body.paragraphs.last_mut() {
                            paragraph.style = attribute(&element, "w:val");
                        }
                    }
                    "w:outlineLvl" => {
                        if let Some(paragraph) = body.paragraphs.last_mut() {
                            paragraph.outline_level =
                                attribute(&element, "w:val").and_then(|v| v.parse().ok());
                        }
                    }
                    "w:numPr" => {
                        if let Some(paragraph) = body.paragraphs.last_mut() {
                            paragraph.listed = true;
                        }
                    }
                    "w:t" if !empty => body.in_text = true,
                    "w:tab" | "w:br" | "w:cr" => push_text(&mut body, " "),
                    "w:noBreakHyphen" => push_text(&mut body, "-"),
                    "w:tbl" if !empty => body.tables += 1,
                    "w:tr" if !empty && body.tables == 1 => body.row = Some(Vec::new()),
                    "w:tc" if !empty && body.tables == 1 => {
                        if let Some(row) = &mut body.row {
                            row.push(String::new());
                        }
                    }
                    _ => {}
                }
            }
            Item::Close(name) => {
                if name == "mc:Fallback" {
                    body.fallback = body.fallback.saturating_sub(1);
                    continue;
                }
                if body.fallback > 0 {
                    continue;
                }
                match name.as_str() {
                    "w:t" => body.in_text = false,
                    "w:p" => {
                        if let Some(paragraph) = body.paragraphs.pop() {
                            end_paragraph(paragraph, &mut body, styles, text)?;
                        }
                    }
                    "w:tr" if body.tables == 1 => {
                        if let Some(row) = body.row.take() {
                            let cells: Vec<String> = row
                                .iter()
                                .map(|cell| crate::text::collapse_whitespace(cell))
                                .collect();
                            text.line(&cells.join(" | "))?;
                        }
                    }
                    "w:tbl" => {
                        body.tables = body.tables.saturating_sub(1);
                        if body.tables == 0 {
                            text.end_lines();
                        }
                    }
                    _ => {}
                }
            }
            Item::Text(piece) => {
                if body.in_text && body.fallback == 0 {
                    push_text(&mut body, &piece);
                }
            }
        }
    }
    Ok(())
}

fn push_text(body: &mut Body, piece: &str) {
    if let Some(paragraph) = body.paragraphs.last_mut() {
        paragraph.text.push_str(piece);
    }
}

fn end_paragraph(
    paragraph: Paragraph,
    body: &mut Body,
    styles: &HeadingStyles,
    text: &mut MarkdownText,
) -> Result<(), ReadError> {
    // A paragraph inside a table cell is part of that cell.
    if body.tables > 0 {
        if let Some(cell) = body.row.as_mut().and_then(|row| row.last_mut()) {
            if !cell.is_empty() {
                cell.push(' ');
            }
            cell.push_str(&paragraph.text);
        }
        return Ok(());
    }
    let level = paragraph
        .style
        .as_deref()
        .and_then(|style| styles.level(style))
        .or(paragraph
            .outline_level
            .filter(|level| *level < 6)
            .map(|level| level + 1));
    match level {
        Some(level) => text.heading(level, &paragraph.text),
        None if paragraph.listed
            || paragraph
                .style
                .as_deref()
                .is_some_and(|style| styles.is_list(style)) =>
        {
            text.line(&format!("- {}", paragraph.text.trim()))
        }
        None => text.paragraph(&paragraph.text),
    }
}

/// The footnotes (real ones, not the separators Word keeps among them), as paragraphs
/// after the body.
fn write_footnotes(xml: &str, max_depth: usize, text: &mut MarkdownText) -> Result<(), ReadError> {
    let mut events = Events::new(xml, max_depth);
    let mut in_note = false;
    let mut in_text = false;
    let mut note = String::new();
    while let Some(item) = events.next()? {
        match item {
            Item::Open {
                element,
                empty: false,
            } => match element.name().as_ref() {
                "w:footnote" => {
                    in_note = attribute(&element, "w:type").is_none_or(|kind| kind == "normal");
                }
                "w:t" => in_text = in_note,
                _ => {}
            },
            Item::Close(name) => match name.as_str() {
                "w:t" => in_text = false,
                "w:p" if in_note => note.push(' '),
                "w:footnote" => {
                    text.paragraph(&note)?;
                    note.clear();
                    in_note = false;
                }
                _ => {}
            },
            Item::Text(piece) if in_text => note.push_str(&piece),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
