//! Re-ranking (docs/RETRIEVAL.md, "Re-ranking"): a cross-encoder on a server of the
//! `/rerank` shape scores the fused candidates against the query, and its order replaces
//! the fused one. It only reorders: which chunks are candidates, and whether the turn is
//! grounded, stay fusion's. A turn, `POST /api/search` and `bor eval` all re-rank with
//! what is here.

use std::time::Duration;

use crate::knowledge::{ChunkHit, Retrieval};

/// `BOR_RERANK_CANDIDATES` and `BOR_RERANK_TIMEOUT`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RerankSettings {
    /// How many of the fused best are scored; the top `BOR_RETRIEVAL_TOP_K` of them, in
    /// the re-ranked order, reach the model.
    pub candidates: usize,
    /// How long a re-rank may take before the fused order is used instead.
    pub timeout: Duration,
}

/// How many fused chunks to retrieve for a top of `top_k`: the candidates to re-rank
/// when re-ranking is on, else the top itself.
pub fn retrieved(rerank: Option<RerankSettings>, top_k: usize) -> usize {
    rerank.map_or(top_k, |rerank| rerank.candidates.max(top_k))
}

/// The re-ranking to ask for `retrieval`: when re-ranking is on and there is an order to
/// change (more than one candidate).
pub fn to_ask(rerank: Option<RerankSettings>, retrieval: &Retrieval) -> Option<RerankSettings> {
    rerank.filter(|_| retrieval.hits.len() > 1)
}

/// What the cross-encoder reads of a chunk: its document's title, its headings (unless
/// the text opens with them, as a Markdown heading or not) and its text, a line each.
pub fn passage(title: &str, heading: &str, text: &str) -> String {
    let opening = opening_words(text);
    let mut lines: Vec<&str> = Vec::with_capacity(3);
    for line in [title.trim(), heading.trim()] {
        if !line.is_empty() && !opening.starts_with(line) && !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines.push(text);
    lines.join("\n")
}

/// Where a text's words begin, past white space and a Markdown heading's `#` marks: a
/// chunk that opens with `# Teas` opens with the title "Teas".
fn opening_words(text: &str) -> &str {
    text.trim_start().trim_start_matches('#').trim_start()
}

/// What the cross-encoder reads of `hit`.
pub fn passage_of(hit: &ChunkHit) -> String {
    passage(&hit.title, &hit.heading, &hit.text)
}

/// The positions of `scores` from the best score to the worst; equal scores keep their
/// order (the fused one).
pub fn order_by_score(scores: &[f32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    order
}

impl Retrieval {
    /// The best `top_k` hits in the re-ranked order; `scores` has one score per hit.
    /// Scores of another length leave the fused order.
    pub fn reranked(mut self, scores: &[f32], top_k: usize) -> Retrieval {
        if scores.len() == self.hits.len() {
            let mut slots: Vec<Option<ChunkHit>> = self.hits.into_iter().map(Some).collect();
            self.hits = order_by_score(scores)
                .into_iter()
                .filter_map(|position| {
                    let mut hit = slots[position].take()?;
                    hit.signals.rerank = Some(scores[position]);
                    Some(hit)
                })
                .collect();
        }
        self.top(top_k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(chunk_id: i64) -> ChunkHit {
        ChunkHit {
            document_id: chunk_id,
            title: format!("T{chunk_id}"),
            chunk_id,
            score: 0.5,
            text: format!("text {chunk_id}"),
            heading: String::new(),
            page: None,
            signals: Default::default(),
        }
    }

    fn ids(retrieval: &Retrieval) -> Vec<i64> {
        retrieval.hits.iter().map(|hit| hit.chunk_id).collect()
    }

    #[test]
    fn the_best_scores_come_first_and_ties_keep_the_fused_order() {
        let retrieval = Retrieval {
            hits: (1..=4).map(hit).collect(),
            best_cosine: Some(0.5),
            text_match: true,
        };
        let reranked = retrieval.clone().reranked(&[0.1, 0.9, 0.1, 0.5], 3);
        assert_eq!(ids(&reranked), vec![2, 4, 1]);
        let kept: Vec<Option<f32>> = reranked.hits.iter().map(|h| h.signals.rerank).collect();
        assert_eq!(
            kept,
            [Some(0.9), Some(0.5), Some(0.1)],
            "each keeps its score"
        );
        assert_eq!(reranked.best_cosine, Some(0.5));
        assert!(reranked.text_match);
        assert_eq!(ids(&retrieval.clone().reranked(&[1.0], 2)), vec![1, 2]);
        assert_eq!(ids(&retrieval.top(2)), vec![1, 2]);
    }

    #[test]
    fn a_passage_names_its_title_and_heading_once() {
        assert_eq!(
            passage("Teas", "Oolong", "Partly oxidised."),
            "Teas\nOolong\nPartly oxidised."
        );
        assert_eq!(
            passage("Teas", "Teas", "Partly oxidised."),
            "Teas\nPartly oxidised."
        );
        assert_eq!(
            passage("Teas", "", "Teas are dried leaves."),
            "Teas are dried leaves."
        );
        assert_eq!(passage(" ", "", "x"), "x");
    }

    #[test]
    fn a_text_opening_with_a_markdown_heading_opens_with_it() {
        assert_eq!(
            passage("Teas", "", "# Teas\n\nTeas are dried leaves."),
            "# Teas\n\nTeas are dried leaves."
        );
        assert_eq!(
            passage("Teas", "Oolong", "## Oolong\nPartly oxidised."),
            "Teas\n## Oolong\nPartly oxidised."
        );
        assert_eq!(
            passage("Teas", "", "#hashtags are not titles"),
            "Teas\n#hashtags are not titles"
        );
    }
}
