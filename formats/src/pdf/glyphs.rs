//! Collects the characters pdf-extract lays out, with their positions, page by page:
//! at the end of each page its characters become runs of text ([`layout::pieces`]),
//! so only one page's characters are held at a time. The characters drawn, their
//! text and the memory held are counted against the [`Limits`]; past one, the
//! collection stops with the reason.

use std::mem::size_of;

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

use super::layout::{self, Glyph, PageGlyphs, Piece};
use crate::{Limits, ReadError};

/// The runs of text of one page.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct PagePieces {
    /// The page's size in points.
    pub width: f64,
    pub height: f64,
    pub pieces: Vec<Piece>,
}

/// An [`OutputDev`] that keeps what it is given, within the limits.
pub(super) struct Collector<'a> {
    limits: &'a Limits,
    /// The pages read, as runs of text.
    pub pages: Vec<PagePieces>,
    /// The page being read.
    page: Option<PageGlyphs>,
    glyphs: usize,
    text_bytes: usize,
    /// The memory the runs of text of the pages read hold.
    pieces_bytes: usize,
    /// The memory the text of the page's characters holds (their list aside).
    page_text_bytes: usize,
    /// Set when a bound stopped the collection.
    pub overflow: Option<ReadError>,
}

impl<'a> Collector<'a> {
    pub(super) fn new(limits: &'a Limits) -> Collector<'a> {
        Collector {
            limits,
            pages: Vec::new(),
            page: None,
            glyphs: 0,
            text_bytes: 0,
            pieces_bytes: 0,
            page_text_bytes: 0,
            overflow: None,
        }
    }

    /// Lays out the characters of the page being read (whole or cut short).
    pub(super) fn finish_page(&mut self) -> Result<(), OutputError> {
        let Some(page) = self.page.take() else {
            return Ok(());
        };
        let pieces = layout::pieces(&page);
        self.page_text_bytes = 0;
        self.pieces_bytes += pieces.capacity() * size_of::<Piece>()
            + pieces
                .iter()
                .map(|piece| piece.text.capacity())
                .sum::<usize>();
        self.pages.push(PagePieces {
            width: page.width,
            height: page.height,
            pieces,
        });
        if self.pieces_bytes > self.limits.max_layout_bytes {
            return self.stop(self.limits.layout_too_large());
        }
        Ok(())
    }

    /// Stops the collection with `reason`.
    fn stop(&mut self, reason: ReadError) -> Result<(), OutputError> {
        self.overflow = Some(reason);
        Err(OutputError::FormatError(std::fmt::Error))
    }
}

impl OutputDev for Collector<'_> {
    fn begin_page(
        &mut self,
        _page_num: u32,
        media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.finish_page()?;
        self.page = Some(PageGlyphs {
            width: (media_box.urx - media_box.llx).abs(),
            height: (media_box.ury - media_box.lly).abs(),
            top: media_box.ury.max(media_box.lly),
            left: media_box.llx.min(media_box.urx),
            glyphs: Vec::new(),
        });
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        self.finish_page()
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        text: &str,
    ) -> Result<(), OutputError> {
        self.glyphs += 1;
        self.text_bytes += text.len();
        if self.glyphs > self.limits.max_glyphs {
            return self.stop(ReadError::TooManyGlyphs(self.limits.max_glyphs));
        }
        if self.text_bytes > self.limits.max_text_bytes {
            return self.stop(crate::limits::text_too_large(self.limits.max_text_bytes));
        }
        let Some(page) = self.page.as_mut() else {
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
            // The list grows by doubling: what it holds once grown is counted first.
            let capacity = if page.glyphs.len() == page.glyphs.capacity() {
                (page.glyphs.capacity() * 2).max(4)
            } else {
                page.glyphs.capacity()
            };
            self.page_text_bytes += glyph.text.capacity();
            let held = self.pieces_bytes + self.page_text_bytes + capacity * size_of::<Glyph>();
            if held > self.limits.max_layout_bytes {
                return self.stop(self.limits.layout_too_large());
            }
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
