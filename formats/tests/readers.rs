//! The readers on files made by real tools (scripts/format-fixtures.sh makes them):
//! pdfTeX, LibreOffice, groff, qpdf, python-docx, Sphinx, MkDocs and rustdoc.

use bor_formats::{ExtractedDocument, Limits, ReadError, read_document};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn read(name: &str) -> ExtractedDocument {
    read_document(fixture(name), name, &Limits::default())
        .unwrap_or_else(|error| panic!("{name}: {error}"))
}

/// Where `needle` is in the text, failing the test when it is not there.
fn position(document: &ExtractedDocument, needle: &str) -> usize {
    document
        .text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} is missing from:\n{}", document.text))
}

#[test]
fn a_two_column_pdftex_paper_reads_in_order_with_ligatures_hyphens_and_furniture_resolved() {
    let paper = read("tex-two-column.pdf");
    assert_eq!(paper.content_type, "application/pdf");
    assert_eq!(
        paper.title.as_deref(),
        Some("Efficient Flow Control in Offline Archives")
    );
    // Ligatures (no ToUnicode map in this file) as letters.
    position(
        &paper,
        "The first finding of this study is that efficient archives flourish",
    );
    assert!(
        !paper
            .text
            .contains(['\u{FB00}', '\u{FB01}', '\u{FB02}', '\u{FB03}', '\u{FB04}'])
    );
    // Words hyphenated at a line end, and across the columns and pages, are whole.
    position(
        &paper,
        "Internationalization of the catalogue, characterization",
    );
    position(&paper, "the standardization of procedures");
    position(&paper, "workflow were classified");
    // Column by column: the left column's text before the right column's.
    let alpha = position(&paper, "Marker sentence alpha");
    let beta = position(&paper, "Marker sentence beta");
    let gamma = position(&paper, "Marker sentence gamma");
    let omega = position(&paper, "marker sentence omega");
    assert!(alpha < beta && beta < gamma && gamma < omega);
    // The running header and footer of every page are gone.
    assert!(
        !paper.text.contains("Proceedings of the Workshop"),
        "{}",
        paper.text
    );
    assert!(!paper.text.contains("Page 1") && !paper.text.contains("Page 2"));
    // Headings, and pages where the text of each begins.
    position(&paper, "# Efficient Flow Control in Offline Archives\n");
    position(&paper, "\n## 1 Introduction\n");
    position(&paper, "\n## 6 Appendix: the offices\n");
    assert_eq!(paper.page_starts.len(), 3);
    assert_eq!(paper.page_starts[0], 0);
    assert!(paper.page_starts.windows(2).all(|pair| pair[0] < pair[1]));
    assert_eq!(paper.page_at(alpha), Some(1));
    assert_eq!(paper.page_at(gamma), Some(2));
    assert_eq!(paper.page_at(omega), Some(3));
}

#[test]
fn a_pdftex_report_with_tounicode_maps_keeps_sections_and_pages() {
    let report = read("tex-report.pdf");
    assert_eq!(
        report.title.as_deref(),
        Some("A Short Report on Office Workflows")
    );
    position(&report, "# 1 Scope\n");
    position(&report, "## 2.1 Offline work\n");
    position(
        &report,
        "filed fifty affidavits; the fourth office flagged five",
    );
    let second = position(&report, "This sentence is on the second page.");
    assert_eq!(report.page_at(second), Some(2));
}

#[test]
fn a_libreoffice_pdf_keeps_headings_lists_table_rows_and_drops_its_header_and_footer() {
    let guide = read("libreoffice.pdf");
    assert_eq!(
        guide.title.as_deref(),
        Some("Field Guide to the Reading Room")
    );
    position(&guide, "# Opening hours\n");
    position(&guide, "within fifteen minutes.");
    position(
        &guide,
        "- Write the shelf mark of each file.\n- Sign the form.\n",
    );
    position(
        &guide,
        "Service | Unit | Fee\nPhotocopy | page | 0.20\nScan | image | 1.50\n",
    );
    assert!(!guide.text.contains("Reading Room Guide — internal"));
    let second = position(&guide, "This paragraph starts the second page.");
    assert_eq!(guide.page_at(second), Some(2));
}

/// The fixture `name` without the Title of its document information.
fn without_title(name: &str) -> Vec<u8> {
    let mut document = pdf_extract::Document::load_mem(&fixture(name))
        .unwrap_or_else(|error| panic!("{name}: {error}"));
    document.trailer.remove(b"Info");
    let mut bytes = Vec::new();
    document
        .save_to(&mut bytes)
        .unwrap_or_else(|error| panic!("{name}: {error}"));
    bytes
}

#[test]
fn a_pdf_without_a_title_is_titled_by_the_largest_text_of_its_first_page() {
    let spec = read("groff-spec.pdf");
    assert_eq!(spec.title.as_deref(), Some("Shared MIME-info Database"));
    assert!(
        spec.text.starts_with(
            "# Shared MIME-info Database\n\n## X Desktop Group (http://www.freedesktop.org) Thomas Leonard\n"
        ),
        "{}",
        spec.text
    );
    assert_eq!(
        spec.text.matches("Shared MIME-info Database").count(),
        1,
        "the running header of the later pages is dropped"
    );
    for (name, title) in [
        (
            "tex-two-column.pdf",
            "Efficient Flow Control in Offline Archives",
        ),
        // These two name their title in the metadata only: their pages start with a section.
        ("tex-report.pdf", "1 Scope"),
        ("libreoffice.pdf", "Opening hours"),
    ] {
        let document = read_document(without_title(name), name, &Limits::default())
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        assert_eq!(document.title.as_deref(), Some(title), "{name}");
    }
}

#[test]
fn a_pdf_locked_by_a_password_is_refused_and_one_with_restrictions_only_is_read() {
    let locked = read_document(
        fixture("encrypted.pdf"),
        "encrypted.pdf",
        &Limits::default(),
    );
    assert_eq!(locked, Err(ReadError::Encrypted { kind: "PDF" }));
    assert_eq!(
        ReadError::Encrypted { kind: "PDF" }.to_string(),
        "encrypted PDF: it cannot be read without its password"
    );
    let restricted = read("restricted.pdf");
    position(
        &restricted,
        "Photographs without flash are allowed for study.",
    );
}

#[test]
fn a_pdf_without_text_says_it_has_no_text_layer() {
    let scan = read_document(fixture("tex-no-text.pdf"), "scan.pdf", &Limits::default());
    assert_eq!(scan, Err(ReadError::NoTextLayer));
    assert!(
        ReadError::NoTextLayer
            .to_string()
            .starts_with("no text layer")
    );
}

#[test]
fn a_pdf_named_as_text_is_read_as_a_pdf() {
    let document =
        read_document(fixture("libreoffice.pdf"), "guide.txt", &Limits::default()).expect("reads");
    assert_eq!(document.content_type, "application/pdf");
}

#[test]
fn word_documents_from_libreoffice_and_python_docx_keep_structure_and_order() {
    let guide = read("libreoffice.docx");
    assert_eq!(
        guide.content_type,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    );
    assert_eq!(
        guide.title.as_deref(),
        Some("Field Guide to the Reading Room")
    );
    let fees = position(
        &guide,
        "## Fees\n\nService | Unit | Fee\nPhotocopy | page | 0.20\nScan | image | 1.50\n",
    );
    assert!(position(&guide, "# Opening hours\n") < fees);
    assert!(fees < position(&guide, "# Rules for photographs\n"));
    position(&guide, "### Publication\n");
    position(
        &guide,
        "- Write the shelf mark of each file.\n- Sign the form.\n",
    );
    assert!(guide.page_starts.is_empty());

    for name in ["python-docx.docx", "python-docx-localised.docx"] {
        let procedures = read(name);
        assert_eq!(
            procedures.title.as_deref(),
            Some("Procedures of the Records Office"),
            "{name}"
        );
        let heading = position(&procedures, "\n# Receiving records\n");
        let list = position(
            &procedures,
            "- A missing file is reported within five days.\n- A damaged file",
        );
        let table = position(
            &procedures,
            "## Retention\n\nKind | Years\nInvoices | 10\nMinutes | permanent\n",
        );
        let after = position(&procedures, "Records past their retention period");
        assert!(heading < list && list < table && table < after, "{name}");
        position(&procedures, "### Access\n");
    }
}

#[test]
fn documentation_pages_keep_their_content_without_navigation() {
    let sphinx = read("sphinx.html");
    assert_eq!(sphinx.content_type, "text/html");
    assert_eq!(
        sphinx.title.as_deref(),
        Some("Lending files — Archive Handbook documentation")
    );
    position(
        &sphinx,
        "# Lending files\n\nFiles leave the building only for exhibitions. The registrar signs every loan agreement & keeps a copy.\n",
    );
    position(&sphinx, "## Conditions\n\n- The borrower insures the file");
    position(&sphinx, "Kind | Longest loan\nManuscript | 3 months\n");
    position(&sphinx, "```\n$ archive check --loan 42\n```");
    for furniture in [
        "Quick search",
        "Navigation",
        "Powered by",
        "¶",
        "Related Topics",
    ] {
        assert!(
            !sphinx.text.contains(furniture),
            "{furniture:?} in:\n{}",
            sphinx.text
        );
    }

    let mkdocs = read("mkdocs.html");
    assert_eq!(
        mkdocs.title.as_deref(),
        Some("Cleaning - Conservation Notes")
    );
    position(&mkdocs, "# Cleaning paper\n");
    position(
        &mkdocs,
        "Tool | Use\nBrush | loose dust\nSponge | surface dirt\n",
    );
    for furniture in [
        "Search",
        "Previous",
        "Next",
        "Built with MkDocs",
        "Conservation Notes\n",
    ] {
        assert!(
            !mkdocs.text.contains(furniture),
            "{furniture:?} in:\n{}",
            mkdocs.text
        );
    }

    let rustdoc = read("rustdoc.html");
    position(&rustdoc, "# Struct ShelfMark\n");
    position(&rustdoc, "A parsed shelf mark, such as R2-S14-B7.");
    position(
        &rustdoc,
        "#### pub fn parse(text: &str) -> Option<ShelfMark>\n\nReads a shelf mark; None when it is malformed.",
    );
    assert!(
        !rustdoc.text.contains("Settings") && !rustdoc.text.contains("Help"),
        "{}",
        rustdoc.text
    );
}

#[test]
fn markdown_and_text_are_kept_as_they_are() {
    let markdown = "\u{feff}Intro\n\n## Install ##\n\nRun it.\r\n";
    let document =
        read_document(markdown.as_bytes().to_vec(), "notes.md", &Limits::default()).expect("reads");
    assert_eq!(document.text, "Intro\n\n## Install ##\n\nRun it.\r\n");
    assert_eq!(document.title.as_deref(), Some("Install"));
    assert_eq!(document.content_type, "text/markdown");
    let plain =
        read_document(b"# not a title".to_vec(), "notes.txt", &Limits::default()).expect("reads");
    assert_eq!((plain.title, plain.content_type), (None, "text/plain"));
}
