//! Tesseract's TSV output as pages of paragraphs, with the mean confidence of the words.

use std::path::Path;

use super::Ocr;
use super::process;

/// Most bytes of Tesseract's output read for one image (a page of words is some tens
/// of kilobytes).
const MAX_TSV_BYTES: u64 = 16 << 20;

/// The words OCR read on one page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OcrPage {
    /// Paragraphs in reading order, each as its lines.
    pub paragraphs: Vec<Vec<String>>,
    /// The mean confidence of the words, 0 to 100; `None` when none is known.
    pub confidence: Option<u8>,
}

impl OcrPage {
    /// A vision model's transcription: paragraphs are separated by blank lines.
    pub(crate) fn of_transcript(text: &str) -> OcrPage {
        let paragraphs = text
            .split("\n\n")
            .map(|paragraph| {
                paragraph
                    .lines()
                    .map(str::trim)
                    .filter(|line| !line.is_empty())
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .filter(|lines| !lines.is_empty())
            .collect();
        OcrPage {
            paragraphs,
            confidence: None,
        }
    }

    /// The non-blank characters read.
    pub(crate) fn chars(&self) -> usize {
        self.paragraphs
            .iter()
            .flatten()
            .map(|line| line.chars().filter(|c| !c.is_whitespace()).count())
            .sum()
    }

    /// The paragraphs as text: lines joined by a space, a word hyphenated at a line end
    /// joined again.
    pub(crate) fn paragraph_texts(&self) -> impl Iterator<Item = String> + '_ {
        self.paragraphs.iter().map(|lines| {
            let mut paragraph = String::new();
            for line in lines {
                if paragraph.is_empty() {
                    paragraph.push_str(line);
                } else {
                    crate::text::join_line(&mut paragraph, line);
                }
            }
            paragraph
        })
    }
}

/// Reads the image at `image` (every page of a multi-page TIFF); `dpi` when it is known
/// (a rendered PDF page), else Tesseract estimates it.
pub(crate) fn read_image(
    image: &Path,
    dpi: Option<u32>,
    ocr: &Ocr,
) -> Result<Vec<OcrPage>, String> {
    let output = image.with_extension("tsv");
    let dpi = dpi.map(|dpi| dpi.to_string());
    let mut args: Vec<&std::ffi::OsStr> = vec![
        image.as_os_str(),
        "stdout".as_ref(),
        "-l".as_ref(),
        ocr.languages.as_ref(),
    ];
    if let Some(dpi) = &dpi {
        args.push("--dpi".as_ref());
        args.push(dpi.as_ref());
    }
    args.push("tsv".as_ref());
    process::run("tesseract", &args, ocr, Some(&output))?;
    let mut tsv = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(
            std::fs::File::open(&output)
                .map_err(|error| format!("OCR's output is missing ({error})"))?,
            MAX_TSV_BYTES,
        ),
        &mut tsv,
    )
    .map_err(|_| "OCR's output is not text".to_owned())?;
    Ok(pages_of_tsv(&tsv, ocr.max_pages))
}

/// The first `max_pages` pages of Tesseract's TSV: the words (level 5) grouped by page,
/// block, paragraph and line; a page without words is an empty page.
pub(crate) fn pages_of_tsv(tsv: &str, max_pages: usize) -> Vec<OcrPage> {
    #[derive(Default)]
    struct PageWords {
        page: OcrPage,
        confidence_sum: f64,
        words: u32,
        paragraph: Option<(u32, u32)>,
        line: Option<u32>,
    }
    let mut pages: Vec<PageWords> = Vec::new();
    for row in tsv.lines().skip(1) {
        let fields: Vec<&str> = row.split('\t').collect();
        let [
            level,
            page,
            block,
            paragraph,
            line,
            _word,
            _,
            _,
            _,
            _,
            confidence,
            text,
        ] = fields[..]
        else {
            continue;
        };
        let number = |field: &str| field.trim().parse::<u32>().ok();
        let (Some(level), Some(page), Some(block), Some(paragraph), Some(line)) = (
            number(level),
            number(page),
            number(block),
            number(paragraph),
            number(line),
        ) else {
            continue;
        };
        let Some(index) = (page as usize)
            .checked_sub(1)
            .filter(|&index| index < max_pages)
        else {
            continue;
        };
        if pages.len() <= index {
            pages.resize_with(index + 1, PageWords::default);
        }
        let text = text.trim();
        if level != 5 || text.is_empty() {
            continue;
        }
        let words = &mut pages[index];
        if let Ok(confidence) = confidence.trim().parse::<f64>()
            && confidence.is_finite()
            && confidence >= 0.0
        {
            words.confidence_sum += confidence.min(100.0);
            words.words += 1;
        }
        if words.paragraph != Some((block, paragraph)) {
            words.paragraph = Some((block, paragraph));
            words.line = None;
            words.page.paragraphs.push(Vec::new());
        }
        let Some(lines) = words.page.paragraphs.last_mut() else {
            continue;
        };
        if words.line != Some(line) {
            words.line = Some(line);
            lines.push(String::new());
        }
        if let Some(current) = lines.last_mut() {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(text);
        }
    }
    pages
        .into_iter()
        .map(|mut words| {
            if words.words > 0 {
                let mean = words.confidence_sum / f64::from(words.words);
                words.page.confidence = Some(mean.round().clamp(0.0, 100.0) as u8);
            }
            words.page
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{OcrPage, pages_of_tsv};

    #[test]
    fn words_are_grouped_by_paragraph_and_line_with_their_mean_confidence() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
            1\t1\t0\t0\t0\t0\t0\t0\t10\t10\t-1\t\n\
            5\t1\t1\t1\t1\t1\t0\t0\t1\t1\t90\tOne\n\
            5\t1\t1\t1\t1\t2\t0\t0\t1\t1\t80\tline\n\
            5\t1\t1\t1\t2\t1\t0\t0\t1\t1\t70\tnext\n\
            5\t1\t2\t1\t1\t1\t0\t0\t1\t1\t60\tOther\n\
            1\t3\t0\t0\t0\t0\t0\t0\t10\t10\t-1\t\n\
            5\t3\t1\t1\t1\t1\t0\t0\t1\t1\tnan\tx\n\
            5\tbroken\n";
        assert_eq!(
            pages_of_tsv(tsv, 3),
            vec![
                OcrPage {
                    paragraphs: vec![
                        vec!["One line".to_owned(), "next".to_owned()],
                        vec!["Other".to_owned()]
                    ],
                    confidence: Some(75),
                },
                OcrPage::default(),
                OcrPage {
                    paragraphs: vec![vec!["x".to_owned()]],
                    confidence: None,
                },
            ]
        );
        assert_eq!(
            pages_of_tsv(tsv, 1).len(),
            1,
            "pages past the cap are left out"
        );
    }
}
