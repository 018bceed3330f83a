//! OCR: the words of scanned pages and images, read by Tesseract or transcribed by a
//! vision model.
//!
//! Each step is one run of an outside program, bounded: Poppler's `pdftoppm` renders a
//! PDF page to a greyscale image at [`Ocr::dpi`], Tesseract reads an image into words
//! with their confidence (its TSV output). Every run has a time bound (it is killed
//! past [`Ocr::page_timeout`]), an address-space bound ([`Ocr::max_memory_bytes`],
//! through util-linux's `prlimit`) and one thread; at most as many run at once as the
//! machine has cores, so a scan being imported never takes more. A page is measured
//! before it is rendered and an image before it is read: one of more than
//! [`Ocr::max_pixels`] is skipped with the reason, so a decompression bomb never
//! reaches a decoder. With [`OcrEngine::Vision`] a page is rendered as JPEG and handed,
//! with an image file's bytes, to the service's [`Transcriber`].

mod process;
mod tesseract;

use std::sync::Arc;
use std::time::Duration;

pub(crate) use process::Scratch;
pub(crate) use tesseract::{OcrPage, read_image};

/// How scanned pages and images are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ocr {
    pub engine: OcrEngine,
    /// Tesseract's language codes joined by `+` (`eng`, `eng+deu`).
    pub languages: String,
    /// A PDF page whose text layer holds fewer non-blank characters than this is read
    /// by OCR (200).
    pub min_chars: usize,
    /// Most pages of one document read by OCR (200); the pages after are skipped, and
    /// the text says where OCR stopped.
    pub max_pages: usize,
    /// Resolution PDF pages are rendered at (300).
    pub dpi: u32,
    /// Largest image or rendered page, in pixels (50,000,000).
    pub max_pixels: u64,
    /// Longest time one page may take to render, or to read (60 s).
    pub page_timeout: Duration,
    /// Longest time OCR may spend on one document's pages (30 min): once the pages
    /// read so far took it, the pages after are skipped, and the text says where OCR
    /// stopped. Checked between pages: the page under way ends within its own bound.
    pub document_timeout: Duration,
    /// Most address space one run of `pdftoppm` or `tesseract` may take (1 GiB).
    pub max_memory_bytes: u64,
}

/// The program that reads scanned pages and images.
#[derive(Clone)]
pub enum OcrEngine {
    /// Nothing is read by OCR: a PDF without a text layer is refused, an image too.
    Off,
    /// Tesseract (Debian's `tesseract-ocr`), with Poppler's `pdftoppm` for PDF pages.
    Tesseract,
    /// A vision model asked to transcribe each page verbatim (PDF pages rendered by
    /// `pdftoppm` as JPEG).
    Vision(Arc<dyn Transcriber>),
}

/// Transcribes an image for [`OcrEngine::Vision`]: the service's client of an
/// OpenAI-compatible vision model. Blocking; bounded in time by the caller's client.
pub trait Transcriber: Send + Sync {
    /// The text of `image` (of the media type `image/jpeg`, `image/png` or
    /// `image/webp`), or why it could not be had.
    fn transcribe(&self, image: &[u8], media_type: &str) -> Result<String, String>;
}

impl std::fmt::Debug for OcrEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OcrEngine::Off => "Off",
            OcrEngine::Tesseract => "Tesseract",
            OcrEngine::Vision(_) => "Vision",
        })
    }
}

/// Engines are equal when they are the same kind (and, for vision, the same client).
impl PartialEq for OcrEngine {
    fn eq(&self, other: &OcrEngine) -> bool {
        match (self, other) {
            (OcrEngine::Vision(one), OcrEngine::Vision(other)) => Arc::ptr_eq(one, other),
            (OcrEngine::Off, OcrEngine::Off) | (OcrEngine::Tesseract, OcrEngine::Tesseract) => true,
            _ => false,
        }
    }
}

impl Eq for OcrEngine {}

impl Default for Ocr {
    /// Off, with the bounds that apply once an engine is chosen.
    fn default() -> Ocr {
        Ocr {
            engine: OcrEngine::Off,
            languages: "eng".to_owned(),
            min_chars: 200,
            max_pages: 200,
            dpi: 300,
            max_pixels: 50_000_000,
            page_timeout: Duration::from_secs(60),
            document_timeout: Duration::from_secs(30 * 60),
            max_memory_bytes: 1 << 30,
        }
    }
}

impl Ocr {
    /// Tesseract with the default bounds.
    pub fn tesseract() -> Ocr {
        Ocr {
            engine: OcrEngine::Tesseract,
            ..Ocr::default()
        }
    }

    pub(crate) fn is_on(&self) -> bool {
        !matches!(self.engine, OcrEngine::Off)
    }

    /// Why an image of `width` × `height` pixels is not read, if it is too large.
    pub(crate) fn refuse_pixels(&self, width: u64, height: u64) -> Option<String> {
        let pixels = width.saturating_mul(height);
        (pixels > self.max_pixels).then(|| {
            format!(
                "{width} × {height} pixels, more than the {} megapixels read",
                self.max_pixels / 1_000_000
            )
        })
    }

    /// The size in pixels of a page of `width` × `height` points rendered at
    /// [`Ocr::dpi`].
    pub(crate) fn page_pixels(&self, width: f64, height: f64) -> (u64, u64) {
        let scale = f64::from(self.dpi) / 72.0;
        // Float to integer casts saturate: a huge or odd page stays a huge number.
        let pixels = |points: f64| (points.abs() * scale).ceil() as u64;
        (pixels(width), pixels(height))
    }
}

/// Where the text of one page came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageSource {
    /// The PDF's text layer.
    Text,
    /// OCR, with the mean confidence of its words (0 to 100); `None` when none is
    /// known (a vision model's transcription, a page without words).
    Ocr { confidence: Option<u8> },
    /// Not read, with the reason ("OCR is off", "more than 50 megapixels", …).
    Skipped { reason: String },
}

/// Whether `pdftoppm` and `tesseract` (with `languages`) can be run here; the reason
/// when not. For `bor check`.
pub fn check_tesseract(languages: &str) -> Result<String, String> {
    let version = process::program_version("tesseract", "--version")?;
    check_renderer()?;
    let installed = process::tesseract_languages()?;
    let missing: Vec<&str> = languages
        .split('+')
        .filter(|language| !installed.iter().any(|known| known == language))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "Tesseract has no data for {} (Debian: apt-get install {})",
            missing.join(", "),
            missing
                .iter()
                .map(|language| format!("tesseract-ocr-{language}"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    Ok(version)
}

/// How a page is rendered: greyscale PGM for Tesseract, JPEG for a vision model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rendering {
    Pgm,
    Jpeg,
}

/// Whether Poppler's `pdftoppm`, which renders PDF pages for either engine, can be run
/// here: its version, or the reason. For `bor check`.
pub fn check_renderer() -> Result<String, String> {
    process::program_version("pdftoppm", "-v")
}

/// Renders page `number` (from 1) of the PDF at `pdf` to a greyscale image of at most
/// `width` × `height` pixels in `scratch`; its path.
pub(crate) fn render_pdf_page(
    scratch: &Scratch,
    pdf: &std::path::Path,
    number: usize,
    (width, height): (u64, u64),
    rendering: Rendering,
    ocr: &Ocr,
) -> Result<std::path::PathBuf, String> {
    let base = scratch.path().join(format!("page-{number}"));
    let number = number.to_string();
    let dpi = ocr.dpi.to_string();
    let (width, height) = (width.to_string(), height.to_string());
    let (format, extension) = match rendering {
        Rendering::Pgm => ("-gray", "pgm"),
        Rendering::Jpeg => ("-jpeg", "jpg"),
    };
    let args: [&std::ffi::OsStr; 15] = [
        "-r".as_ref(),
        dpi.as_ref(),
        format.as_ref(),
        "-f".as_ref(),
        number.as_ref(),
        "-l".as_ref(),
        number.as_ref(),
        "-singlefile".as_ref(),
        // The rendered area, so that no crop box makes a larger image than measured.
        "-W".as_ref(),
        width.as_ref(),
        "-H".as_ref(),
        height.as_ref(),
        "-q".as_ref(),
        pdf.as_os_str(),
        base.as_os_str(),
    ];
    process::run("pdftoppm", &args, ocr, None)?;
    let image = base.with_extension(extension);
    if image.is_file() {
        Ok(image)
    } else {
        Err("the page could not be rendered".to_owned())
    }
}
