use super::*;

fn zip_with(names: &[&str]) -> Vec<u8> {
    use std::io::Write;
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for name in names {
        writer
            .start_file(*name, zip::write::SimpleFileOptions::default())
            .expect("starts");
        writer.write_all(b"<x/>").expect("writes");
    }
    writer.finish().expect("finishes").into_inner()
}

#[test]
fn the_content_decides_over_the_name() {
    assert_eq!(Kind::detect(b"%PDF-1.7\n...", "notes.txt"), Ok(Kind::Pdf));
    assert_eq!(
        Kind::detect(b"\xEF\xBB\xBF<!DOCTYPE html><p>x", "page.md"),
        Ok(Kind::Html)
    );
    assert_eq!(
        Kind::detect(b"<!-- c --><html><body>x", "page"),
        Ok(Kind::Html)
    );
    assert_eq!(
        Kind::detect(&zip_with(&["word/document.xml"]), "report.pdf"),
        Ok(Kind::Docx)
    );
    for (signature, format) in [
        (&b"\x89PNG\r\n\x1a\nrest"[..], ImageFormat::Png),
        (b"\xFF\xD8\xFF\xE0rest", ImageFormat::Jpeg),
        (b"II*\0rest", ImageFormat::Tiff),
        (b"MM\0*rest", ImageFormat::Tiff),
        (b"RIFF\0\0\0\0WEBPVP8 ", ImageFormat::WebP),
    ] {
        assert_eq!(Kind::detect(signature, "image.md"), Ok(Kind::Image(format)));
    }
}

#[test]
fn the_name_decides_between_text_kinds() {
    assert_eq!(Kind::detect(b"# Title", "a.MD"), Ok(Kind::Markdown));
    assert_eq!(Kind::detect(b"# Title", "a.txt"), Ok(Kind::PlainText));
    assert_eq!(Kind::detect(b"<p>fragment</p>", "a.htm"), Ok(Kind::Html));
    assert_eq!(Kind::detect(b"plain words", "README"), Ok(Kind::PlainText));
}

#[test]
fn contradictions_and_other_kinds_are_refused_with_what_the_file_is() {
    let refused =
        |bytes: &[u8], name: &str| Kind::detect(bytes, name).expect_err("refused").to_string();
    assert_eq!(
        refused(b"just text", "scan.pdf"),
        "not a PDF: it does not start with %PDF- (its content is plain text)"
    );
    assert_eq!(
        refused(b"just text", "letter.docx"),
        "not a Word document: it is not a zip archive (its content is plain text)"
    );
    assert!(refused(&zip_with(&["content.xml", "mimetype"]), "a.docx").contains("OpenDocument"));
    assert!(
        refused(&zip_with(&["photo.jpg"]), "a.docx")
            .contains("zip archive that is not a Word document")
    );
    assert!(refused(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1rest", "old.doc").contains(".doc"));
    assert!(refused(b"GIF89a", "image.md").contains("GIF image"));
    assert_eq!(
        refused(b"just text", "photo.webp"),
        "not a WebP image: its content does not start as one (its content is plain text)"
    );
    assert!(refused(b"\x00\x01\x02", "data.bin").contains("binary .bin file"));
}
