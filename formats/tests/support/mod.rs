//! What the hostile-file tests, the memory tests and the benchmark share: PDFs built to
//! make a reader work, and an allocator that counts the memory a read holds.

pub mod peak;

use std::io::Write;

use pdf_extract::{Dictionary, Document, Object, Stream};

/// The text-showing operators of a content stream, in turn: `Tj`, `TJ`, `'` and `"`.
fn text_operator(index: usize, glyphs: &str) -> String {
    match index % 4 {
        0 => format!("({glyphs})Tj\n"),
        1 => format!("[({glyphs})-20(a)]TJ\n"),
        2 => format!("({glyphs})'\n"),
        _ => format!("0 0 ({glyphs})\"\n"),
    }
}

fn compressed(content: &[u8]) -> Stream {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(content).expect("compresses");
    let packed = encoder.finish().expect("compresses");
    let mut filter = Dictionary::new();
    filter.set("Filter", Object::Name(b"FlateDecode".to_vec()));
    Stream::new(filter, packed).with_compression(false)
}

/// A PDF of `pages` pages in Helvetica, each one compressed content stream of
/// `operators` text-showing operators of `glyphs` characters each: a few kilobytes
/// that unpack to millions of operators.
pub fn text_operators_pdf(pages: usize, operators: usize, glyphs: usize) -> Vec<u8> {
    let text = "a".repeat(glyphs);
    let mut content = b"BT /F1 10 Tf 20 380 Td 12 TL\n".to_vec();
    for index in 0..operators {
        content.extend(text_operator(index, &text).as_bytes());
    }
    content.extend(b"ET\n");
    content_pdf(pages, &content)
}

/// A PDF of one page whose one `TJ` has `operands` numbers.
pub fn one_operator_pdf(operands: usize) -> Vec<u8> {
    let mut content = b"BT /F1 10 Tf 20 380 Td [".to_vec();
    content.extend(b"0 ".repeat(operands));
    content.extend(b"(a)] TJ ET\n");
    content_pdf(1, &content)
}

/// A PDF of `pages` pages that all draw `content` (compressed), with Helvetica as /F1.
pub fn content_pdf(pages: usize, content: &[u8]) -> Vec<u8> {
    pdf_of(pages, compressed(content), |_, _| {})
}

/// A PDF of one page that draws form 0 `fan_out` times; form `i` shows a word and
/// draws form `i + 1` `fan_out` times, down to form `depth - 1`; with `looping`, the
/// last form draws form 0 again.
pub fn nested_forms_pdf(depth: usize, fan_out: usize, looping: bool) -> Vec<u8> {
    let draws = |form: usize| format!("/X{form} Do\n").repeat(fan_out);
    pdf_of(1, compressed(draws(0).as_bytes()), |document, resources| {
        let ids: Vec<(u32, u16)> = (0..depth).map(|_| document.new_object_id()).collect();
        let mut xobjects = Dictionary::new();
        for (form, id) in ids.iter().enumerate() {
            xobjects.set(format!("X{form}"), Object::Reference(*id));
        }
        resources.set("XObject", Object::Dictionary(xobjects));
        for (form, id) in ids.iter().enumerate() {
            let mut content = b"BT /F1 10 Tf 20 380 Td (word) Tj ET\n".to_vec();
            if form + 1 < depth {
                content.extend(draws(form + 1).as_bytes());
            } else if looping {
                content.extend(draws(0).as_bytes());
            }
            let mut stream = compressed(&content);
            stream.dict.set("Type", Object::Name(b"XObject".to_vec()));
            stream.dict.set("Subtype", Object::Name(b"Form".to_vec()));
            stream.dict.set(
                "BBox",
                Object::Array(vec![0.into(), 0.into(), 300.into(), 400.into()]),
            );
            document.set_object(*id, stream);
        }
    })
}

/// A PDF of `pages` pages that all draw `contents`, in Helvetica as /F1, with
/// `resources` adding to the pages' resources.
fn pdf_of(
    pages: usize,
    contents: Stream,
    resources: impl FnOnce(&mut Document, &mut Dictionary),
) -> Vec<u8> {
    let mut document = Document::with_version("1.5");
    let pages_id = document.new_object_id();
    let mut font = Dictionary::new();
    font.set("Type", Object::Name(b"Font".to_vec()));
    font.set("Subtype", Object::Name(b"Type1".to_vec()));
    font.set("BaseFont", Object::Name(b"Helvetica".to_vec()));
    let font = document.add_object(font);
    let mut fonts = Dictionary::new();
    fonts.set("F1", Object::Reference(font));
    let mut page_resources = Dictionary::new();
    page_resources.set("Font", Object::Dictionary(fonts));
    resources(&mut document, &mut page_resources);
    let contents = document.add_object(contents);
    let kids: Vec<Object> = (0..pages)
        .map(|_| {
            let mut page = Dictionary::new();
            page.set("Type", Object::Name(b"Page".to_vec()));
            page.set("Parent", Object::Reference(pages_id));
            page.set("Contents", Object::Reference(contents));
            page.set("Resources", Object::Dictionary(page_resources.clone()));
            page.set(
                "MediaBox",
                Object::Array(vec![0.into(), 0.into(), 300.into(), 400.into()]),
            );
            Object::Reference(document.add_object(page))
        })
        .collect();
    let mut tree = Dictionary::new();
    tree.set("Type", Object::Name(b"Pages".to_vec()));
    tree.set("Count", Object::Integer(kids.len() as i64));
    tree.set("Kids", Object::Array(kids));
    document.set_object(pages_id, tree);
    saved(document, pages_id)
}

/// The bytes of `document`, with a catalog whose page tree is `pages`.
pub fn saved(mut document: Document, pages: (u32, u16)) -> Vec<u8> {
    let mut catalog = Dictionary::new();
    catalog.set("Type", Object::Name(b"Catalog".to_vec()));
    catalog.set("Pages", Object::Reference(pages));
    let catalog = document.add_object(catalog);
    document.trailer.set("Root", Object::Reference(catalog));
    let mut bytes = Vec::new();
    document.save_to(&mut bytes).expect("saves");
    bytes
}
