//! The measures of `bor eval`, as BEIR computes them (through pytrec_eval for nDCG and
//! recall, its own code for MRR), for one query: `ranked` is the retrieved corpus ids,
//! best first, each once; `judged` the query's relevance judgements (corpus id → grade).
//! A grade above 0 is relevant.
//!
//! - nDCG@k: the gain of the document at rank r (from 1) is its grade, discounted by
//!   log2(r + 1); divided by the same sum over the judgements sorted by grade (the
//!   ideal ranking); 0 when nothing is relevant.
//! - Recall@k: the share of the relevant documents in the top k.
//! - MRR@k: 1 / the rank of the first relevant document in the top k, else 0.

use std::collections::HashMap;

/// A query's relevance judgements: corpus id → grade.
pub type Judgements = HashMap<String, i32>;

/// The four measures of one query, or their means over many.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Measures {
    pub ndcg_at_10: f64,
    pub recall_at_10: f64,
    pub recall_at_5: f64,
    pub mrr_at_10: f64,
}

impl Measures {
    pub fn of(ranked: &[String], judged: &Judgements) -> Measures {
        Measures {
            ndcg_at_10: ndcg_at(10, ranked, judged),
            recall_at_10: recall_at(10, ranked, judged),
            recall_at_5: recall_at(5, ranked, judged),
            mrr_at_10: reciprocal_rank_at(10, ranked, judged),
        }
    }

    /// The mean of each measure (all 0 for no queries).
    pub fn mean(all: &[Measures]) -> Measures {
        if all.is_empty() {
            return Measures::default();
        }
        let n = all.len() as f64;
        let sum = |measure: fn(&Measures) -> f64| all.iter().map(measure).sum::<f64>() / n;
        Measures {
            ndcg_at_10: sum(|m| m.ndcg_at_10),
            recall_at_10: sum(|m| m.recall_at_10),
            recall_at_5: sum(|m| m.recall_at_5),
            mrr_at_10: sum(|m| m.mrr_at_10),
        }
    }
}

fn grade(judged: &Judgements, id: &str) -> i32 {
    judged.get(id).copied().unwrap_or(0).max(0)
}

fn discounted(rank_from_0: usize, gain: i32) -> f64 {
    f64::from(gain) / (rank_from_0 as f64 + 2.0).log2()
}

pub fn ndcg_at(k: usize, ranked: &[String], judged: &Judgements) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(rank, id)| discounted(rank, grade(judged, id)))
        .sum();
    let mut ideal: Vec<i32> = judged.values().map(|grade| (*grade).max(0)).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let ideal_dcg: f64 = ideal
        .into_iter()
        .take(k)
        .enumerate()
        .map(|(rank, gain)| discounted(rank, gain))
        .sum();
    if ideal_dcg > 0.0 {
        dcg / ideal_dcg
    } else {
        0.0
    }
}

pub fn recall_at(k: usize, ranked: &[String], judged: &Judgements) -> f64 {
    let relevant = judged.values().filter(|grade| **grade > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = ranked
        .iter()
        .take(k)
        .filter(|id| grade(judged, id) > 0)
        .count();
    found as f64 / relevant as f64
}

pub fn reciprocal_rank_at(k: usize, ranked: &[String], judged: &Judgements) -> f64 {
    ranked
        .iter()
        .take(k)
        .position(|id| grade(judged, id) > 0)
        .map_or(0.0, |rank| 1.0 / (rank as f64 + 1.0))
}

/// The nearest-rank percentile `p` (0–100) of `values` (sorted here); 0 for none.
pub fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|id| (*id).to_owned()).collect()
    }

    fn judged(grades: &[(&str, i32)]) -> Judgements {
        grades
            .iter()
            .map(|(id, grade)| ((*id).to_owned(), *grade))
            .collect()
    }

    fn close(actual: f64, expected: f64) {
        assert!((actual - expected).abs() < 1e-12, "{actual} vs {expected}");
    }

    #[test]
    fn graded_ndcg_is_exact_against_a_hand_computed_ranking() {
        // Ranked: x (0), b (1), a (2), c (3: not retrieved in the top 3).
        // DCG@3 = 0/log2(2) + 1/log2(3) + 2/log2(4) = 0.630930 + 1.0
        // Ideal: a (2), b (1), c (1): 2/1 + 1/log2(3) + 1/log2(4) = 2 + 0.630930 + 0.5
        let grades = judged(&[("a", 2), ("b", 1), ("c", 1)]);
        let ranked = ids(&["x", "b", "a", "y", "c"]);
        let dcg3 = 1.0 / 3f64.log2() + 2.0 / 2.0;
        let ideal3 = 2.0 + 1.0 / 3f64.log2() + 0.5;
        close(ndcg_at(3, &ranked, &grades), dcg3 / ideal3);
        // @10: c at rank 5 adds 1/log2(6).
        let dcg10 = dcg3 + 1.0 / 6f64.log2();
        close(ndcg_at(10, &ranked, &grades), dcg10 / ideal3);
        close(ndcg_at(10, &ids(&["a", "b", "c"]), &grades), 1.0);
        close(ndcg_at(10, &ids(&["z"]), &grades), 0.0);
    }

    #[test]
    fn recall_and_reciprocal_rank_count_the_relevant_only() {
        let grades = judged(&[("a", 2), ("b", 1), ("c", 1), ("n", 0)]);
        let ranked = ids(&["n", "x", "b", "y", "z", "a", "c"]);
        close(recall_at(5, &ranked, &grades), 1.0 / 3.0);
        close(recall_at(10, &ranked, &grades), 1.0);
        close(reciprocal_rank_at(10, &ranked, &grades), 1.0 / 3.0);
        close(reciprocal_rank_at(2, &ranked, &grades), 0.0);
        // A judgement of 0 is no relevance, and adds nothing to the ideal.
        close(ndcg_at(1, &ids(&["n"]), &grades), 0.0);
        close(recall_at(10, &ranked, &judged(&[("n", 0)])), 0.0);
    }

    #[test]
    fn means_are_over_the_queries() {
        let grades = judged(&[("a", 1)]);
        let hit = Measures::of(&ids(&["a"]), &grades);
        let second = Measures::of(&ids(&["x", "a"]), &grades);
        assert_eq!(hit.mrr_at_10, 1.0);
        let mean = Measures::mean(&[hit, second]);
        close(mean.mrr_at_10, 0.75);
        close(mean.recall_at_5, 1.0);
        close(mean.ndcg_at_10, (1.0 + 1.0 / 3f64.log2()) / 2.0);
        assert_eq!(Measures::mean(&[]), Measures::default());
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut values: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        assert_eq!(percentile(&mut values, 50.0), 50.0);
        assert_eq!(percentile(&mut values, 99.0), 99.0);
        assert_eq!(percentile(&mut [7.0], 99.0), 7.0);
        assert_eq!(percentile(&mut [], 50.0), 0.0);
    }
}
