//! The arithmetic of the index: exact dot products of f32 vectors, and sign codes for
//! the first pass of a search.
//!
//! A row's sign code holds one bit per dimension, set when the value is positive, 64
//! to a word (384 dimensions: 48 bytes, a 32nd of the f32 row). The Hamming distance
//! between two codes counts the dimensions whose signs differ; for unit vectors it
//! tracks the angle between them (for random directions it is the angle exactly, in
//! expectation: `distance / dimension ≈ angle / π`), so the rows nearest the query's
//! code are the likely nearest rows, and only those are scored exactly.

use std::ops::Range;

/// Lanes of the dot products: independent sums the compiler keeps in vector registers.
const LANES: usize = 16;
/// Bits per code word.
const WORD_BITS: usize = u64::BITS as usize;

/// Rows of a scan: a span of rows, or listed rows (ascending).
#[derive(Debug, Clone)]
pub enum Rows<'a> {
    Span(Range<usize>),
    Listed(&'a [u32]),
}

/// The sign codes of every row, `words_per_row` words each, row after row.
#[derive(Debug, Default)]
pub struct SignCodes {
    words_per_row: usize,
    words: Vec<u64>,
}

impl SignCodes {
    pub fn new(dimension: usize) -> SignCodes {
        SignCodes {
            words_per_row: dimension.div_ceil(WORD_BITS),
            words: Vec::new(),
        }
    }

    pub fn words_per_row(&self) -> usize {
        self.words_per_row
    }

    /// The code of `vector`.
    pub fn encode(vector: &[f32]) -> Vec<u64> {
        let mut code = vec![0u64; vector.len().div_ceil(WORD_BITS)];
        for (word, values) in code.iter_mut().zip(vector.chunks(WORD_BITS)) {
            for (bit, value) in values.iter().enumerate() {
                if *value > 0.0 {
                    *word |= 1 << bit;
                }
            }
        }
        code
    }

    pub fn push_row(&mut self, vector: &[f32]) {
        self.words.extend(SignCodes::encode(vector));
    }

    /// The Hamming distance of every row of `rows` to `query` (a code of this length)
    /// into `out` (one per row, in order), counted in `histogram` (indexed by distance,
    /// one more entry than the dimension).
    pub fn distances(&self, query: &[u64], rows: Rows<'_>, out: &mut [u16], histogram: &mut [u32]) {
        // Widths of common embedding sizes get a loop the compiler unrolls and vectorises.
        match self.words_per_row {
            6 => fixed_width::<6>(query, &self.words, rows, out, histogram),
            12 => fixed_width::<12>(query, &self.words, rows, out, histogram),
            16 => fixed_width::<16>(query, &self.words, rows, out, histogram),
            24 => fixed_width::<24>(query, &self.words, rows, out, histogram),
            width => {
                let code_of = |row: usize| &self.words[row * width..(row + 1) * width];
                match rows {
                    Rows::Span(range) => count(
                        range.map(|row| differing_bits(code_of(row), query)),
                        out,
                        histogram,
                    ),
                    Rows::Listed(listed) => count(
                        listed
                            .iter()
                            .map(|row| differing_bits(code_of(*row as usize), query)),
                        out,
                        histogram,
                    ),
                }
            }
        }
    }

    pub fn copy_row(&mut self, from: usize, to: usize) {
        let width = self.words_per_row;
        self.words
            .copy_within(from * width..(from + 1) * width, to * width);
    }

    /// Keeps the first `rows` rows.
    pub fn truncate(&mut self, rows: usize) {
        self.words.truncate(rows * self.words_per_row);
    }

    pub fn reserve_rows(&mut self, rows: usize) {
        self.words.reserve_exact(rows * self.words_per_row);
    }

    pub fn shrink_to_rows(&mut self, rows: usize) {
        self.words.shrink_to(rows * self.words_per_row);
    }

    /// Bytes allocated.
    pub fn capacity_bytes(&self) -> usize {
        self.words.capacity() * size_of::<u64>()
    }
}

fn fixed_width<const W: usize>(
    query: &[u64],
    words: &[u64],
    rows: Rows<'_>,
    out: &mut [u16],
    histogram: &mut [u32],
) {
    let Ok(query) = <&[u64; W]>::try_from(query) else {
        return;
    };
    let codes = words.as_chunks::<W>().0;
    match rows {
        Rows::Span(range) => count(
            codes[range].iter().map(|row| differing_bits(row, query)),
            out,
            histogram,
        ),
        Rows::Listed(listed) => count(
            listed
                .iter()
                .map(|row| differing_bits(&codes[*row as usize], query)),
            out,
            histogram,
        ),
    }
}

/// Writes each distance into `out` and counts it in `histogram`.
fn count(distances: impl Iterator<Item = u32>, out: &mut [u16], histogram: &mut [u32]) {
    for (slot, differing) in out.iter_mut().zip(distances) {
        *slot = differing as u16;
        histogram[differing as usize] += 1;
    }
}

/// How many bits differ between `a` and `b` (of one length): a population count that
/// needs no processor extension (counts per byte summed over up to 16 words at once).
fn differing_bits(a: &[u64], b: &[u64]) -> u32 {
    const ODD: u64 = 0x5555_5555_5555_5555;
    const PAIRS: u64 = 0x3333_3333_3333_3333;
    const NIBBLES: u64 = 0x0f0f_0f0f_0f0f_0f0f;
    const BYTES: u64 = 0x00ff_00ff_00ff_00ff;
    let mut total = 0u32;
    for (a, b) in a.chunks(16).zip(b.chunks(16)) {
        // Each byte of `per_byte` counts at most 8 bits of each of 16 words: ≤ 128.
        let mut per_byte = 0u64;
        for (a, b) in a.iter().zip(b) {
            let x = a ^ b;
            let x = x - ((x >> 1) & ODD);
            let x = (x & PAIRS) + ((x >> 2) & PAIRS);
            per_byte += (x + (x >> 4)) & NIBBLES;
        }
        let per_short = (per_byte & BYTES) + ((per_byte >> 8) & BYTES);
        total += (per_short.wrapping_mul(0x0001_0001_0001_0001) >> 48) as u32;
    }
    total
}

/// The dot product of two vectors of one length.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (a_lanes, a_rest) = a.as_chunks::<LANES>();
    let (b_lanes, b_rest) = b.as_chunks::<LANES>();
    let mut sums = [0.0f32; LANES];
    for (x, y) in a_lanes.iter().zip(b_lanes) {
        for lane in 0..LANES {
            sums[lane] += x[lane] * y[lane];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    sums.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn the_distance_counts_the_dimensions_whose_signs_differ(
            pairs in prop::collection::vec((-1.0f32..1.0, -1.0f32..1.0), 1..200),
        ) {
            let (a, b): (Vec<f32>, Vec<f32>) = pairs.into_iter().unzip();
            let mut codes = SignCodes::new(a.len());
            codes.push_row(&a);
            codes.push_row(&b);
            let mut out = [0u16; 2];
            let mut histogram = vec![0u32; a.len() + 1];
            codes.distances(&SignCodes::encode(&a), Rows::Span(0..2), &mut out, &mut histogram);
            let differing = a.iter().zip(&b).filter(|(x, y)| (**x > 0.0) != (**y > 0.0)).count();
            prop_assert_eq!(out, [0, differing as u16]);
            prop_assert_eq!(histogram.iter().sum::<u32>(), 2);
            prop_assert_eq!(histogram[differing], if differing == 0 { 2 } else { 1 });
        }
    }
}
