//! Why a file could not be read, in words a person understands.

/// Why a file was not read. `Display` is the reason shown to the person who gave the
/// file ("encrypted PDF: …", "no text layer: …", "too large: …").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The file, or what it unpacks to, is over a [`Limits`](crate::Limits) bound.
    #[error("too large: {0}")]
    TooLarge(String),
    /// A PDF with more text operators to interpret than
    /// [`Limits::max_operators`](crate::Limits::max_operators), forms counted each time
    /// they are drawn.
    #[error("too large: its pages hold more than {0} text operators and operands to interpret")]
    TooManyOperators(usize),
    /// A PDF page whose text operators, with those of the forms it draws, are more than
    /// [`Limits::max_operators_at_once`](crate::Limits::max_operators_at_once).
    #[error(
        "too large: one of its pages holds more than {0} text operators and operands (with the forms it draws)"
    )]
    PageTooBusy(usize),
    /// A PDF that draws more characters than
    /// [`Limits::max_glyphs`](crate::Limits::max_glyphs).
    #[error("too large: its pages draw more than {0} characters")]
    TooManyGlyphs(usize),
    /// A PDF whose characters, laid out, would take more memory than
    /// [`Limits::max_layout_bytes`](crate::Limits::max_layout_bytes).
    #[error("too large: laying out its text would take more than {0}")]
    LayoutTooLarge(String),
    /// Nesting deeper than [`Limits::max_depth`](crate::Limits::max_depth).
    #[error("nested too deeply: more than {0} levels of elements")]
    TooDeep(usize),
    /// A password-protected file.
    #[error("encrypted {kind}: it cannot be read without its password")]
    Encrypted { kind: &'static str },
    /// A PDF whose pages hold no text (scanned pages), and OCR is off.
    #[error("no text layer: the PDF's pages hold no text (scanned images need OCR, which is off)")]
    NoTextLayer,
    /// An image, and OCR is off.
    #[error("not read: a {kind} is read by OCR, which is off")]
    OcrOff { kind: &'static str },
    /// A PDF without a text layer of which OCR read no page, with the first page's
    /// reason.
    #[error("no text layer, and OCR read none of its pages: {0}")]
    NothingRead(String),
    /// OCR read the pages of a PDF without a text layer and found no words.
    #[error("no text layer, and OCR found no words on its pages")]
    NoWords,
    /// OCR read an image and found no words.
    #[error("no text: OCR found no words in the image")]
    NoWordsInImage,
    /// OCR could not read an image.
    #[error("OCR failed: {0}")]
    OcrFailed(String),
    /// The content is not the kind its name says, nor any kind that is read.
    #[error("not {expected}: {found}")]
    WrongKind {
        /// With its article: "a PDF", "a Word document".
        expected: &'static str,
        found: String,
    },
    /// Neither the name nor the content is a kind that is read.
    #[error(
        "not a supported kind ({0}); supported are Markdown, plain text, PDF, HTML, Word .docx and images (PNG, JPEG, TIFF, WebP)"
    )]
    Unsupported(String),
    /// Text that is not text: NUL bytes, or bytes that are not UTF-8.
    #[error("{0}")]
    NotText(String),
    /// The kind is right but the file is damaged or truncated.
    #[error("not a readable {kind}: {reason}")]
    Malformed { kind: &'static str, reason: String },
    /// Nothing but whitespace.
    #[error("empty: the document holds no text")]
    Empty,
    /// Reading ran past [`Limits::deadline`](crate::Limits::deadline).
    #[error("took too long: reading stopped after {0} s")]
    TimedOut(u64),
    /// Earlier files that took too long are still being read; nothing new is started.
    #[error("busy: earlier files that took too long are still being read; try again later")]
    Busy,
}

impl ReadError {
    pub(crate) fn malformed(kind: &'static str, reason: impl std::fmt::Display) -> ReadError {
        ReadError::Malformed {
            kind,
            reason: reason.to_string(),
        }
    }
}
