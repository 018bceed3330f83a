//! Property tests of every reader on hostile input: real files with bytes flipped, cut
//! or inserted, random bytes under every name, random tag soup and random Word XML.
//! Whatever the input, a read ends with a document that keeps the interface's promises
//! or with a reason; it never panics, hangs or aborts.

#![expect(
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

use std::io::{Cursor, Write};

pub mod support;

use std::sync::OnceLock;

use bor_formats::{ExtractedDocument, Limits, Ocr, read_document};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// What every document read promises.
fn check(document: &ExtractedDocument) {
    assert!(!document.text.trim().is_empty(), "a document has text");
    assert!(!document.text.contains('\0'));
    assert!(
        document
            .page_starts
            .windows(2)
            .all(|pair| pair[0] <= pair[1])
    );
    for &start in &document.page_starts {
        assert!(start <= document.text.len() && document.text.is_char_boundary(start));
    }
    if document.content_type == "application/pdf" || document.content_type.starts_with("image/") {
        assert_eq!(document.page_starts.first(), Some(&0));
        assert_eq!(document.pages.len(), document.page_starts.len());
    } else {
        assert!(document.page_starts.is_empty());
        assert!(document.pages.is_empty());
    }
    if let Some(title) = &document.title {
        assert!(!title.trim().is_empty() && !title.contains(['\n', '\0']));
    }
}

fn read_and_check(bytes: Vec<u8>, name: &str) {
    let limits = Limits {
        max_unpacked_bytes: 16 << 20,
        ..Limits::default()
    };
    match read_document(bytes, name, &limits) {
        Ok(document) => check(&document),
        Err(error) => assert!(!error.to_string().is_empty()),
    }
}

/// Reads a PDF built to make the reader work, under bounds small enough for many cases.
fn read_hostile_and_check(bytes: Vec<u8>) {
    let limits = Limits {
        max_operators: 50_000,
        max_operators_at_once: 10_000,
        max_glyphs: 200_000,
        max_layout_bytes: 8 << 20,
        ..Limits::default()
    };
    match read_document(bytes, "hostile.pdf", &limits) {
        Ok(document) => check(&document),
        Err(error) => assert!(!error.to_string().is_empty()),
    }
}

/// Reads an image by OCR (Tesseract), pages and images bounded to a megapixel.
fn read_image_and_check(bytes: Vec<u8>, name: &str) {
    let limits = Limits {
        ocr: Ocr {
            max_pixels: 1_000_000,
            ..Ocr::tesseract()
        },
        ..Limits::default()
    };
    match read_document(bytes, name, &limits) {
        Ok(document) => check(&document),
        Err(error) => assert!(!error.to_string().is_empty()),
    }
}

/// The report's second page as a small PNG, JPEG and TIFF (rendered once by Poppler's
/// `pdftoppm`), and the WebP fixture.
fn small_images() -> &'static [(Vec<u8>, &'static str)] {
    static IMAGES: OnceLock<Vec<(Vec<u8>, &'static str)>> = OnceLock::new();
    IMAGES.get_or_init(|| {
        let folder = tempfile::tempdir().expect("a temporary folder");
        let mut images: Vec<(Vec<u8>, &'static str)> =
            [("png", "png"), ("jpeg", "jpg"), ("tiff", "tif")]
                .into_iter()
                .map(|(format, extension)| {
                    let base = folder.path().join(format);
                    let status = std::process::Command::new("pdftoppm")
                        .args([
                            "-r",
                            "40",
                            "-gray",
                            &format!("-{format}"),
                            "-f",
                            "2",
                            "-l",
                            "2",
                            "-singlefile",
                        ])
                        .arg(format!(
                            "{}/tests/fixtures/tex-report.pdf",
                            env!("CARGO_MANIFEST_DIR")
                        ))
                        .arg(&base)
                        .status()
                        .expect("pdftoppm runs (Debian: poppler-utils)");
                    assert!(status.success());
                    let bytes = std::fs::read(base.with_extension(extension)).expect("rendered");
                    (bytes, extension)
                })
                .collect();
        images.push((fixture("tex-report-page-2.webp"), "webp"));
        images
    })
}

/// A PNG of `width` × `height` pixels whose data is `data` (compressed or not).
fn png_with(width: u32, height: u32, data: &[u8]) -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8], body: &[u8]| {
        png.extend((body.len() as u32).to_be_bytes());
        png.extend(kind);
        png.extend(body);
        png.extend([0; 4]);
    };
    let mut header = width.to_be_bytes().to_vec();
    header.extend(height.to_be_bytes());
    header.extend([8, 0, 0, 0, 0]);
    chunk(b"IHDR", &header);
    chunk(b"IDAT", data);
    chunk(b"IEND", &[]);
    png
}

/// A change to a file: bytes overwritten, a cut, bytes inserted.
#[derive(Debug, Clone)]
enum Mutation {
    Overwrite(f64, Vec<u8>),
    Cut(f64),
    Insert(f64, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0.0..1.0f64, prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Mutation::Overwrite(at, bytes)),
        (0.0..1.0f64).prop_map(Mutation::Cut),
        (0.0..1.0f64, prop::collection::vec(any::<u8>(), 1..64))
            .prop_map(|(at, bytes)| Mutation::Insert(at, bytes)),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for mutation in mutations {
        let at = |fraction: f64, len: usize| ((fraction * len as f64) as usize).min(len);
        match mutation {
            Mutation::Overwrite(fraction, new) => {
                let start = at(*fraction, bytes.len());
                for (offset, byte) in new.iter().enumerate() {
                    if let Some(slot) = bytes.get_mut(start + offset) {
                        *slot = *byte;
                    }
                }
            }
            Mutation::Cut(fraction) => bytes.truncate(at(*fraction, bytes.len())),
            Mutation::Insert(fraction, new) => {
                let start = at(*fraction, bytes.len());
                bytes.splice(start..start, new.iter().copied());
            }
        }
    }
    bytes
}

/// A .docx whose document.xml is `document`.
fn docx(document: &str) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    writer
        .start_file(
            "word/document.xml",
            zip::write::SimpleFileOptions::default(),
        )
        .expect("starts");
    writer.write_all(document.as_bytes()).expect("writes");
    writer.finish().expect("finishes").into_inner()
}

fn soup(vocabulary: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vocabulary), 0..200)
        .prop_map(|tokens| tokens.concat())
}

const HTML_TOKENS: &[&str] = &[
    "<html>",
    "<body>",
    "<div>",
    "</div>",
    "<p>",
    "</p>",
    "<h1>",
    "</h1>",
    "<h3 class=x>",
    "<ul><li>",
    "<li>",
    "</ul>",
    "<table>",
    "<tr>",
    "<td>",
    "</table>",
    "<pre>",
    "</pre>",
    "<script>",
    "</script>",
    "<style>",
    "<nav>",
    "</nav>",
    "<main>",
    "</main>",
    "<header>",
    "<article>",
    "<span hidden>",
    "</span>",
    "<a class=headerlink>¶</a>",
    "<br>",
    "<!--",
    "-->",
    "&amp;",
    "&#x1F600;",
    "&#0;",
    "&",
    "<",
    ">",
    "text",
    " ",
    "\n",
    "é",
    "<title>",
    "</title>",
    "<template>",
    "<svg><p>",
    "<![CDATA[",
];

const WORD_TOKENS: &[&str] = &[
    "<w:p>",
    "</w:p>",
    "<w:r>",
    "</w:r>",
    "<w:t>",
    "</w:t>",
    "<w:tbl>",
    "</w:tbl>",
    "<w:tr>",
    "</w:tr>",
    "<w:tc>",
    "</w:tc>",
    "<w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr>",
    "<w:numPr/>",
    "<w:tab/>",
    "<w:br/>",
    "<mc:Fallback>",
    "</mc:Fallback>",
    "text",
    "&amp;",
    "&#65;",
    "&bogus;",
    "<",
    " ",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))), ..ProptestConfig::default() })]

    #[test]
    fn damaged_pdfs(which in 0..3usize, mutations in prop::collection::vec(mutation(), 1..4)) {
        let name = ["tex-two-column.pdf", "tex-report.pdf", "libreoffice.pdf"][which];
        read_and_check(mutate(fixture(name), &mutations), name);
    }
}

/// Found by `damaged_pdfs`: five bytes overwritten at 57 % of `libreoffice.pdf` made
/// the reader return text with U+0000.
#[test]
fn a_damaged_pdf_that_once_gave_text_with_nul() {
    let mutation = Mutation::Overwrite(0.57, vec![161, 0, 4, 50, 10]);
    read_and_check(
        mutate(fixture("libreoffice.pdf"), &[mutation]),
        "libreoffice.pdf",
    );
}

/// Tokens of a PDF content stream, for random ones.
const CONTENT_TOKENS: &[&str] = &[
    "BT ",
    "ET ",
    "(a) ",
    "(b\\) c) ",
    "Tj ",
    "[",
    "] ",
    "TJ ",
    "/F1 ",
    "10 ",
    "-20 ",
    "Tf ",
    "Td ",
    "T* ",
    "' ",
    "\" ",
    "/X0 ",
    "Do ",
    "q ",
    "Q ",
    "1 0 0 1 5 5 cm ",
    "BI ",
    "ID ",
    "EI ",
    "<41> ",
    "<<",
    ">> ",
    "% comment\n",
    "\n",
    "(",
    ")",
    "m ",
    "l ",
    "S ",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))), ..ProptestConfig::default() })]

    #[test]
    fn pdfs_of_many_text_operators(
        pages in 1..30usize,
        operators in 1..20_000usize,
        glyphs in 1..300usize,
        mutations in prop::collection::vec(mutation(), 0..3),
    ) {
        read_hostile_and_check(mutate(support::text_operators_pdf(pages, operators, glyphs), &mutations));
    }

    #[test]
    fn pdfs_of_nested_forms(depth in 1..12usize, fan_out in 1..6usize, looping in any::<bool>()) {
        read_hostile_and_check(support::nested_forms_pdf(depth, fan_out, looping));
    }

    #[test]
    fn pdfs_of_random_content(content in soup(CONTENT_TOKENS), pages in 1..4usize) {
        read_hostile_and_check(support::content_pdf(pages, content.as_bytes()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))), ..ProptestConfig::default() })]

    /// Damaged images go to Tesseract (when their header still reads): a read ends
    /// with a document or a reason.
    #[test]
    fn damaged_images(which in 0..4usize, mutations in prop::collection::vec(mutation(), 1..4)) {
        let (bytes, extension) = &small_images()[which];
        read_image_and_check(mutate(bytes.clone(), &mutations), &format!("image.{extension}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))), ..ProptestConfig::default() })]

    /// Any size in a PNG's header: past the bound it is refused before anything
    /// decodes it, and any data under a small one ends with a document or a reason.
    #[test]
    fn png_headers_of_any_size(width in prop_oneof![1..1500u32, any::<u32>()], height in prop_oneof![1..1500u32, any::<u32>()], data in prop::collection::vec(any::<u8>(), 0..64)) {
        let png = png_with(width, height, &data);
        if u64::from(width) * u64::from(height) > 1_000_000 {
            let started = std::time::Instant::now();
            let refused = read_document(png, "bomb.png", &Limits { ocr: Ocr { max_pixels: 1_000_000, ..Ocr::tesseract() }, ..Limits::default() });
            prop_assert!(matches!(refused, Err(bor_formats::ReadError::TooLarge(_))), "{refused:?}");
            prop_assert!(started.elapsed() < std::time::Duration::from_millis(100));
        } else {
            read_image_and_check(png, "small.png");
        }
    }

    #[test]
    fn damaged_word_documents(which in 0..2usize, mutations in prop::collection::vec(mutation(), 1..4)) {
        let name = ["libreoffice.docx", "python-docx.docx"][which];
        read_and_check(mutate(fixture(name), &mutations), name);
    }

    #[test]
    fn damaged_web_pages(which in 0..3usize, mutations in prop::collection::vec(mutation(), 1..6)) {
        let name = ["sphinx.html", "mkdocs.html", "rustdoc.html"][which];
        read_and_check(mutate(fixture(name), &mutations), name);
    }

    #[test]
    fn random_bytes_under_every_name(bytes in prop::collection::vec(any::<u8>(), 0..4096), which in 0..8usize) {
        let name = ["a.md", "a.txt", "a.pdf", "a.html", "a.docx", "a", "a.bin", "a.htm"][which];
        read_and_check(bytes, name);
    }

    #[test]
    fn random_tag_soup(page in soup(HTML_TOKENS)) {
        read_and_check(page.into_bytes(), "soup.html");
    }

    #[test]
    fn random_word_xml(body in soup(WORD_TOKENS)) {
        let document = format!("<w:document xmlns:w=\"w\" xmlns:mc=\"mc\"><w:body>{body}</w:body></w:document>");
        read_and_check(docx(&document), "random.docx");
    }

    #[test]
    fn text_with_any_characters(text in "\\PC{0,400}", markdown in any::<bool>()) {
        read_and_check(text.into_bytes(), if markdown { "a.md" } else { "a.txt" });
    }
}
