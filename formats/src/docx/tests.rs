use std::io::Write;

use super::*;

/// A .docx with the given document.xml and styles.xml.
pub(crate) fn docx(document: &str, styles: Option<&str>) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    writer
        .start_file("word/document.xml", options)
        .expect("starts");
    writer.write_all(document.as_bytes()).expect("writes");
    if let Some(styles) = styles {
        writer
            .start_file("word/styles.xml", options)
            .expect("starts");
        writer.write_all(styles.as_bytes()).expect("writes");
    }
    writer.finish().expect("finishes").into_inner()
}

fn paragraph(style: Option<&str>, text: &str) -> String {
    let style = style.map_or(String::new(), |id| {
        format!(r#"<w:pPr><w:pStyle w:val="{id}"/></w:pPr>"#)
    });
    format!("<w:p>{style}<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>")
}

#[test]
fn paragraphs_headings_and_tables_keep_their_order() {
    let body = format!(
        r#"<w:document xmlns:w="w" xmlns:mc="mc"><w:body>{}{}<w:tbl><w:tr><w:tc>{}</w:tc><w:tc>{}{}</w:tc></w:tr></w:tbl>{}
        <w:p><w:r><mc:AlternateContent><mc:Choice><w:t>shape text</w:t></mc:Choice><mc:Fallback><w:t>shape text</w:t></mc:Fallback></mc:AlternateContent></w:r></w:p>
        <w:p><w:r><w:t>Fish &amp; chips</w:t><w:tab/><w:t>&#x2014; done</w:t></w:r></w:p></w:body></w:document>"#,
        paragraph(Some("berschrift2"), "Fees"),
        paragraph(None, "Pay at the desk."),
        paragraph(None, "Copy"),
        paragraph(None, "0.20"),
        paragraph(None, "each"),
        paragraph(None, "After the table."),
    );
    let styles = r#"<w:styles xmlns:w="w"><w:style w:type="paragraph" w:styleId="berschrift2"><w:name w:val="heading 2"/></w:style></w:styles>"#;
    let document = DocxReader
        .read(&docx(&body, Some(styles)), &Limits::default())
        .expect("reads");
    assert_eq!(
        document.text,
        "## Fees\n\nPay at the desk.\n\nCopy | 0.20 each\n\nAfter the table.\n\nshape text\n\nFish & chips — done\n"
    );
    assert_eq!(document.title.as_deref(), Some("Fees"));
}

#[test]
fn nesting_past_the_bound_is_refused() {
    let deep = format!(
        "<w:document>{}{}</w:document>",
        "<w:x>".repeat(100),
        "</w:x>".repeat(100)
    );
    let limits = Limits {
        max_depth: 50,
        ..Limits::default()
    };
    assert_eq!(
        DocxReader.read(&docx(&deep, None), &limits),
        Err(ReadError::TooDeep(50))
    );
}

#[test]
fn footnotes_follow_the_body_without_their_separators_and_outline_levels_make_headings() {
    let body = r#"<w:document xmlns:w="w"><w:body>
        <w:p><w:pPr><w:outlineLvl w:val="2"/></w:pPr><w:r><w:t>Direct outline</w:t></w:r></w:p>
        <w:p><w:r><w:t>Body</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r></w:p></w:body></w:document>"#;
    let footnotes = r#"<w:footnotes xmlns:w="w">
        <w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>
        <w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:t>cont</w:t></w:r></w:p></w:footnote>
        <w:footnote w:id="1"><w:p><w:r><w:t>The note.</w:t></w:r></w:p></w:footnote></w:footnotes>"#;
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for (name, content) in [
        ("word/document.xml", body),
        ("word/footnotes.xml", footnotes),
    ] {
        writer.start_file(name, options).expect("starts");
        writer.write_all(content.as_bytes()).expect("writes");
    }
    let bytes = writer.finish().expect("finishes").into_inner();
    let document = DocxReader.read(&bytes, &Limits::default()).expect("reads");
    assert_eq!(document.text, "### Direct outline\n\nBody\n\nThe note.\n");
}
