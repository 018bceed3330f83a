//! Cutting a document into the chunks retrieval ranks.
//!
//! A Markdown document is first split into sections at its headings (ATX headings,
//! `#` to `######`, outside fenced code), so every heading starts a chunk and no chunk
//! spans two sections. Each section is then cut into chunks of at most
//! `max_chars` characters (Unicode scalar values), preferring, within the second half
//! of the allowed length, a paragraph break, then a line break, then the end of a
//! sentence, then any whitespace; only a run without whitespace is cut mid-word.
//! Consecutive chunks of one section overlap: the next starts at most `overlap`
//! characters before the end of the previous one, at the first word start there.
//!
//! Chunks are slices of the document, trimmed of surrounding whitespace: together they
//! cover every non-whitespace character of it.

/// Chunk size and overlap, in characters (`BOR_CHUNK_CHARS`, `BOR_CHUNK_OVERLAP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkingSettings {
    pub max_chars: usize,
    /// Less than half of `max_chars` (the configuration checks it).
    pub overlap: usize,
}

/// How a document's text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// Headings start sections.
    Markdown,
    /// Paragraphs only.
    Plain,
}

/// One chunk: a slice of the document and where it starts (a byte offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextChunk<'a> {
    pub start: usize,
    pub text: &'a str,
}

impl TextChunk<'_> {
    /// The byte offset just after the chunk.
    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }
}

/// The chunks of `text`, in order.
/// Settings outside the documented bounds are brought within them (`max_chars` at least
/// 1, `overlap` under half of it), so that every chunk moves the cut forward.
pub fn chunk_text(
    text: &str,
    format: TextFormat,
    settings: ChunkingSettings,
) -> Vec<TextChunk<'_>> {
    chunk_text_cut_at(text, format, settings, &[])
}

/// [`chunk_text`], with a chunk also starting at each offset of `cuts` (sorted; the
/// start of a page read by OCR, so that no chunk mixes OCR's reading with a text layer
/// and each says its page).
pub fn chunk_text_cut_at<'a>(
    text: &'a str,
    format: TextFormat,
    settings: ChunkingSettings,
    cuts: &[usize],
) -> Vec<TextChunk<'a>> {
    let max_chars = settings.max_chars.max(1);
    let settings = ChunkingSettings {
        max_chars,
        overlap: settings.overlap.min((max_chars - 1) / 2),
    };
    let mut starts = match format {
        TextFormat::Markdown => heading_starts(text),
        TextFormat::Plain => Vec::new(),
    };
    starts.extend(cuts.iter().filter(|&&cut| cut < text.len()));
    starts.push(0);
    starts.sort_unstable();
    starts.dedup();
    let mut chunks = Vec::new();
    for (index, &start) in starts.iter().enumerate() {
        let end = starts.get(index + 1).copied().unwrap_or(text.len());
        chunk_section(text, start, end, settings, &mut chunks);
    }
    chunks
}

/// The level and text of the ATX heading that starts at `start`; `None` when it has
/// no text.
fn heading_at(text: &str, start: usize) -> Option<(usize, &str)> {
    let line = text[start..].lines().next().unwrap_or_default().trim();
    let level = line.len() - line.trim_start_matches('#').len();
    let title = line[level..].trim().trim_end_matches('#').trim();
    (!title.is_empty()).then_some((level, title))
}

/// What separates the headings of a path.
pub const HEADING_SEPARATOR: &str = " › ";

/// The heading path of every place in a Markdown text: the headings above it,
/// outermost first (a heading closes the deeper ones before it).
#[derive(Debug, Default)]
pub struct HeadingPaths {
    /// Where each heading starts, with the path it opens; in text order.
    paths: Vec<(usize, String)>,
}

impl HeadingPaths {
    pub fn of(text: &str, format: TextFormat) -> HeadingPaths {
        if format == TextFormat::Plain {
            return HeadingPaths::default();
        }
        let mut open: Vec<(usize, &str)> = Vec::new();
        let mut paths = Vec::new();
        for start in heading_starts(text) {
            let Some((level, title)) = heading_at(text, start) else {
                continue;
            };
            open.retain(|(open_level, _)| *open_level < level);
            open.push((level, title));
            let path: Vec<&str> = open.iter().map(|(_, title)| *title).collect();
            paths.push((start, path.join(HEADING_SEPARATOR)));
        }
        HeadingPaths { paths }
    }

    /// The path at byte `offset`; `""` before the first heading.
    pub fn at(&self, offset: usize) -> &str {
        let opened = self.paths.partition_point(|(start, _)| *start <= offset);
        opened
            .checked_sub(1)
            .map_or("", |index| self.paths[index].1.as_str())
    }
}

/// Byte offsets of the first non-blank character of every ATX heading line outside
/// fenced code blocks.
fn heading_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut fence: Option<char> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = &line[indent..];
        if indent <= 3 {
            let fence_marker = if body.starts_with("```") {
                Some('`')
            } else if body.starts_with("~~~") {
                Some('~')
            } else {
                None
            };
            if let Some(marker) = fence_marker {
                match fence {
                    None => fence = Some(marker),
                    Some(open) if open == marker => fence = None,
                    Some(_) => {}
                }
            } else if fence.is_none() && is_atx_heading(body) {
                starts.push(offset + indent);
            }
        }
        offset += line.len();
    }
    starts
}

fn is_atx_heading(line: &str) -> bool {
    let hashes = line.len() - line.trim_start_matches('#').len();
    (1..=6).contains(&hashes)
        && line[hashes..]
            .chars()
            .next()
            .is_none_or(|next| next == ' ' || next == '\t' || next == '\n' || next == '\r')
}

/// Appends the chunks of `text[start..end]`.
fn chunk_section<'a>(
    text: &'a str,
    start: usize,
    end: usize,
    settings: ChunkingSettings,
    chunks: &mut Vec<TextChunk<'a>>,
) {
    let mut pos = skip_whitespace(text, start, end);
    while pos < end {
        let window_end = advance_chars(text, pos, end, settings.max_chars);
        if window_end == end {
            push_trimmed(text, pos, end, chunks);
            return;
        }
        let earliest_cut = advance_chars(text, pos, end, settings.max_chars.div_ceil(2));
        let cut = best_cut(text.as_bytes(), earliest_cut, window_end);
        push_trimmed(text, pos, cut, chunks);
        let next = if settings.overlap == 0 {
            cut
        } else {
            overlap_start(text, cut, settings.overlap)
        };
        pos = skip_whitespace(text, next, end);
    }
}

fn push_trimmed<'a>(text: &'a str, start: usize, end: usize, chunks: &mut Vec<TextChunk<'a>>) {
    let slice = text[start..end].trim_end();
    if !slice.is_empty() {
        chunks.push(TextChunk { start, text: slice });
    }
}

/// The byte offset `count` characters after `from`, or `limit` when the text ends first.
fn advance_chars(text: &str, from: usize, limit: usize, count: usize) -> usize {
    text[from..limit]
        .char_indices()
        .nth(count)
        .map_or(limit, |(offset, _)| from + offset)
}

fn skip_whitespace(text: &str, from: usize, limit: usize) -> usize {
    text[from..limit]
        .char_indices()
        .find(|(_, c)| !c.is_whitespace())
        .map_or(limit, |(offset, _)| from + offset)
}

/// Where to end a chunk that may end anywhere in `earliest..=latest`: the last
/// paragraph break, else line break, else sentence end, else whitespace; else `latest`.
/// Every candidate is an ASCII byte, hence a character boundary.
fn best_cut(bytes: &[u8], earliest: usize, latest: usize) -> usize {
    let last = |is_cut: &dyn Fn(usize) -> bool| (earliest..latest).rev().find(|&i| is_cut(i));
    let paragraph_break = |i: usize| {
        bytes[i] == b'\n'
            && bytes[i + 1..]
                .iter()
                .find(|&&b| b != b' ' && b != b'\t' && b != b'\r')
                == Some(&b'\n')
    };
    let sentence_end = |i: usize| {
        matches!(bytes[i], b'.' | b'!' | b'?')
            && bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace)
    };
    last(&paragraph_break)
        .or_else(|| last(&|i| bytes[i] == b'\n'))
        .or_else(|| last(&sentence_end).map(|i| i + 1))
        .or_else(|| last(&|i| bytes[i].is_ascii_whitespace()))
        .unwrap_or(latest)
}

/// Where the chunk after one cut at `cut` starts: the first word start within the last
/// `overlap` characters before `cut`, else exactly `overlap` characters before it.
fn overlap_start(text: &str, cut: usize, overlap: usize) -> usize {
    let target = text[..cut]
        .char_indices()
        .rev()
        .nth(overlap - 1)
        .map_or(0, |(offset, _)| offset);
    let preceded_by_space = |offset: usize| {
        text[..offset]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace)
    };
    text[target..cut]
        .char_indices()
        .map(|(offset, c)| (target + offset, c))
        .find(|&(offset, c)| !c.is_whitespace() && preceded_by_space(offset))
        .map_or(target, |(offset, _)| offset)
}

#[cfg(test)]
mod tests;
