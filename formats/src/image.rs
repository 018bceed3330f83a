//! Images (PNG, JPEG, TIFF, WebP): read by OCR, each page of a multi-page TIFF a page.
//!
//! Only the header is read in this process, for the image's size: one of more than
//! [`Ocr::max_pixels`](crate::Ocr::max_pixels) is refused before anything decodes it.
//! Tesseract decodes and reads the image in a bounded run of its own; with the vision
//! engine the bytes go as they are to the vision model (a TIFF is not sent: such
//! models take PNG, JPEG and WebP).

use crate::ocr::{self, OcrEngine, OcrPage, PageSource, Scratch};
use crate::text::MarkdownText;
use crate::{ExtractedDocument, FormatReader, Limits, ReadError};

/// The image formats read (by OCR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    Png,
    Jpeg,
    Tiff,
    WebP,
}

impl ImageFormat {
    /// The media type recorded for such images.
    pub fn content_type(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            ImageFormat::Tiff => "image/tiff",
            ImageFormat::WebP => "image/webp",
        }
    }

    /// What a person calls such an image.
    pub fn label(self) -> &'static str {
        match self {
            ImageFormat::Png => "PNG image",
            ImageFormat::Jpeg => "JPEG image",
            ImageFormat::Tiff => "TIFF image",
            ImageFormat::WebP => "WebP image",
        }
    }

    /// The extension its file is given for the OCR program.
    pub(crate) fn extension(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg => "jpg",
            ImageFormat::Tiff => "tif",
            ImageFormat::WebP => "webp",
        }
    }

    /// The format whose signature `bytes` start with.
    pub(crate) fn from_signature(bytes: &[u8]) -> Option<ImageFormat> {
        if bytes.starts_with(b"\x89PNG\r\n\x1A\n") {
            Some(ImageFormat::Png)
        } else if bytes.starts_with(b"\xFF\xD8\xFF") {
            Some(ImageFormat::Jpeg)
        } else if bytes.starts_with(b"II*\0") || bytes.starts_with(b"MM\0*") {
            Some(ImageFormat::Tiff)
        } else if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
            Some(ImageFormat::WebP)
        } else {
            None
        }
    }
}

pub(crate) struct ImageReader(ImageFormat);

/// The reader of images in `format`.
pub(crate) fn reader(format: ImageFormat) -> &'static ImageReader {
    match format {
        ImageFormat::Png => &ImageReader(ImageFormat::Png),
        ImageFormat::Jpeg => &ImageReader(ImageFormat::Jpeg),
        ImageFormat::Tiff => &ImageReader(ImageFormat::Tiff),
        ImageFormat::WebP => &ImageReader(ImageFormat::WebP),
    }
}

impl FormatReader for ImageReader {
    fn content_type(&self) -> &'static str {
        self.0.content_type()
    }

    fn read(&self, bytes: &[u8], limits: &Limits) -> Result<ExtractedDocument, ReadError> {
        let kind = self.0.label();
        if !limits.ocr.is_on() {
            return Err(ReadError::OcrOff { kind });
        }
        let size = imagesize::blob_size(bytes)
            .map_err(|_| ReadError::malformed(kind, "its size cannot be read from its header"))?;
        if let Some(reason) = limits
            .ocr
            .refuse_pixels(size.width as u64, size.height as u64)
        {
            return Err(ReadError::TooLarge(format!("the image is {reason}")));
        }
        let pages = match &limits.ocr.engine {
            OcrEngine::Vision(_) if self.0 == ImageFormat::Tiff => {
                return Err(ReadError::OcrFailed(
                    "a TIFF image is not sent to a vision model (it takes PNG, JPEG and WebP)"
                        .to_owned(),
                ));
            }
            OcrEngine::Vision(transcriber) => {
                let text = transcriber
                    .transcribe(bytes, self.0.content_type())
                    .map_err(ReadError::OcrFailed)?;
                vec![OcrPage::of_transcript(&text)]
            }
            _ => {
                let scratch = Scratch::new().map_err(ReadError::OcrFailed)?;
                let image = scratch
                    .write(&format!("image.{}", self.0.extension()), bytes)
                    .map_err(ReadError::OcrFailed)?;
                ocr::read_image(&image, None, &limits.ocr).map_err(ReadError::OcrFailed)?
            }
        };
        write_pages(pages, limits, self.0.content_type())
    }
}

fn write_pages(
    pages: Vec<OcrPage>,
    limits: &Limits,
    content_type: &'static str,
) -> Result<ExtractedDocument, ReadError> {
    let mut text = MarkdownText::new(limits.max_text_bytes);
    let mut sources = Vec::with_capacity(pages.len());
    for page in pages {
        text.start_page();
        for paragraph in page.paragraph_texts() {
            text.paragraph(&paragraph)?;
        }
        sources.push(PageSource::Ocr {
            confidence: page.confidence,
        });
    }
    let mut document = text
        .finish(None, content_type)
        .map_err(|error| match error {
            ReadError::Empty => ReadError::NoWordsInImage,
            other => other,
        })?;
    document.pages = sources;
    Ok(document)
}
