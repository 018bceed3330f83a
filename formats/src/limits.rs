//! The bounds every reader keeps, whatever the file does.

use std::time::Duration;

use crate::{Ocr, ReadError};

/// Bounds on one read. [`Limits::default`] suits files from people; every field can be
/// set on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest file accepted, in bytes (64 MiB).
    pub max_input_bytes: usize,
    /// Most bytes a file may unpack to: the XML parts of a .docx, the compressed streams
    /// of a PDF (256 MiB). A zip bomb stops here.
    pub max_unpacked_bytes: u64,
    /// Most bytes of extracted text (32 MiB).
    pub max_text_bytes: usize,
    /// Deepest nesting of elements (HTML, XML) or objects (PDF) (256).
    pub max_depth: usize,
    /// Most pages of a PDF (5,000).
    pub max_pages: usize,
    /// Most text operators (`Tj`, `Tf`, `Td`, `cm`, `Do`…) and operands a PDF read
    /// interprets, a form counted each time it is drawn (10,000,000): an operator counts
    /// once, and once more for each object among its operands (a number, a string, an
    /// array…). Drawing and colour operators are dropped before and cost nothing.
    pub max_operators: usize,
    /// Most text operators and operands, counted so, decoded at one time: a page's,
    /// with those of the forms it is drawing (100,000). The PDF parser holds up to
    /// some 550 bytes for each.
    pub max_operators_at_once: usize,
    /// Most characters the pages of a PDF draw (4,000,000).
    pub max_glyphs: usize,
    /// Most memory the layout of a PDF holds: the positioned characters of the page
    /// being read and the runs of text of every page (64 MiB).
    pub max_layout_bytes: usize,
    /// Longest time a read may take (20 s); then it is given up. For a PDF, the text
    /// layer and the writing of the text have it each; OCR between them is bounded
    /// page by page instead ([`Ocr::page_timeout`]).
    pub deadline: Duration,
    /// How scanned pages and images are read (off by default).
    pub ocr: Ocr,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_input_bytes: 64 << 20,
            max_unpacked_bytes: 256 << 20,
            max_text_bytes: 32 << 20,
            max_depth: 256,
            max_pages: 5_000,
            max_operators: 10_000_000,
            max_operators_at_once: 100_000,
            max_glyphs: 4_000_000,
            max_layout_bytes: 64 << 20,
            deadline: Duration::from_secs(20),
            ocr: Ocr::default(),
        }
    }
}

impl Limits {
    /// The defaults with another input bound (e.g. `BOR_MAX_UPLOAD_BYTES`).
    pub fn with_max_input_bytes(max_input_bytes: usize) -> Limits {
        Limits {
            max_input_bytes,
            ..Limits::default()
        }
    }

    pub(crate) fn check_input(&self, len: usize) -> Result<(), ReadError> {
        if len > self.max_input_bytes {
            return Err(ReadError::TooLarge(format!(
                "the file has {}, more than the {} allowed",
                human_bytes(len as u64),
                human_bytes(self.max_input_bytes as u64)
            )));
        }
        Ok(())
    }

    pub(crate) fn layout_too_large(&self) -> ReadError {
        ReadError::LayoutTooLarge(human_bytes(self.max_layout_bytes as u64))
    }

    pub(crate) fn unpacked_too_large(&self) -> ReadError {
        ReadError::TooLarge(format!(
            "it unpacks to more than {}",
            human_bytes(self.max_unpacked_bytes)
        ))
    }
}

/// The refusal of text longer than `max_text_bytes`.
pub(crate) fn text_too_large(max_text_bytes: usize) -> ReadError {
    ReadError::TooLarge(format!(
        "its text is longer than {}",
        human_bytes(max_text_bytes as u64)
    ))
}

/// `1536` → "1.5 KiB".
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else if value.fract() < 0.05 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn sizes_read_as_a_person_writes_them() {
        assert_eq!(human_bytes(900), "900 bytes");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(64 << 20), "64 MiB");
    }
}
