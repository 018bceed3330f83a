//! The other kind of first pass, measured beside the index's sign codes: every value
//! as an 8-bit integer (one scale per row), the rows with the best approximate scores
//! re-scored exactly. A quarter of the f32 bytes per row where sign codes take a 32nd.

use bor::knowledge::index::{dot, normalised};

pub struct Int8Index {
    dimension: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
    vectors: Vec<f32>,
}

impl Int8Index {
    pub fn build(rows: &[Vec<f32>]) -> Int8Index {
        let dimension = rows.first().map_or(0, Vec::len);
        let mut index = Int8Index {
            dimension,
            codes: Vec::with_capacity(rows.len() * dimension),
            scales: Vec::with_capacity(rows.len()),
            vectors: Vec::with_capacity(rows.len() * dimension),
        };
        for row in rows {
            let unit = normalised(row).unwrap_or_else(|| vec![0.0; dimension]);
            let (code, scale) = quantise(&unit);
            index.codes.extend(code);
            index.scales.push(scale);
            index.vectors.extend(unit);
        }
        index
    }

    /// Chunk ids (row numbers) of the top `k`, from `candidates` approximate best.
    pub fn search(&self, query: &[f32], k: usize, candidates: usize, parts: usize) -> Vec<i64> {
        let Some(query) = normalised(query) else {
            return Vec::new();
        };
        let (code, query_scale) = quantise(&query);
        let rows = self.scales.len();
        let mut approximate = vec![0.0f32; rows];
        let chunk_rows = rows.div_ceil(parts.max(1)).max(1);
        std::thread::scope(|scope| {
            for (part, out) in approximate.chunks_mut(chunk_rows).enumerate() {
                let code = &code;
                scope.spawn(move || {
                    let first = part * chunk_rows;
                    for (offset, score) in out.iter_mut().enumerate() {
                        let row = first + offset;
                        let values = &self.codes[row * self.dimension..(row + 1) * self.dimension];
                        let sum: i32 = values
                            .iter()
                            .zip(code)
                            .map(|(a, b)| i32::from(*a) * i32::from(*b))
                            .sum();
                        *score = sum as f32 * self.scales[row] * query_scale;
                    }
                });
            }
        });
        let mut order: Vec<usize> = (0..rows).collect();
        let wanted = candidates.min(rows);
        if wanted < rows {
            order
                .select_nth_unstable_by(wanted, |a, b| approximate[*b].total_cmp(&approximate[*a]));
            order.truncate(wanted);
        }
        let mut exact: Vec<(f32, usize)> = order
            .into_iter()
            .map(|row| {
                let vector = &self.vectors[row * self.dimension..(row + 1) * self.dimension];
                (dot(&query, vector), row)
            })
            .collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        exact
            .into_iter()
            .take(k)
            .map(|(_, row)| row as i64)
            .collect()
    }
}

/// `vector` as integers of -127..=127 and the scale that gives the values back.
fn quantise(vector: &[f32]) -> (Vec<i8>, f32) {
    let largest = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let scale = if largest > 0.0 { largest / 127.0 } else { 1.0 };
    let code = vector.iter().map(|x| (x / scale).round() as i8).collect();
    (code, scale)
}
