//! Reciprocal rank fusion of the two retrieval signals: cosine similarity of the
//! embeddings and PostgreSQL full-text rank. Each list contributes `1 / (K + rank)`
//! for every chunk it ranks (rank from 1); the fused order is by the sum. Small local
//! embedding models are weakly semantic, so full text carries relevance where vectors
//! cannot, and vectors find paraphrases that full text misses.

use std::collections::HashMap;

/// The usual constant of reciprocal rank fusion: damps the weight of the top ranks.
pub const RRF_K: f64 = 60.0;

/// Chunk ids in fused order with their fused scores, best first; ties keep the cosine
/// order.
pub fn fuse(by_cosine: &[i64], by_text: &[i64], limit: usize) -> Vec<(i64, f64)> {
    let mut scores: HashMap<i64, (f64, usize)> = HashMap::new();
    for (list_index, list) in [by_cosine, by_text].into_iter().enumerate() {
        for (rank, id) in list.iter().enumerate() {
            let contribution = 1.0 / (RRF_K + rank as f64 + 1.0);
            let entry = scores.entry(*id).or_insert((0.0, usize::MAX));
            entry.0 += contribution;
            if list_index == 0 {
                entry.1 = rank;
            }
        }
    }
    let mut fused: Vec<(i64, f64, usize)> = scores
        .into_iter()
        .map(|(id, (score, cosine_rank))| (id, score, cosine_rank))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)));
    fused
        .into_iter()
        .take(limit)
        .map(|(id, score, _)| (id, score))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(fused: &[(i64, f64)]) -> Vec<i64> {
        fused.iter().map(|(id, _)| *id).collect()
    }

    #[test]
    fn a_chunk_ranked_by_both_signals_wins() {
        let fused = fuse(&[1, 2, 3], &[3, 4], 10);
        assert_eq!(fused[0], (3, 1.0 / 63.0 + 1.0 / 61.0), "{fused:?}");
        assert_eq!(ids(&fused), vec![3, 1, 2, 4], "ties keep the cosine order");
    }

    #[test]
    fn cosine_order_is_kept_without_text_matches() {
        assert_eq!(ids(&fuse(&[5, 4, 3, 2], &[], 3)), vec![5, 4, 3]);
    }

    #[test]
    fn text_only_matches_are_included() {
        assert_eq!(ids(&fuse(&[], &[9, 8], 5)), vec![9, 8]);
    }
}
