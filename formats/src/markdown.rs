//! Markdown (`.md`, `.markdown`): read as it is; the title is its first ATX heading
//! outside fenced code.

use crate::plain::decode_text;
use crate::{ExtractedDocument, FormatReader, Limits, ReadError};

pub(crate) const CONTENT_TYPE: &str = "text/markdown";

pub(crate) struct MarkdownReader;

impl FormatReader for MarkdownReader {
    fn content_type(&self) -> &'static str {
        CONTENT_TYPE
    }

    fn read(&self, bytes: &[u8], limits: &Limits) -> Result<ExtractedDocument, ReadError> {
        let text = decode_text(bytes, limits)?;
        Ok(ExtractedDocument {
            title: first_heading(text),
            content_type: CONTENT_TYPE,
            text: text.to_owned(),
            page_starts: Vec::new(),
            pages: Vec::new(),
        })
    }
}

/// The text of the first ATX heading (`#` to `######`, up to three spaces of indent)
/// that is not inside a fenced code block and has text.
fn first_heading(text: &str) -> Option<String> {
    let mut open_fence: Option<&str> = None;
    for line in text.lines() {
        let body = line.trim_start_matches(' ');
        if line.len() - body.len() > 3 {
            continue;
        }
        if let Some(fence) = ["```", "~~~"].into_iter().find(|f| body.starts_with(f)) {
            open_fence = match open_fence {
                None => Some(fence),
                Some(open) if open == fence => None,
                other => other,
            };
            continue;
        }
        if open_fence.is_some() {
            continue;
        }
        let marks = body.len() - body.trim_start_matches('#').len();
        let rest = &body[marks..];
        if (1..=6).contains(&marks) && (rest.is_empty() || rest.starts_with([' ', '\t'])) {
            let title = rest.trim().trim_end_matches('#').trim();
            if !title.is_empty() {
                return Some(title.to_owned());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::first_heading;

    #[test]
    fn the_title_is_the_first_heading_outside_code() {
        assert_eq!(
            first_heading("intro\n\n## Install ##\n"),
            Some("Install".to_owned())
        );
        assert_eq!(
            first_heading("```\n# not this\n```\n# This\n"),
            Some("This".to_owned())
        );
        assert_eq!(first_heading("#hashtag\n    # indented code\n"), None);
    }
}
