//! PDFs of typed and scanned pages, for the OCR tests.

use pdf_extract::{Dictionary, Document, Object, Stream};

/// One page of a PDF made for the OCR tests.
pub enum TestPage {
    /// Lines of text in Helvetica, 10 points, on a page of 300 × 400 points.
    Text(Vec<String>),
    /// A JPEG image (its bytes, width and height in pixels, grey or colour) filling a
    /// page of `points` (width, height).
    Scan {
        jpeg: Vec<u8>,
        pixels: (u32, u32),
        grey: bool,
        points: (f64, f64),
    },
}

/// A PDF of `pages`, each text or a scanned image (without a text layer).
pub fn pages_pdf(pages: Vec<TestPage>) -> Vec<u8> {
    let mut document = Document::with_version("1.5");
    let pages_id = document.new_object_id();
    let mut font = Dictionary::new();
    font.set("Type", Object::Name(b"Font".to_vec()));
    font.set("Subtype", Object::Name(b"Type1".to_vec()));
    font.set("BaseFont", Object::Name(b"Helvetica".to_vec()));
    let font = document.add_object(font);
    let mut kids = Vec::new();
    for page in pages {
        let mut resources = Dictionary::new();
        let (content, (width, height)) = match page {
            TestPage::Text(lines) => {
                let mut fonts = Dictionary::new();
                fonts.set("F1", Object::Reference(font));
                resources.set("Font", Object::Dictionary(fonts));
                let mut content = b"BT /F1 10 Tf 20 380 Td 12 TL\n".to_vec();
                for line in lines {
                    content.extend(format!("({line}) Tj T*\n").as_bytes());
                }
                content.extend(b"ET\n");
                (content, (300.0, 400.0))
            }
            TestPage::Scan {
                jpeg,
                pixels,
                grey,
                points,
            } => {
                let mut image = Dictionary::new();
                image.set("Type", Object::Name(b"XObject".to_vec()));
                image.set("Subtype", Object::Name(b"Image".to_vec()));
                image.set("Width", Object::Integer(pixels.0.into()));
                image.set("Height", Object::Integer(pixels.1.into()));
                let space: &[u8] = if grey { b"DeviceGray" } else { b"DeviceRGB" };
                image.set("ColorSpace", Object::Name(space.to_vec()));
                image.set("BitsPerComponent", Object::Integer(8));
                image.set("Filter", Object::Name(b"DCTDecode".to_vec()));
                let image = document.add_object(Stream::new(image, jpeg).with_compression(false));
                let mut xobjects = Dictionary::new();
                xobjects.set("Im0", Object::Reference(image));
                resources.set("XObject", Object::Dictionary(xobjects));
                let content =
                    format!("q {} 0 0 {} 0 0 cm /Im0 Do Q\n", points.0, points.1).into_bytes();
                (content, points)
            }
        };
        let contents = document.add_object(Stream::new(Dictionary::new(), content));
        let mut page = Dictionary::new();
        page.set("Type", Object::Name(b"Page".to_vec()));
        page.set("Parent", Object::Reference(pages_id));
        page.set("Contents", Object::Reference(contents));
        page.set("Resources", Object::Dictionary(resources));
        page.set(
            "MediaBox",
            Object::Array(vec![
                0.into(),
                0.into(),
                Object::Real(width as f32),
                Object::Real(height as f32),
            ]),
        );
        kids.push(Object::Reference(document.add_object(page)));
    }
    let mut tree = Dictionary::new();
    tree.set("Type", Object::Name(b"Pages".to_vec()));
    tree.set("Count", Object::Integer(kids.len() as i64));
    tree.set("Kids", Object::Array(kids));
    document.set_object(pages_id, tree);
    let mut catalog = Dictionary::new();
    catalog.set("Type", Object::Name(b"Catalog".to_vec()));
    catalog.set("Pages", Object::Reference(pages_id));
    let catalog = document.add_object(catalog);
    document.trailer.set("Root", Object::Reference(catalog));
    let mut bytes = Vec::new();
    document.save_to(&mut bytes).expect("saves");
    bytes
}
