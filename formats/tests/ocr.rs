//! OCR with the real Tesseract and Poppler: scanned PDFs, mixed PDFs and images made in
//! the test from pages of known text (a fixture rendered by `pdftoppm`), and the
//! bounds that keep a hostile image or page from reaching a decoder.

#![expect(
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "support/scans.rs"]
mod scans;

use bor_formats::{
    ExtractedDocument, Limits, Ocr, OcrEngine, PageSource, ReadError, Transcriber, read_document,
};
use scans::{TestPage, pages_pdf};

fn fixture_path(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Page `page` of the fixture PDF `name` rendered by `pdftoppm` at `dpi`, greyscale, as
/// `format` (`png`, `jpeg` or `tiff`).
fn rendered(name: &str, page: u32, dpi: u32, format: &str) -> Vec<u8> {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let base = folder.path().join("page");
    let status = Command::new("pdftoppm")
        .args(["-r", &dpi.to_string(), "-gray", &format!("-{format}")])
        .args([
            "-f",
            &page.to_string(),
            "-l",
            &page.to_string(),
            "-singlefile",
        ])
        .arg(fixture_path(name))
        .arg(&base)
        .status()
        .expect("pdftoppm runs (Debian: poppler-utils)");
    assert!(status.success());
    let extension = match format {
        "jpeg" => "jpg",
        "tiff" => "tif",
        other => other,
    };
    std::fs::read(base.with_extension(extension)).expect("the rendered page")
}

/// Page `page` of the fixture `name` as a scanned page: a JPEG at `dpi`, the size of
/// the page it was.
fn scanned(name: &str, page: u32, dpi: u32) -> TestPage {
    let jpeg = rendered(name, page, dpi, "jpeg");
    let size = imagesize::blob_size(&jpeg).expect("a JPEG's size");
    let points = |pixels: usize| pixels as f64 * 72.0 / f64::from(dpi);
    TestPage::Scan {
        pixels: (size.width as u32, size.height as u32),
        points: (points(size.width), points(size.height)),
        grey: jpeg_components(&jpeg) == 1,
        jpeg,
    }
}

/// The colour components of a baseline JPEG (its start-of-frame marker says).
fn jpeg_components(jpeg: &[u8]) -> u8 {
    let frame = jpeg
        .windows(2)
        .position(|marker| marker == b"\xFF\xC0")
        .expect("a baseline JPEG");
    jpeg[frame + 9]
}

fn with_ocr() -> Limits {
    Limits {
        ocr: Ocr::tesseract(),
        ..Limits::default()
    }
}

fn confidence(source: &PageSource) -> u8 {
    match source {
        PageSource::Ocr {
            confidence: Some(confidence),
        } => *confidence,
        other => panic!("not read by OCR: {other:?}"),
    }
}

fn page_of(document: &ExtractedDocument, needle: &str) -> Option<u32> {
    let at = document
        .text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} is not in:\n{}", document.text));
    document.page_at(at)
}

#[test]
fn a_scanned_pdf_is_read_by_ocr_page_by_page_and_refused_with_ocr_off() {
    let pdf = pages_pdf(vec![
        scanned("tex-report.pdf", 1, 200),
        scanned("tex-report.pdf", 2, 200),
    ]);
    let document = read_document(pdf.clone(), "scan.pdf", &with_ocr()).expect("reads");
    assert_eq!(document.content_type, "application/pdf");
    assert_eq!(document.pages.len(), 2);
    for source in &document.pages {
        assert!(confidence(source) > 80, "{:?}", document.pages);
    }
    assert_eq!(
        page_of(&document, "the first office filed fifty affidavits"),
        Some(1)
    );
    assert_eq!(
        page_of(&document, "This sentence is on the second page."),
        Some(2)
    );

    let off = read_document(pdf, "scan.pdf", &Limits::default());
    assert_eq!(off, Err(ReadError::NoTextLayer));
    assert!(
        off.expect_err("refused")
            .to_string()
            .contains("OCR, which is off")
    );
}

#[test]
fn a_mixed_pdf_keeps_every_page_and_says_where_each_came_from() {
    let typed: Vec<String> = (1..=8)
        .map(|line| format!("Typed line {line} of the cover letter, with enough words."))
        .collect();
    let pdf = pages_pdf(vec![
        TestPage::Text(typed),
        scanned("tex-report.pdf", 2, 200),
        TestPage::Text(vec!["A closing line, typed.".to_owned()]),
    ]);
    let document = read_document(pdf.clone(), "mixed.pdf", &with_ocr()).expect("reads");
    assert_eq!(document.pages[0], PageSource::Text);
    assert!(confidence(&document.pages[1]) > 80);
    assert_eq!(
        document.pages[2],
        PageSource::Text,
        "a short typed page keeps its text layer: OCR reads no more"
    );
    assert_eq!(page_of(&document, "A closing line, typed."), Some(3));
    assert_eq!(page_of(&document, "Typed line 8 of the cover"), Some(1));
    assert_eq!(page_of(&document, "Define the flow first"), Some(2));

    let off = read_document(pdf, "mixed.pdf", &Limits::default()).expect("reads its text");
    assert_eq!(off.pages[0], PageSource::Text);
    assert_eq!(off.pages[2], PageSource::Text);
    assert_eq!(
        off.pages[1],
        PageSource::Skipped {
            reason: "it has no text layer, and OCR is off".to_owned()
        }
    );
    assert!(!off.text.contains("Define the flow"));
}

#[test]
fn png_jpeg_and_tiff_images_are_documents_read_by_ocr() {
    for (format, content_type, name) in [
        ("png", "image/png", "page.png"),
        ("jpeg", "image/jpeg", "page.jpeg"),
        ("tiff", "image/tiff", "page.tif"),
    ] {
        let image = rendered("tex-report.pdf", 1, 200, format);
        let document = read_document(image.clone(), name, &with_ocr()).expect("reads");
        assert_eq!(document.content_type, content_type);
        assert_eq!(document.title, None, "named after its file");
        assert_eq!(document.page_starts, vec![0]);
        assert!(confidence(&document.pages[0]) > 80, "{format}");
        assert!(
            document
                .text
                .contains("This report defines the scope of the workflow study."),
            "{format}: {}",
            document.text
        );
        // The content decides, whatever the name says.
        assert_eq!(
            read_document(image.clone(), "notes.txt", &with_ocr())
                .expect("reads")
                .content_type,
            content_type
        );
        assert_eq!(
            read_document(image, name, &Limits::default())
                .expect_err("refused")
                .to_string(),
            format!(
                "not read: a {} image is read by OCR, which is off",
                format.to_uppercase()
            )
        );
    }
}

#[test]
fn a_webp_photo_of_a_page_is_read() {
    let webp = std::fs::read(fixture_path("tex-report-page-2.webp")).expect("the fixture");
    let document = read_document(webp, "page.webp", &with_ocr()).expect("reads");
    assert_eq!(document.content_type, "image/webp");
    assert!(confidence(&document.pages[0]) > 80);
    assert_eq!(
        page_of(&document, "Define the flow first, then digitize."),
        Some(1)
    );
}

/// Reads a scan of three pages with `ocr` that stops OCR after the first page, and
/// checks that the two after are skipped for `reason` and that the text says `rule`
/// where OCR stopped.
fn assert_ocr_stops_after_the_first_page(ocr: Ocr, reason: &str, rule: &str) {
    let limits = Limits {
        ocr,
        ..Limits::default()
    };
    let pdf = pages_pdf(vec![
        scanned("tex-report.pdf", 1, 150),
        scanned("tex-report.pdf", 2, 150),
        scanned("tex-report.pdf", 2, 150),
    ]);
    let document = read_document(pdf, "long-scan.pdf", &limits).expect("reads");
    let past = PageSource::Skipped {
        reason: reason.to_owned(),
    };
    assert!(confidence(&document.pages[0]) > 0);
    assert_eq!(document.pages[1..], [past.clone(), past]);
    assert_eq!(
        page_of(
            &document,
            &format!("[OCR stopped here: it reads {rule}, and the pages from 2 on were not read.]")
        ),
        Some(2)
    );
    assert!(!document.text.contains("Define the flow first"));
}

#[test]
fn past_the_page_cap_the_text_says_where_ocr_stopped() {
    assert_ocr_stops_after_the_first_page(
        Ocr {
            max_pages: 1,
            ..Ocr::tesseract()
        },
        "past OCR's cap of 1 page a document",
        "at most 1 page of a document",
    );
}

#[test]
fn past_the_time_bound_of_a_document_the_text_says_where_ocr_stopped() {
    // A bound of nothing is reached once the first page is read: the pages after it
    // are skipped, as those of a long scan are once its pages took the bound.
    assert_ocr_stops_after_the_first_page(
        Ocr {
            document_timeout: Duration::ZERO,
            ..Ocr::tesseract()
        },
        "past OCR's time bound of 0 s a document",
        "a document's pages for at most 0 s",
    );
}

#[test]
fn a_page_of_100000_by_100000_points_is_skipped_before_it_is_rendered() {
    let TestPage::Scan {
        jpeg, pixels, grey, ..
    } = scanned("tex-report.pdf", 2, 150)
    else {
        unreachable!("a scan")
    };
    let pdf = pages_pdf(vec![
        scanned("tex-report.pdf", 1, 150),
        TestPage::Scan {
            jpeg,
            pixels,
            grey,
            points: (100_000.0, 100_000.0),
        },
    ]);
    let started = Instant::now();
    let document = read_document(pdf, "huge.pdf", &with_ocr()).expect("reads page 1");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(confidence(&document.pages[0]) > 80);
    assert_eq!(
        document.pages[1],
        PageSource::Skipped {
            reason: "the page is 100000 × 100000 points, at 300 DPI 416667 × 416667 pixels, more than the 50 megapixels read".to_owned()
        }
    );
}

/// A PNG whose header says 100,000 × 100,000 pixels over a few bytes of data: refused
/// from its header, never decoded.
#[test]
fn an_image_larger_than_the_pixel_bound_is_refused_from_its_header() {
    let mut png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec();
    png.extend(100_000u32.to_be_bytes());
    png.extend(100_000u32.to_be_bytes());
    png.extend([8, 0, 0, 0, 0, 0, 0, 0, 0]);
    png.extend(b"\x00\x00\x00\x00IDAT\x00\x00\x00\x00\x00\x00\x00\x00IEND\xaeB`\x82");
    assert_eq!(
        read_document(png, "bomb.png", &with_ocr()),
        Err(ReadError::TooLarge(
            "the image is 100000 × 100000 pixels, more than the 50 megapixels read".to_owned()
        ))
    );
}

#[test]
fn a_page_past_its_time_or_memory_is_named_and_the_rest_kept() {
    let pdf = pages_pdf(vec![
        TestPage::Text(
            (1..=6)
                .map(|line| format!("Line {line} of a typed page read from its text layer."))
                .collect(),
        ),
        scanned("tex-report.pdf", 2, 150),
    ]);
    let slow = Limits {
        ocr: Ocr {
            page_timeout: Duration::from_millis(1),
            ..Ocr::tesseract()
        },
        ..Limits::default()
    };
    let document = read_document(pdf.clone(), "slow.pdf", &slow).expect("reads page 1");
    assert_eq!(document.pages[0], PageSource::Text);
    assert_eq!(
        document.pages[1],
        PageSource::Skipped {
            reason: "pdftoppm took longer than 0.001 s".to_owned()
        }
    );

    let small = Limits {
        ocr: Ocr {
            max_memory_bytes: 8 << 20,
            ..Ocr::tesseract()
        },
        ..Limits::default()
    };
    let document = read_document(pdf, "small.pdf", &small).expect("reads page 1");
    let PageSource::Skipped { reason } = &document.pages[1] else {
        panic!("read within 8 MiB: {:?}", document.pages[1])
    };
    assert_eq!(reason, "pdftoppm needed more memory than the 8 MiB allowed");
}

#[test]
fn a_missing_engine_is_named_as_the_reason() {
    let limits = Limits {
        ocr: Ocr {
            languages: "xyz".to_owned(),
            ..Ocr::tesseract()
        },
        ..Limits::default()
    };
    let image = rendered("tex-report.pdf", 1, 100, "png");
    let error = read_document(image, "page.png", &limits).expect_err("refused");
    assert!(
        error
            .to_string()
            .starts_with("OCR failed: tesseract failed"),
        "{error}"
    );
    assert!(
        bor_formats::check_tesseract("eng")
            .expect("tesseract is here")
            .starts_with("tesseract 5")
    );
    assert_eq!(
        bor_formats::check_tesseract("eng+xyz"),
        Err("Tesseract has no data for xyz (Debian: apt-get install tesseract-ocr-xyz)".to_owned())
    );
}

/// A vision model that answers every image with the same transcription, and keeps the
/// media types and first bytes it was given.
#[derive(Default)]
struct FakeVisionModel {
    seen: Mutex<Vec<(String, Vec<u8>)>>,
}

impl Transcriber for FakeVisionModel {
    fn transcribe(&self, image: &[u8], media_type: &str) -> Result<String, String> {
        self.seen
            .lock()
            .expect("not poisoned")
            .push((media_type.to_owned(), image[..4.min(image.len())].to_vec()));
        if media_type == "image/webp" {
            return Err("the vision model answered 500".to_owned());
        }
        Ok("Transcribed heading\n\nThe first line\nof a para-\ngraph.\n\n".to_owned())
    }
}

#[test]
fn the_vision_engine_sends_each_scanned_page_as_jpeg_and_keeps_its_transcription() {
    let model = Arc::new(FakeVisionModel::default());
    let limits = Limits {
        ocr: Ocr {
            engine: OcrEngine::Vision(model.clone()),
            ..Ocr::tesseract()
        },
        ..Limits::default()
    };
    let pdf = pages_pdf(vec![scanned("tex-report.pdf", 1, 100)]);
    let document = read_document(pdf, "scan.pdf", &limits).expect("reads");
    assert_eq!(document.pages, [PageSource::Ocr { confidence: None }]);
    assert_eq!(
        document.text,
        "Transcribed heading\n\nThe first line of a paragraph.\n"
    );
    let png = rendered("tex-report.pdf", 1, 60, "png");
    let image = read_document(png, "page.png", &limits).expect("reads");
    assert_eq!(image.pages, [PageSource::Ocr { confidence: None }]);
    let failed = read_document(
        std::fs::read(fixture_path("tex-report-page-2.webp")).expect("the fixture"),
        "page.webp",
        &limits,
    );
    assert_eq!(
        failed,
        Err(ReadError::OcrFailed(
            "the vision model answered 500".to_owned()
        ))
    );
    let tiff = read_document(
        rendered("tex-report.pdf", 1, 60, "tiff"),
        "page.tif",
        &limits,
    );
    assert!(matches!(tiff, Err(ReadError::OcrFailed(reason)) if reason.contains("TIFF")));
    let seen = model.seen.lock().expect("not poisoned").clone();
    assert_eq!(
        seen,
        [
            ("image/jpeg".to_owned(), b"\xFF\xD8\xFF\xE0".to_vec()),
            ("image/png".to_owned(), b"\x89PNG".to_vec()),
            ("image/webp".to_owned(), b"RIFF".to_vec()),
        ]
    );
}
