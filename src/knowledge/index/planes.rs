//! The index's vectors, stored as two planes of 16-bit halves.
//!
//! Each f32 is split bit for bit into its upper 16 bits (sign, exponent and the top 7
//! mantissa bits: a bfloat16 truncated toward zero) and its lower 16 bits, each half in
//! a contiguous `Vec<u16>` with `dimension` values per row. Together they are exactly
//! the f32 values, in exactly the f32 bytes; a first pass over the upper plane alone
//! reads half the memory of an f32 scan.
//!
//! Truncating `x` to its upper half changes it by less than `2^-7 · |x|`, so for unit
//! vectors `q` and `x` the approximate dot product is within
//! `Σ |q_i| · 2^-7 · |x_i| ≤ 2^-7 · ‖q‖ · ‖x‖ = 2^-7` of the exact one.

/// How far an approximate score may be from the exact one: the truncation bound plus
/// room for rounding in the f32 sums (both far below it).
pub const APPROXIMATION_ERROR: f32 = 1.0 / 128.0 + 1e-4;

/// Lanes of the dot products: independent sums the compiler keeps in vector registers.
const LANES: usize = 16;

#[derive(Debug, Default)]
pub struct Planes {
    high: Vec<u16>,
    low: Vec<u16>,
}

impl Planes {
    /// Appends a row.
    pub fn push_row(&mut self, row: &[f32]) {
        for value in row {
            let bits = value.to_bits();
            self.high.push((bits >> 16) as u16);
            self.low.push(bits as u16);
        }
    }

    /// The upper halves of every row, `dimension` values per row.
    pub fn high(&self) -> &[u16] {
        &self.high
    }

    /// Row `row`, exactly as pushed, into `out` (`dimension` long).
    pub fn read_row(&self, row: usize, out: &mut [f32]) {
        let start = row * out.len();
        let high = &self.high[start..start + out.len()];
        let low = &self.low[start..start + out.len()];
        for ((value, high), low) in out.iter_mut().zip(high).zip(low) {
            *value = f32::from_bits((u32::from(*high) << 16) | u32::from(*low));
        }
    }

    /// Copies row `from` over row `to`.
    pub fn copy_row(&mut self, from: usize, to: usize, dimension: usize) {
        let source = from * dimension..(from + 1) * dimension;
        self.high.copy_within(source.clone(), to * dimension);
        self.low.copy_within(source, to * dimension);
    }

    /// Keeps the first `rows` rows.
    pub fn truncate(&mut self, rows: usize, dimension: usize) {
        self.high.truncate(rows * dimension);
        self.low.truncate(rows * dimension);
    }

    pub fn reserve_exact(&mut self, values: usize) {
        self.high.reserve_exact(values);
        self.low.reserve_exact(values);
    }

    pub fn shrink_to(&mut self, values: usize) {
        self.high.shrink_to(values);
        self.low.shrink_to(values);
    }

    /// Bytes allocated.
    pub fn capacity_bytes(&self) -> usize {
        (self.high.capacity() + self.low.capacity()) * size_of::<u16>()
    }
}

/// The dot product of `query` with a row's upper halves (the approximate score).
pub fn dot_high(query: &[f32], high: &[u16]) -> f32 {
    let (query_lanes, query_rest) = query.as_chunks::<LANES>();
    let (high_lanes, high_rest) = high.as_chunks::<LANES>();
    let mut sums = [0.0f32; LANES];
    for (q, h) in query_lanes.iter().zip(high_lanes) {
        for lane in 0..LANES {
            sums[lane] += q[lane] * widen(h[lane]);
        }
    }
    let tail: f32 = query_rest
        .iter()
        .zip(high_rest)
        .map(|(q, h)| q * widen(*h))
        .sum();
    sums.iter().sum::<f32>() + tail
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

fn widen(high: u16) -> f32 {
    f32::from_bits(u32::from(high) << 16)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn rows_come_back_bit_for_bit(rows in prop::collection::vec(prop::collection::vec(any::<f32>(), 5), 1..20)) {
            let mut planes = Planes::default();
            for row in &rows {
                planes.push_row(row);
            }
            let mut out = [0.0f32; 5];
            for (index, row) in rows.iter().enumerate() {
                planes.read_row(index, &mut out);
                let bits = |values: &[f32]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                prop_assert_eq!(bits(&out), bits(row));
            }
        }

        #[test]
        fn the_approximate_score_is_within_the_bound(
            pairs in prop::collection::vec((-1.0f32..1.0, -1.0f32..1.0), 1..400),
        ) {
            let (q, x): (Vec<f32>, Vec<f32>) = pairs.into_iter().unzip();
            let unit = |v: &[f32]| {
                let norm = dot(v, v).sqrt();
                v.iter().map(|x| x / norm).collect::<Vec<f32>>()
            };
            prop_assume!(dot(&q, &q) > 1e-6 && dot(&x, &x) > 1e-6);
            let (q, x) = (unit(&q), unit(&x));
            let mut planes = Planes::default();
            planes.push_row(&x);
            let approximate = dot_high(&q, planes.high());
            prop_assert!((approximate - dot(&q, &x)).abs() <= APPROXIMATION_ERROR);
        }
    }
}
