//! Malformed, truncated, encrypted, huge and hostile files: each is refused with its
//! reason, within the bounds of [`Limits`], and nothing panics.

#![expect(
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

use std::io::{Cursor, Write};

pub mod support;

use bor_formats::{Limits, ReadError, read_document};
use pdf_extract::{Dictionary, Document, Object, Stream};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn refused(bytes: Vec<u8>, name: &str, limits: &Limits) -> ReadError {
    match read_document(bytes, name, limits) {
        Ok(document) => panic!("{name} was read: {document:?}"),
        Err(error) => error,
    }
}

fn docx(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, content) in entries {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        writer.start_file(*name, options).expect("starts");
        writer.write_all(content).expect("writes");
    }
    writer.finish().expect("finishes").into_inner()
}

/// A PDF with one page (its content stream given) and the page tree built by `tree`.
fn pdf(content: &[u8], tree: impl FnOnce(&mut Document, (u32, u16), (u32, u16))) -> Vec<u8> {
    let mut document = Document::with_version("1.5");
    let pages = document.new_object_id();
    let contents = document.add_object(Stream::new(Dictionary::new(), content.to_vec()));
    let mut page = Dictionary::new();
    page.set("Type", Object::Name(b"Page".to_vec()));
    page.set("Parent", Object::Reference(pages));
    page.set("Contents", Object::Reference(contents));
    page.set(
        "MediaBox",
        Object::Array(vec![0.into(), 0.into(), 300.into(), 400.into()]),
    );
    let page = document.add_object(page);
    tree(&mut document, pages, page);
    support::saved(document, pages)
}

fn pages_node(kids: Vec<Object>, count: i64) -> Dictionary {
    let mut pages = Dictionary::new();
    pages.set("Type", Object::Name(b"Pages".to_vec()));
    pages.set("Kids", Object::Array(kids));
    pages.set("Count", Object::Integer(count));
    pages
}

#[test]
fn a_file_over_the_input_bound_is_refused_before_it_is_read() {
    let limits = Limits::with_max_input_bytes(1024);
    let error = refused(vec![b'a'; 2048], "big.txt", &limits);
    assert_eq!(
        error.to_string(),
        "too large: the file has 2 KiB, more than the 1 KiB allowed"
    );
}

#[test]
fn a_zip_bomb_in_a_word_document_stops_at_the_unpacked_bound() {
    let mut document = b"<w:document><w:body><w:p><w:r><w:t>".to_vec();
    document.extend(std::iter::repeat_n(b' ', 16 << 20));
    document.extend(b"</w:t></w:r></w:p></w:body></w:document>");
    let bomb = docx(&[("word/document.xml", &document)]);
    assert!(
        bomb.len() < 100_000,
        "16 MiB of XML packs small: {} bytes",
        bomb.len()
    );
    let limits = Limits {
        max_unpacked_bytes: 4 << 20,
        ..Limits::default()
    };
    let error = refused(bomb, "bomb.docx", &limits);
    assert_eq!(
        error.to_string(),
        "too large: it unpacks to more than 4 MiB"
    );
}

#[test]
fn an_archive_of_very_many_entries_is_refused() {
    let names: Vec<String> = (0..10_001).map(|n| format!("media/{n}")).collect();
    let mut entries: Vec<(&str, &[u8])> =
        names.iter().map(|name| (name.as_str(), &b""[..])).collect();
    entries.push(("word/document.xml", b"<w:document/>"));
    let error = refused(docx(&entries), "many.docx", &Limits::default());
    assert!(error.to_string().contains("more than 10000"), "{error}");
}

#[test]
fn deeply_nested_xml_and_html_are_refused_as_too_deep() {
    let deep_xml = format!(
        "<w:document>{}{}</w:document>",
        "<w:x>".repeat(100_000),
        "</w:x>".repeat(100_000)
    );
    let error = refused(
        docx(&[("word/document.xml", deep_xml.as_bytes())]),
        "deep.docx",
        &Limits::default(),
    );
    assert_eq!(error, ReadError::TooDeep(256));

    let deep_html = format!("<html><body>{}text", "<div>".repeat(100_000));
    let error = refused(deep_html.into_bytes(), "deep.html", &Limits::default());
    assert_eq!(
        error.to_string(),
        "nested too deeply: more than 256 levels of elements"
    );

    // Elements the parser closes by itself are not nesting.
    let paragraphs = format!("<html><body>{}", "<p>a paragraph".repeat(20_000));
    let document =
        read_document(paragraphs.into_bytes(), "long.html", &Limits::default()).expect("reads");
    assert_eq!(document.text.matches("a paragraph").count(), 20_000);
}

#[test]
fn damaged_and_truncated_word_documents_are_named_as_such() {
    let whole = fixture("libreoffice.docx");
    for cut in [4, 30, whole.len() / 2, whole.len() - 10] {
        let error = refused(whole[..cut].to_vec(), "cut.docx", &Limits::default());
        assert!(
            matches!(
                error,
                ReadError::Malformed {
                    kind: "Word document",
                    ..
                }
            ),
            "cut at {cut}: {error}"
        );
    }
    let error = refused(
        docx(&[("word/document.xml", b"<w:document><w:p>")]),
        "open.docx",
        &Limits::default(),
    );
    assert!(
        error
            .to_string()
            .starts_with("not a readable Word document: broken XML"),
        "{error}"
    );
}

#[test]
fn truncated_and_garbage_pdfs_are_refused_or_read_as_far_as_they_go() {
    let whole = fixture("tex-two-column.pdf");
    for cut in [6, 100, whole.len() / 3, whole.len() / 2, whole.len() - 200] {
        match read_document(whole[..cut].to_vec(), "cut.pdf", &Limits::default()) {
            Ok(document) => assert!(!document.text.is_empty()),
            Err(error) => assert!(
                matches!(error, ReadError::Malformed { .. } | ReadError::NoTextLayer),
                "cut at {cut}: {error}"
            ),
        }
    }
    let mut garbage = b"%PDF-1.7\n".to_vec();
    garbage.extend((0..200_000u32).map(|n| (n.wrapping_mul(2_654_435_761) >> 24) as u8));
    let error = refused(garbage, "garbage.pdf", &Limits::default());
    assert!(
        matches!(error, ReadError::Malformed { kind: "PDF", .. }),
        "{error}"
    );
}

#[test]
fn a_pdf_whose_page_tree_loops_is_refused() {
    let looping = pdf(
        b"BT /F1 12 Tf 10 10 Td (x) Tj ET",
        |document, pages, page| {
            let kids = vec![
                Object::Reference(page),
                Object::Reference(pages),
                Object::Reference(pages),
            ];
            document.set_object(pages, pages_node(kids, 3));
        },
    );
    let error = refused(looping, "loop.pdf", &Limits::default());
    assert_eq!(
        error.to_string(),
        "not a readable PDF: its page tree loops back on itself (or lists a page twice)"
    );
}

#[test]
fn a_pdf_with_more_pages_than_the_bound_is_refused() {
    let many = pdf(b"", |document, pages, page| {
        let kids = (0..20).map(|_| {
            let mut copy = document.get_dictionary(page).expect("page").clone();
            copy.set("Parent", Object::Reference(pages));
            Object::Reference(document.add_object(copy))
        });
        let kids = kids.collect();
        document.set_object(pages, pages_node(kids, 20));
    });
    let limits = Limits {
        max_pages: 10,
        ..Limits::default()
    };
    assert!(matches!(
        refused(many, "many.pdf", &limits),
        ReadError::TooLarge(_)
    ));
}

#[test]
fn a_compressed_pdf_stream_that_unpacks_past_the_bound_is_refused() {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    encoder
        .write_all(&vec![b' '; 32 << 20])
        .expect("compresses");
    let packed = encoder.finish().expect("compresses");
    let bomb = pdf(b"", |document, pages, page| {
        let mut dictionary = Dictionary::new();
        dictionary.set("Filter", Object::Name(b"FlateDecode".to_vec()));
        let stream = document.add_object(Stream::new(dictionary, packed).with_compression(false));
        let mut page_dictionary = document.get_dictionary(page).expect("page").clone();
        page_dictionary.set("Contents", Object::Reference(stream));
        document.set_object(page, page_dictionary);
        document.set_object(pages, pages_node(vec![Object::Reference(page)], 1));
    });
    let limits = Limits {
        max_unpacked_bytes: 8 << 20,
        ..Limits::default()
    };
    assert_eq!(
        refused(bomb, "bomb.pdf", &limits).to_string(),
        "too large: it unpacks to more than 8 MiB"
    );
}

#[test]
fn deeply_nested_pdf_objects_are_refused_without_overflowing_the_stack() {
    let mut deep = b"%PDF-1.7\n1 0 obj\n".to_vec();
    deep.extend(std::iter::repeat_n(b'[', 1_000_000));
    deep.extend(b"\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n");
    let error = refused(deep, "deep.pdf", &Limits::default());
    assert!(
        matches!(error, ReadError::Malformed { kind: "PDF", .. }),
        "{error}"
    );
}

#[test]
fn a_pdf_form_that_draws_itself_is_refused_without_overflowing_the_stack() {
    let error = refused(
        support::nested_forms_pdf(1, 1, true),
        "loop.pdf",
        &Limits::default(),
    );
    assert_eq!(
        error.to_string(),
        "not a readable PDF: a form on its pages draws itself, so the page would be drawn without end"
    );
}

#[test]
fn pdf_forms_nested_past_the_depth_bound_are_refused() {
    let error = refused(
        support::nested_forms_pdf(300, 1, false),
        "deep-forms.pdf",
        &Limits::default(),
    );
    assert_eq!(error, ReadError::TooDeep(256));
    let nested = read_document(
        support::nested_forms_pdf(20, 1, false),
        "forms.pdf",
        &Limits::default(),
    )
    .expect("forms nested 20 deep are read");
    assert!(nested.text.contains("word"), "{}", nested.text);
}

#[test]
fn text_that_is_not_text_says_why() {
    let error = refused(b"abc\xff\xfedef".to_vec(), "notes.md", &Limits::default());
    assert_eq!(error.to_string(), "not UTF-8 (invalid byte at offset 3)");
    let error = refused(b"abc\0def".to_vec(), "notes.txt", &Limits::default());
    assert_eq!(error.to_string(), "binary (it contains NUL bytes)");
    let error = refused(b"  \n\t ".to_vec(), "blank.md", &Limits::default());
    assert_eq!(error, ReadError::Empty);
}
