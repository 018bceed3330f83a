//! The Markdown-shaped text every reader writes: ATX headings, paragraphs separated by
//! blank lines, table rows and list items as lines of one block, pages marked by their
//! byte offsets. Whitespace inside a block is collapsed; control characters but
//! whitespace (U+0000 that a damaged file can yield among them) are dropped here, for
//! every reader that writes through it; the text is bounded by
//! [`Limits::max_text_bytes`](crate::Limits::max_text_bytes).

use crate::{ExtractedDocument, ReadError};

/// Builds the text of one document.
#[derive(Debug)]
pub(crate) struct MarkdownText {
    text: String,
    max_bytes: usize,
    page_starts: Vec<usize>,
    /// Pages started whose first text is still to come.
    pages_pending: usize,
    first_heading: Option<String>,
    last: Last,
}

/// What the text ends with, which decides the separator before the next piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    Nothing,
    Block,
    Line,
}

impl MarkdownText {
    pub(crate) fn new(max_bytes: usize) -> MarkdownText {
        MarkdownText {
            text: String::new(),
            max_bytes,
            page_starts: Vec::new(),
            pages_pending: 0,
            first_heading: None,
            last: Last::Nothing,
        }
    }

    /// A heading of `level` (1 to 6; others are brought within).
    pub(crate) fn heading(&mut self, level: usize, text: &str) -> Result<(), ReadError> {
        let text = collapse_whitespace(&without_controls(text));
        if text.is_empty() {
            return Ok(());
        }
        if self.first_heading.is_none() {
            self.first_heading = Some(text.clone());
        }
        let marks = "#".repeat(level.clamp(1, 6));
        self.push(&format!("{marks} {text}"), Last::Block)
    }

    /// A paragraph.
    pub(crate) fn paragraph(&mut self, text: &str) -> Result<(), ReadError> {
        let text = collapse_whitespace(&without_controls(text));
        if text.is_empty() {
            return Ok(());
        }
        self.push(&escape_heading_marks(&text), Last::Block)
    }

    /// A block of code, kept line by line inside a fence (so that `#` lines in it are
    /// not taken for headings).
    pub(crate) fn code(&mut self, code: &str) -> Result<(), ReadError> {
        let code = without_controls(code);
        let code = code.trim_matches('\n').trim_end();
        if code.trim().is_empty() {
            return Ok(());
        }
        let longest_run = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let fence = "`".repeat(longest_run.max(2) + 1);
        self.push(&format!("{fence}\n{code}\n{fence}"), Last::Block)
    }

    /// One line of a block of lines (a table row, a list item): consecutive lines are
    /// not separated by blank lines.
    pub(crate) fn line(&mut self, text: &str) -> Result<(), ReadError> {
        let text = collapse_whitespace(&without_controls(text));
        if text.is_empty() {
            return Ok(());
        }
        self.push(&escape_heading_marks(&text), Last::Line)
    }

    /// Ends a block of lines, so that the next line starts a block of its own.
    pub(crate) fn end_lines(&mut self) {
        if self.last == Last::Line {
            self.last = Last::Block;
        }
    }

    /// The text that follows starts a new page.
    pub(crate) fn start_page(&mut self) {
        self.pages_pending += 1;
    }

    pub(crate) fn finish(
        self,
        title: Option<String>,
        content_type: &'static str,
    ) -> Result<ExtractedDocument, ReadError> {
        if self.text.trim().is_empty() {
            return Err(ReadError::Empty);
        }
        let mut page_starts = self.page_starts;
        page_starts.extend(std::iter::repeat_n(self.text.len(), self.pages_pending));
        let title = title
            .map(|title| collapse_whitespace(&without_controls(&title)))
            .filter(|title| !title.is_empty())
            .or(self.first_heading);
        Ok(ExtractedDocument {
            title,
            content_type,
            text: self.text,
            page_starts,
            pages: Vec::new(),
        })
    }

    fn push(&mut self, piece: &str, kind: Last) -> Result<(), ReadError> {
        let separator = match (self.last, kind) {
            (Last::Nothing, _) | (Last::Line, Last::Line) => "",
            _ => "\n",
        };
        if self.text.len() + separator.len() + piece.len() + 1 > self.max_bytes {
            return Err(crate::limits::text_too_large(self.max_bytes));
        }
        self.text.push_str(separator);
        let start = self.text.len();
        self.page_starts
            .extend(std::iter::repeat_n(start, self.pages_pending));
        self.pages_pending = 0;
        self.text.push_str(piece);
        self.text.push('\n');
        self.last = kind;
        Ok(())
    }
}

/// Runs of whitespace (line breaks included) become one space; the ends are trimmed.
pub(crate) fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// `text` without control characters other than whitespace: a damaged font, encoding
/// or metadata string can yield U+0000 or another control code, which is no text.
fn without_controls(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || c.is_whitespace())
        .collect()
}

/// A paragraph that would read as an ATX heading ("# not a heading") keeps its text
/// with the first mark escaped.
fn escape_heading_marks(text: &str) -> String {
    let hashes = text.len() - text.trim_start_matches('#').len();
    let after = text[hashes..].chars().next();
    if (1..=6).contains(&hashes) && after.is_none_or(|c| c == ' ') {
        format!("\\{text}")
    } else {
        text.to_owned()
    }
}

/// A line ends with a hyphen after a letter: a word may go on on the next line.
pub(crate) fn ends_hyphenated(text: &str) -> bool {
    text.ends_with(['-', '\u{2010}', '\u{00AD}'])
        && text.chars().rev().nth(1).is_some_and(char::is_alphabetic)
}

/// Appends a line to a paragraph, joining a word hyphenated at the line's end.
pub(crate) fn join_line(paragraph: &mut String, line: &str) {
    let hyphenated =
        ends_hyphenated(paragraph) && line.chars().next().is_some_and(char::is_lowercase);
    if hyphenated {
        paragraph.pop();
    } else if paragraph.ends_with('\u{00AD}') {
        paragraph.pop();
        paragraph.push(' ');
    } else {
        paragraph.push(' ');
    }
    paragraph.push_str(line);
}

#[cfg(test)]
mod tests;
