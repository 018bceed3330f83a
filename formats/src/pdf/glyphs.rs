//! Collects the characters pdf-extract lays out, with their positions, page by page.

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

/// One character (or ligature) as drawn: its baseline start, advance and size, in
/// points from the top left of the page.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Glyph {
    pub x: f64,
    pub y: f64,
    pub advance: f64,
    pub size: f64,
    pub text: String,
}

/// The glyphs of one page.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct PageGlyphs {
    pub width: f64,
    pub height: f64,
    /// The page's top edge and left edge in PDF coordinates.
    pub top: f64,
    pub left: f64,
    pub glyphs: Vec<Glyph>,
}

/// An [`OutputDev`] that keeps what it is given, up to `max_bytes` of text.
pub(super) struct Collector {
    pub pages: Vec<PageGlyphs>,
    bytes: usize,
    max_bytes: usize,
    /// Set when the text bound stopped the collection.
    pub overflowed: bool,
}

impl Collector {
    pub(super) fn new(max_bytes: usize) -> Collector {
        Collector {
            pages: Vec::new(),
            bytes: 0,
            max_bytes,
            overflowed: false,
        }
    }
}

impl OutputDev for Collector {
    fn begin_page(
        &mut self,
        _page_num: u32,
        media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.pages.push(PageGlyphs {
            width: (media_box.urx - media_box.llx).abs(),
            height: (media_box.ury - media_box.lly).abs(),
            top: media_box.ury.max(media_box.lly),
            left: media_box.llx.min(media_box.urx),
            glyphs: Vec::new(),
        });
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        text: &str,
    ) -> Result<(), OutputError> {
        self.bytes += text.len();
        if self.bytes > self.max_bytes {
            self.overflowed = true;
            return Err(OutputError::FormatError(std::fmt::Error));
        }
        let Some(page) = self.pages.last_mut() else {
            return Ok(());
        };
        let scale = (trm.m11 * trm.m22 - trm.m12 * trm.m21).abs().sqrt();
        let size = font_size * scale;
        let glyph = Glyph {
            x: trm.m31 - page.left,
            y: page.top - trm.m32,
            advance: width * size,
            size,
            text: text.to_owned(),
        };
        if glyph.x.is_finite()
            && glyph.y.is_finite()
            && glyph.size.is_finite()
            && glyph.advance.is_finite()
        {
            page.glyphs.push(glyph);
        }
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}
