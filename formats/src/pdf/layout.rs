//! From positioned glyphs to the blocks of a page: lines, columns, running headers and
//! footers, headings, paragraphs and table rows.
//!
//! - **Lines**: glyphs that follow each other on one baseline, with a space where the
//!   gap is wider than a sixth of the font size; a gap of more than three em
//!   starts a new piece (a table cell, the other column).
//! - **Columns**: a vertical gutter in the middle of the page that few pieces cross and
//!   many end before or start after; the pieces between two full-width pieces are read
//!   left column first, then right column.
//! - **Running headers and footers**: pieces in the two topmost and two bottommost
//!   baselines of a page whose text (digits aside) recurs in the same size on at least
//!   half of the pages.
//! - **Headings**: lines in a font larger than the body text (the size most characters
//!   have), levels by size; **paragraphs** end at a larger vertical gap, an indented
//!   line, or a line that stops short of the column's edge; words hyphenated at a line
//!   end are joined; pieces on one baseline far apart are a table row (` | `).

use std::collections::{HashMap, HashSet};

use crate::text::{ends_hyphenated, join_line};

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

/// A run of glyphs on one baseline.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Piece {
    pub x0: f64,
    pub x1: f64,
    pub y: f64,
    pub size: f64,
    pub text: String,
}

/// What a page is made of, in reading order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Block {
    Heading(usize, String),
    Paragraph(String),
    /// A table row or a list item.
    Line(String),
}

/// Characters that open a list item (the private-use ones are symbol-font bullets).
fn is_bullet(c: char) -> bool {
    matches!(
        c,
        '•' | '◦' | '▪' | '▫' | '‣' | '⁃' | '∙' | '●' | '○' | '■' | '□' | '–'
    ) || ('\u{F000}'..='\u{F0FF}').contains(&c)
}

/// Space between glyphs, in ems, taken for a space between words.
const WORD_GAP: f64 = 0.16;
/// Space between glyphs, in ems, that separates pieces (cells, columns).
const PIECE_GAP: f64 = 3.0;

/// The pieces of a page, in the order they were drawn.
pub(super) fn pieces(page: &PageGlyphs) -> Vec<Piece> {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut pending_space = false;
    for glyph in &page.glyphs {
        if glyph.text.trim().is_empty() {
            pending_space = true;
            if let Some(piece) = pieces.last_mut()
                && same_baseline(piece, glyph)
            {
                piece.x1 = piece.x1.max(glyph.x + glyph.advance);
            }
            continue;
        }
        let continues = pieces.last().is_some_and(|piece| {
            let gap = glyph.x - piece.x1;
            same_baseline(piece, glyph) && gap > -0.5 * glyph.size && gap < PIECE_GAP * glyph.size
        });
        match pieces.last_mut() {
            Some(piece) if continues => {
                if pending_space || glyph.x - piece.x1 > WORD_GAP * glyph.size {
                    piece.text.push(' ');
                }
                piece.text.push_str(&glyph.text);
                piece.x1 = piece.x1.max(glyph.x + glyph.advance);
                piece.size = piece.size.max(glyph.size);
            }
            _ => pieces.push(Piece {
                x0: glyph.x,
                x1: glyph.x + glyph.advance,
                y: glyph.y,
                size: glyph.size,
                text: glyph.text.clone(),
            }),
        }
        pending_space = false;
    }
    pieces
}

/// Whether a glyph is on the line of a piece: on its baseline, or a smaller
/// superscript or subscript beside it.
fn same_baseline(piece: &Piece, glyph: &Glyph) -> bool {
    let rise = piece.y - glyph.y;
    if glyph.size < piece.size * 0.85 {
        return rise > -0.3 * piece.size && rise < 0.6 * piece.size;
    }
    rise.abs() < 0.35 * piece.size.max(glyph.size)
}

/// A piece for comparing headers across pages: its text, digits (page numbers) and
/// case aside, and its size (a title on the first page is not the running header of
/// the same words in a smaller font on the others).
fn furniture_key(piece: &Piece) -> String {
    let key: String = piece
        .text
        .chars()
        .map(|c| {
            if c.is_ascii_digit() {
                '#'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    format!(
        "{}@{}",
        crate::text::collapse_whitespace(&key),
        (piece.size * 2.0).round()
    )
}

/// The pieces of the two topmost and two bottommost baselines of a page.
fn edge_pieces(pieces: &[Piece]) -> Vec<usize> {
    let mut baselines: Vec<f64> = Vec::new();
    for piece in pieces {
        if !baselines.iter().any(|y| (y - piece.y).abs() < 2.0) {
            baselines.push(piece.y);
        }
    }
    baselines.sort_by(f64::total_cmp);
    let mut edges: Vec<f64> = baselines.iter().take(2).copied().collect();
    edges.extend(baselines.iter().rev().take(2));
    pieces
        .iter()
        .enumerate()
        .filter(|(_, piece)| edges.iter().any(|y| (y - piece.y).abs() < 2.0))
        .map(|(index, _)| index)
        .collect()
}

/// Drops the running headers and footers of every page.
pub(super) fn drop_running_furniture(pages: &mut [Vec<Piece>]) {
    if pages.len() < 2 {
        return;
    }
    let mut seen_on: HashMap<String, usize> = HashMap::new();
    for pieces in pages.iter() {
        let keys: HashSet<String> = edge_pieces(pieces)
            .into_iter()
            .map(|index| furniture_key(&pieces[index]))
            .collect();
        for key in keys {
            *seen_on.entry(key).or_default() += 1;
        }
    }
    let needed = pages.len().div_ceil(2).max(2);
    for pieces in pages.iter_mut() {
        let drop: HashSet<usize> = edge_pieces(pieces)
            .into_iter()
            .filter(|&index| {
                seen_on
                    .get(&furniture_key(&pieces[index]))
                    .copied()
                    .unwrap_or(0)
                    >= needed
            })
            .collect();
        let mut index = 0;
        pieces.retain(|_| {
            let keep = !drop.contains(&index);
            index += 1;
            keep
        });
    }
}

/// The size most characters of the document have.
pub(super) fn body_size(pages: &[Vec<Piece>]) -> f64 {
    let mut weight: HashMap<i64, usize> = HashMap::new();
    for piece in pages.iter().flatten() {
        *weight.entry((piece.size * 2.0).round() as i64).or_default() += piece.text.chars().count();
    }
    weight
        .into_iter()
        .max_by_key(|&(size, count)| (count, -size))
        .map_or(10.0, |(size, _)| size as f64 / 2.0)
}

/// Heading sizes of the document, largest first: sizes clearly above the body's.
pub(super) fn heading_sizes(pages: &[Vec<Piece>], body: f64) -> Vec<f64> {
    let mut sizes: Vec<f64> = Vec::new();
    for piece in pages.iter().flatten() {
        if is_heading_size(piece.size, body) && !sizes.iter().any(|s| (s - piece.size).abs() < 0.6)
        {
            sizes.push(piece.size);
        }
    }
    sizes.sort_by(|a, b| b.total_cmp(a));
    sizes
}

fn is_heading_size(size: f64, body: f64) -> bool {
    size > body * 1.05 + 0.1
}

/// A page's pieces in reading order, each with the column it belongs to: 0 for the
/// full width of the page, 1 for the left column, 2 for the right one.
fn reading_order(pieces: &[Piece], page_width: f64) -> Vec<(usize, &Piece)> {
    let mut sorted: Vec<&Piece> = pieces.iter().collect();
    sorted.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.x0.total_cmp(&b.x0)));
    let Some(gutter) = gutter(pieces, page_width) else {
        return sorted.into_iter().map(|piece| (0, piece)).collect();
    };
    let mut ordered = Vec::with_capacity(sorted.len());
    let mut left = Vec::new();
    let mut right = Vec::new();
    for piece in sorted {
        if piece.x1 <= gutter {
            left.push((1, piece));
        } else if piece.x0 >= gutter {
            right.push((2, piece));
        } else {
            ordered.append(&mut left);
            ordered.append(&mut right);
            ordered.push((0, piece));
        }
    }
    ordered.append(&mut left);
    ordered.append(&mut right);
    ordered
}

/// The x of a gutter between two columns, if the page has one.
fn gutter(pieces: &[Piece], page_width: f64) -> Option<f64> {
    if pieces.len() < 8 || page_width <= 0.0 {
        return None;
    }
    let total = pieces.len() as f64;
    let mut best: Option<(usize, f64)> = None;
    let mut x = page_width * 0.3;
    while x <= page_width * 0.7 {
        let crossing = pieces.iter().filter(|p| p.x0 < x && p.x1 > x).count();
        let before = pieces.iter().filter(|p| p.x1 <= x).count();
        let after = pieces.iter().filter(|p| p.x0 >= x).count();
        let is_gutter = (crossing as f64) <= total * 0.15
            && (before as f64) >= total * 0.25
            && (after as f64) >= total * 0.25;
        if is_gutter && best.is_none_or(|(fewest, _)| crossing < fewest) {
            best = Some((crossing, x));
        }
        x += 2.0;
    }
    best.map(|(_, x)| x)
}

/// The blocks of one page.
pub(super) fn blocks(pieces: &[Piece], page_width: f64, heading_sizes: &[f64]) -> Vec<Block> {
    let ordered = reading_order(pieces, page_width);
    let lines = join_rows(&ordered);
    let spacing = line_spacing(&lines);
    let edges = column_edges(&lines);
    let mut blocks = Vec::new();
    let mut paragraph: Option<(String, &Line)> = None;
    for line in &lines {
        let level = heading_sizes
            .iter()
            .position(|size| (size - line.size).abs() < 0.6)
            .filter(|_| line.text.chars().count() <= 160 && !line.row);
        if let Some(level) = level {
            flush(&mut paragraph, &mut blocks);
            match blocks.last_mut() {
                Some(Block::Heading(last, text)) if *last == level + 1 => {
                    join_line(text, &line.text)
                }
                _ => blocks.push(Block::Heading(level + 1, line.text.clone())),
            }
            continue;
        }
        if line.row {
            flush(&mut paragraph, &mut blocks);
            blocks.push(Block::Line(line.text.clone()));
            continue;
        }
        if let Some(item) = line.text.strip_prefix(is_bullet) {
            flush(&mut paragraph, &mut blocks);
            blocks.push(Block::Line(format!("- {}", item.trim_start())));
            continue;
        }
        match &mut paragraph {
            Some((text, previous)) if !starts_paragraph(previous, line, spacing, &edges) => {
                join_line(text, &line.text);
                *previous = line;
            }
            _ => {
                flush(&mut paragraph, &mut blocks);
                paragraph = Some((line.text.clone(), line));
            }
        }
    }
    flush(&mut paragraph, &mut blocks);
    blocks
}

fn flush(paragraph: &mut Option<(String, &Line)>, blocks: &mut Vec<Block>) {
    if let Some((text, _)) = paragraph.take() {
        blocks.push(Block::Paragraph(text));
    }
}

/// A line of a column: pieces on one baseline, joined.
#[derive(Debug)]
struct Line {
    column: usize,
    x0: f64,
    x1: f64,
    y: f64,
    size: f64,
    text: String,
    /// Pieces far apart on one baseline: a table row.
    row: bool,
}

/// Pieces of one column on one baseline become one line: with a space when they are
/// close, as cells of a row when they are not.
fn join_rows(ordered: &[(usize, &Piece)]) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    for &(column, piece) in ordered {
        match lines.last_mut() {
            Some(line)
                if line.column == column
                    && (line.y - piece.y).abs() < 0.35 * line.size.max(piece.size) =>
            {
                if piece.x0 - line.x1 < PIECE_GAP * piece.size {
                    line.text.push(' ');
                } else {
                    line.text.push_str(" | ");
                    line.row = true;
                }
                line.text.push_str(&piece.text);
                line.x1 = line.x1.max(piece.x1);
                line.size = line.size.max(piece.size);
            }
            _ => lines.push(Line {
                column,
                x0: piece.x0,
                x1: piece.x1,
                y: piece.y,
                size: piece.size,
                text: piece.text.clone(),
                row: false,
            }),
        }
    }
    lines
}

/// The usual distance between the baselines of consecutive lines of a column.
fn line_spacing(lines: &[Line]) -> f64 {
    let mut gaps: Vec<f64> = lines
        .windows(2)
        .filter(|pair| pair[0].column == pair[1].column)
        .map(|pair| pair[1].y - pair[0].y)
        .filter(|gap| *gap > 0.0 && *gap < 3.0 * lines[0].size.max(1.0))
        .collect();
    gaps.sort_by(f64::total_cmp);
    gaps.get(gaps.len() / 2).copied().unwrap_or(f64::INFINITY)
}

/// The left and right edges of each column's text.
fn column_edges(lines: &[Line]) -> [(f64, f64); 3] {
    let mut edges = [(f64::INFINITY, f64::NEG_INFINITY); 3];
    for line in lines {
        let edge = &mut edges[line.column.min(2)];
        edge.0 = edge.0.min(line.x0);
        edge.1 = edge.1.max(line.x1);
    }
    edges
}

fn starts_paragraph(previous: &Line, line: &Line, spacing: f64, edges: &[(f64, f64); 3]) -> bool {
    let (left, _) = edges[line.column.min(2)];
    let same_column = previous.column == line.column;
    let gap = line.y - previous.y;
    let wider_gap = same_column && (gap < 0.0 || gap > spacing * 1.45);
    let indented = line.x0 > left + 0.8 * line.size;
    // The line before stopped short: the first word of this one would have fitted.
    let first_word = line
        .text
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .chars()
        .count();
    let per_char = (line.x1 - line.x0) / line.text.chars().count().max(1) as f64;
    let room = edges[previous.column.min(2)].1 - previous.x1;
    let previous_short = room > per_char * (first_word + 1) as f64 + 0.5 * line.size;
    // Text flows from the left column into the right one, not between a column and
    // the full width of the page.
    let left_the_columns = (previous.column == 0) != (line.column == 0);
    wider_gap
        || indented
        || previous_short
        || left_the_columns
        || (line.size - previous.size).abs() > 0.6
}

/// Joins a word hyphenated across a page break: when `previous` (the last page's
/// blocks) ends in a paragraph whose last word is cut by a hyphen and `next` (this
/// page's) starts with a paragraph in lower case, the word's end moves back to its
/// start.
pub(super) fn join_across_pages(previous: &mut [Block], next: &mut Vec<Block>) {
    let (Some(Block::Paragraph(before)), Some(Block::Paragraph(after))) =
        (previous.last_mut(), next.first_mut())
    else {
        return;
    };
    if !ends_hyphenated(before) || !after.chars().next().is_some_and(char::is_lowercase) {
        return;
    }
    let word_end = after.find(' ').unwrap_or(after.len());
    before.pop();
    before.push_str(&after[..word_end]);
    let rest = after[word_end..].trim_start().to_owned();
    if rest.is_empty() {
        next.remove(0);
    } else {
        *after = rest;
    }
}

#[cfg(test)]
mod tests;
