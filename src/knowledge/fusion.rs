//! Fusion of the two retrieval signals, cosine similarity of the embeddings and the
//! full-text index's BM25, by their scores: each signal's scores are min-max normalised
//! over its own ranked list (its best becomes 1, its last 0), and a chunk's fused score
//! is the mean of its two normalised scores, 0 for a signal that did not rank it. Small
//! local embedding models are weakly semantic, so full text carries relevance where
//! vectors cannot, and vectors find paraphrases that full text misses; unlike reciprocal
//! rank fusion, the scores keep how far apart two chunks are in each signal, not only
//! their order (docs/RETRIEVAL.md, "Hybrid ranking", has the measurements).

use std::collections::HashMap;

/// Chunk ids in fused order with their fused scores (0 to 1), best first; ties keep
/// the cosine order, then the lower id. Each list is `(chunk id, score)`, best first.
pub fn fuse(by_cosine: &[(i64, f64)], by_text: &[(i64, f64)], limit: usize) -> Vec<(i64, f64)> {
    // Per chunk: the fused score so far and its place in the cosine ranking.
    let mut fused: HashMap<i64, (f64, usize)> = HashMap::new();
    for (signal, list) in [by_cosine, by_text].into_iter().enumerate() {
        for (rank, (id, normalised)) in min_max_normalised(list).enumerate() {
            let entry = fused.entry(id).or_insert((0.0, usize::MAX));
            entry.0 += normalised / 2.0;
            if signal == 0 {
                entry.1 = rank;
            }
        }
    }
    let mut fused: Vec<(i64, (f64, usize))> = fused.into_iter().collect();
    fused.sort_by(|(a, (a_score, a_rank)), (b, (b_score, b_rank))| {
        b_score
            .total_cmp(a_score)
            .then(a_rank.cmp(b_rank))
            .then(a.cmp(b))
    });
    fused
        .into_iter()
        .take(limit)
        .map(|(id, (score, _))| (id, score))
        .collect()
}

/// Each score mapped to `(score - lowest) / (highest - lowest)` of the list; every one
/// to 1 when they are all equal (a list of one: its only chunk is its best). A score
/// that is not finite counts as the lowest.
fn min_max_normalised(list: &[(i64, f64)]) -> impl Iterator<Item = (i64, f64)> + '_ {
    let finite = || {
        list.iter()
            .map(|(_, score)| *score)
            .filter(|s| s.is_finite())
    };
    let lowest = finite().fold(f64::INFINITY, f64::min);
    let highest = finite().fold(f64::NEG_INFINITY, f64::max);
    let spread = highest - lowest;
    list.iter().map(move |(id, score)| {
        let normalised = if !score.is_finite() {
            0.0
        } else if spread > 0.0 {
            (score - lowest) / spread
        } else {
            1.0
        };
        (*id, normalised)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(fused: &[(i64, f64)]) -> Vec<i64> {
        fused.iter().map(|(id, _)| *id).collect()
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn scores_are_the_mean_of_each_signals_min_max_normalised_score() {
        let fused = fuse(
            &[(1, 0.8), (2, 0.6), (3, 0.4)],
            &[(3, 12.0), (4, 6.0), (5, 2.0)],
            10,
        );
        assert_eq!(ids(&fused), vec![1, 3, 2, 4, 5], "{fused:?}");
        close(fused[0].1, 0.5); // cosine 1, text 0 (not ranked)
        close(fused[1].1, 0.5); // cosine 0, text 1: the tie keeps the cosine order
        close(fused[2].1, 0.25);
        close(fused[3].1, 0.2);
        close(fused[4].1, 0.0);
    }

    #[test]
    fn the_distance_between_scores_counts_not_only_their_order() {
        // Reciprocal rank fusion would put 2 first (first and second against 1's first
        // and third); here chunk 1, far ahead in cosine and a hair behind in text, wins.
        let fused = fuse(
            &[(1, 0.9), (2, 0.3), (3, 0.29), (4, 0.1)],
            &[(2, 10.0), (3, 9.95), (1, 9.9), (4, 0.0)],
            10,
        );
        assert_eq!(ids(&fused), vec![1, 2, 3, 4], "{fused:?}");
        close(fused[0].1, (1.0 + 0.99) / 2.0);
        close(fused[1].1, (0.25 + 1.0) / 2.0);
    }

    #[test]
    fn a_list_of_equal_scores_gives_each_chunk_the_best_score() {
        let fused = fuse(&[(7, 0.3)], &[(8, 4.0), (9, 4.0)], 10);
        assert_eq!(ids(&fused), vec![7, 8, 9]);
        assert!(fused.iter().all(|(_, score)| *score == 0.5), "{fused:?}");
    }

    #[test]
    fn cosine_order_is_kept_without_text_matches() {
        let fused = fuse(&[(5, 0.9), (4, 0.7), (3, 0.7), (2, 0.1)], &[], 3);
        assert_eq!(ids(&fused), vec![5, 4, 3]);
    }

    #[test]
    fn text_only_matches_are_included() {
        assert_eq!(ids(&fuse(&[], &[(9, 3.0), (8, 1.0)], 5)), vec![9, 8]);
    }

    #[test]
    fn a_score_that_is_not_a_number_scales_to_0_and_spoils_no_other() {
        let fused = fuse(&[(1, f64::NAN), (2, 0.5), (3, 0.25)], &[], 10);
        assert_eq!(ids(&fused), vec![2, 1, 3], "{fused:?}");
        close(fused[0].1, 0.5);
        close(fused[2].1, 0.0);
        let fused = fuse(&[(1, 0.5)], &[(1, f64::NAN), (2, 3.0), (3, 1.0)], 10);
        assert_eq!(ids(&fused), vec![1, 2, 3], "{fused:?}");
        close(fused[0].1, 0.5);
        close(fused[1].1, 0.5);
    }
}
