//! Plain text (`.txt`, `.text`, and text with no known extension): read as it is.

use crate::{ExtractedDocument, FormatReader, Limits, ReadError};

pub(crate) const CONTENT_TYPE: &str = "text/plain";

pub(crate) struct PlainTextReader;

impl FormatReader for PlainTextReader {
    fn content_type(&self) -> &'static str {
        CONTENT_TYPE
    }

    fn read(&self, bytes: &[u8], limits: &Limits) -> Result<ExtractedDocument, ReadError> {
        let text = decode_text(bytes, limits)?;
        Ok(ExtractedDocument {
            title: None,
            content_type: CONTENT_TYPE,
            text: text.to_owned(),
            page_starts: Vec::new(),
            pages: Vec::new(),
        })
    }
}

/// The text of a text file: UTF-8 without NUL bytes, a leading byte order mark
/// dropped, not blank, within the text bound.
pub(crate) fn decode_text<'a>(bytes: &'a [u8], limits: &Limits) -> Result<&'a str, ReadError> {
    if bytes.contains(&0) {
        return Err(ReadError::NotText(
            "binary (it contains NUL bytes)".to_owned(),
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|error| {
        ReadError::NotText(format!(
            "not UTF-8 (invalid byte at offset {})",
            error.valid_up_to()
        ))
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(ReadError::Empty);
    }
    if text.len() > limits.max_text_bytes {
        return Err(crate::limits::text_too_large(limits.max_text_bytes));
    }
    Ok(text)
}
