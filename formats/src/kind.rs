//! Telling the kind of a file from its content as well as its name.
//!
//! The content decides first: `%PDF-` near the start is a PDF, a zip archive holding
//! `word/document.xml` is a Word document, markup that opens like a web page is HTML,
//! whatever the name says. The name decides between the text kinds (`.md` is
//! Markdown, `.html` is HTML even without a doctype). A name that promises a PDF or a
//! Word document over content that is neither is refused with what the content is.

use std::io::Cursor;

use memchr::memmem;

use crate::image::ImageFormat;
use crate::{FormatReader, ReadError, docx, html, image, markdown, pdf, plain};

/// File name extensions read, lower case, without the dot.
pub const SUPPORTED_EXTENSIONS: &[&str] = &[
    "md", "markdown", "txt", "text", "pdf", "html", "htm", "docx", "png", "jpg", "jpeg", "tif",
    "tiff", "webp",
];

/// The kinds of file read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Markdown,
    PlainText,
    Pdf,
    Html,
    Docx,
    /// Read by OCR.
    Image(ImageFormat),
}

/// How far into a file its PDF header may start (as PDF readers allow).
const PDF_HEADER_WINDOW: usize = 1024;
/// How much of a text file is looked at to tell HTML.
const HTML_SNIFF_WINDOW: usize = 1024;

impl Kind {
    /// The reader of this kind.
    pub fn reader(self) -> &'static dyn FormatReader {
        match self {
            Kind::Markdown => &markdown::MarkdownReader,
            Kind::PlainText => &plain::PlainTextReader,
            Kind::Pdf => &pdf::PdfReader,
            Kind::Html => &html::HtmlReader,
            Kind::Docx => &docx::DocxReader,
            Kind::Image(format) => image::reader(format),
        }
    }

    /// What a person calls a file of this kind ("not a readable PDF: …").
    pub fn label(self) -> &'static str {
        match self {
            Kind::Markdown => "Markdown file",
            Kind::PlainText => "text file",
            Kind::Pdf => "PDF",
            Kind::Html => "web page",
            Kind::Docx => "Word document",
            Kind::Image(format) => format.label(),
        }
    }

    /// The kind named by a file's extension, if it is one read.
    pub fn from_name(file_name: &str) -> Option<Kind> {
        let (_, extension) = file_name.rsplit_once('.')?;
        match extension.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(Kind::Markdown),
            "txt" | "text" => Some(Kind::PlainText),
            "pdf" => Some(Kind::Pdf),
            "html" | "htm" => Some(Kind::Html),
            "docx" => Some(Kind::Docx),
            "png" => Some(Kind::Image(ImageFormat::Png)),
            "jpg" | "jpeg" => Some(Kind::Image(ImageFormat::Jpeg)),
            "tif" | "tiff" => Some(Kind::Image(ImageFormat::Tiff)),
            "webp" => Some(Kind::Image(ImageFormat::WebP)),
            _ => None,
        }
    }

    /// The kind of a file, from its content first and its name second.
    pub fn detect(bytes: &[u8], file_name: &str) -> Result<Kind, ReadError> {
        let named = Kind::from_name(file_name);
        if let Some(kind) = binary_kind(bytes)? {
            return Ok(kind);
        }
        let looks_like_html = sniffs_as_html(bytes);
        match named {
            Some(Kind::Pdf) | Some(Kind::Docx) if looks_like_html => Ok(Kind::Html),
            Some(Kind::Pdf) => Err(ReadError::WrongKind {
                expected: "a PDF",
                found: format!("it does not start with %PDF- ({})", describe_text(bytes)),
            }),
            Some(Kind::Docx) => Err(ReadError::WrongKind {
                expected: "a Word document",
                found: format!("it is not a zip archive ({})", describe_text(bytes)),
            }),
            Some(Kind::Image(format)) => Err(ReadError::WrongKind {
                expected: match format {
                    ImageFormat::Png => "a PNG image",
                    ImageFormat::Jpeg => "a JPEG image",
                    ImageFormat::Tiff => "a TIFF image",
                    ImageFormat::WebP => "a WebP image",
                },
                found: format!(
                    "its content does not start as one ({})",
                    describe_text(bytes)
                ),
            }),
            _ if looks_like_html => Ok(Kind::Html),
            Some(kind) => Ok(kind),
            None if bytes.contains(&0) => {
                Err(ReadError::Unsupported(match file_name.rsplit_once('.') {
                    Some((_, extension)) => format!("a binary .{extension} file"),
                    None => "a binary file".to_owned(),
                }))
            }
            None => Ok(Kind::PlainText),
        }
    }
}

/// The kinds told by their first bytes; an error for binary kinds that are not read.
fn binary_kind(bytes: &[u8]) -> Result<Option<Kind>, ReadError> {
    let head = &bytes[..bytes.len().min(PDF_HEADER_WINDOW)];
    if memmem::find(head, b"%PDF-").is_some() {
        return Ok(Some(Kind::Pdf));
    }
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        return zip_kind(bytes).map(Some);
    }
    if let Some(format) = ImageFormat::from_signature(bytes) {
        return Ok(Some(Kind::Image(format)));
    }
    const REFUSED: [(&[u8], &str); 5] = [
        (
            b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1",
            "an old Word .doc file or a password-protected Office file; save it as .docx without a password",
        ),
        (b"GIF8", "a GIF image"),
        (b"\x1F\x8B", "a gzip archive"),
        (b"{\\rtf", "an RTF document; save it as .docx"),
        (b"7z\xBC\xAF\x27\x1C", "a 7-Zip archive"),
    ];
    for (magic, what) in REFUSED {
        if bytes.starts_with(magic) {
            return Err(ReadError::Unsupported(what.to_owned()));
        }
    }
    Ok(None)
}

/// A zip archive is a Word document when it holds `word/document.xml`.
fn zip_kind(bytes: &[u8]) -> Result<Kind, ReadError> {
    docx::check_entry_count(bytes)?;
    let archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|error| {
        ReadError::malformed("Word document", format!("a damaged zip archive ({error})"))
    })?;
    if archive.index_for_name("word/document.xml").is_some() {
        return Ok(Kind::Docx);
    }
    let what = if archive.index_for_name("content.xml").is_some() {
        "an OpenDocument file (.odt); save it as .docx"
    } else if archive.index_for_name("xl/workbook.xml").is_some() {
        "an Excel workbook"
    } else if archive.index_for_name("ppt/presentation.xml").is_some() {
        "a PowerPoint presentation"
    } else {
        "a zip archive that is not a Word document"
    };
    Err(ReadError::Unsupported(what.to_owned()))
}

/// Whether text opens like a web page: a doctype, `<html>`, `<head>` or `<body>` near
/// the start (after a byte order mark, whitespace and comments).
fn sniffs_as_html(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(HTML_SNIFF_WINDOW)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let mut rest = head.trim_ascii_start();
    while let Some(comment) = rest.strip_prefix(b"<!--") {
        match memmem::find(comment, b"-->") {
            Some(end) => rest = comment[end + 3..].trim_ascii_start(),
            None => return false,
        }
    }
    if rest.starts_with(b"<?xml") {
        rest = memmem::find(rest, b"?>").map_or(&[][..], |end| rest[end + 2..].trim_ascii_start());
    }
    let lower: Vec<u8> = rest.iter().take(16).map(u8::to_ascii_lowercase).collect();
    ["<!doctype html", "<html", "<head", "<body"]
        .iter()
        .any(|opener| lower.starts_with(opener.as_bytes()))
}

fn describe_text(bytes: &[u8]) -> &'static str {
    if bytes.contains(&0) {
        "its content is binary"
    } else if std::str::from_utf8(bytes).is_ok() {
        "its content is plain text"
    } else {
        "its content is of an unknown kind"
    }
}

#[cfg(test)]
mod tests;
