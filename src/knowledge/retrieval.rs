//! Hybrid retrieval (docs/PROTOCOL.md, "Retrieval"), all in memory: the vector index's
//! cosine ranking fused with the full-text index's BM25 ranking by their normalised
//! scores (`fusion.rs`), the hits filled in from the chunk store. See
//! `docs/RETRIEVAL.md`.
//!
//! [`rank`] keeps each signal's ranking beside the fused one: a turn takes the fused
//! top (through [`retrieve`]), `POST /api/search` shows all of them and `bor eval`
//! measures each.

use std::collections::HashMap;
use std::sync::Arc;

use bor_actors::knowledge::{ChunkHit, Retrieval, Signals};

use super::full_text::FullTextIndex;
use super::fusion;
use super::index::{CollectionFilter, VectorIndex, normalised};
use super::store::ChunkStore;

/// One consistent copy of the knowledge base, as retrieval reads it (the live index
/// keeps it in step with the database).
pub struct Memory {
    pub vectors: VectorIndex,
    pub chunks: ChunkStore,
    /// Updated through `&self` (it has a writer of its own), so outside the lock.
    pub text: Arc<FullTextIndex>,
}

/// How many chunks each signal ranks for fusion: the top of the cosine ranking and
/// the top of the full-text ranking.
pub const RANKED_PER_SIGNAL: usize = 50;

/// A chunk in one ranking, with that ranking's score (cosine similarity, BM25 or the
/// fused score).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankedChunk {
    pub chunk_id: i64,
    pub document_id: i64,
    pub score: f64,
}

/// Each signal's ranking of a question and their fusion, best first; chunks gone from
/// the store since the search (a document replaced meanwhile) are left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rankings {
    pub by_cosine: Vec<RankedChunk>,
    pub by_text: Vec<RankedChunk>,
    pub fused: Vec<RankedChunk>,
    /// The best cosine similarity over the chunks searched.
    pub best_cosine: Option<f32>,
    /// Some chunk holds every word of the question.
    pub text_match: bool,
}

/// Ranks the best `per_signal` chunks of each signal among the chunks of the
/// collections of `filter` (`None`: of all) and fuses them all.
pub fn rank(
    memory: &Memory,
    query: &str,
    embedding: &[f32],
    per_signal: usize,
    filter: Option<&CollectionFilter>,
) -> Rankings {
    let by_cosine = memory.vectors.search(embedding, per_signal, filter);
    let by_text = memory.text.search(query, per_signal, filter).unwrap_or_else(|error| {
        tracing::warn!(error = %bor_actors::error_chain(&error), "the full-text search failed; ranking by cosine alone");
        Default::default()
    });
    let cosine_scores: Vec<(i64, f64)> = by_cosine
        .iter()
        .map(|hit| (hit.chunk_id, f64::from(hit.score)))
        .collect();
    let text_scores: Vec<(i64, f64)> = by_text
        .ranked
        .iter()
        .map(|(id, score)| (*id, f64::from(*score)))
        .collect();
    let fused = fusion::fuse(&cosine_scores, &text_scores, usize::MAX);
    let stored = |(chunk_id, score): (i64, f64)| {
        let (chunk, _) = memory.chunks.get(chunk_id)?;
        Some(RankedChunk {
            chunk_id,
            document_id: chunk.document_id,
            score,
        })
    };
    Rankings {
        best_cosine: by_cosine.first().map(|hit| hit.score),
        by_cosine: cosine_scores.into_iter().filter_map(stored).collect(),
        by_text: text_scores.into_iter().filter_map(stored).collect(),
        fused: fused.into_iter().filter_map(stored).collect(),
        text_match: by_text.matched,
    }
}

/// What a turn retrieves: the fused top `top_k` of the collections of `filter`.
pub fn retrieve(
    memory: &Memory,
    query: &str,
    embedding: &[f32],
    top_k: usize,
    filter: Option<&CollectionFilter>,
) -> Retrieval {
    let rankings = rank(
        memory,
        query,
        embedding,
        RANKED_PER_SIGNAL.max(top_k),
        filter,
    );
    retrieval_of(memory, &rankings, embedding, top_k)
}

/// The fused top `top_k` of `rankings` as hits, each scored by its cosine similarity.
pub fn retrieval_of(
    memory: &Memory,
    rankings: &Rankings,
    embedding: &[f32],
    top_k: usize,
) -> Retrieval {
    let cosine_scores: HashMap<i64, f64> = rankings
        .by_cosine
        .iter()
        .map(|hit| (hit.chunk_id, hit.score))
        .collect();
    let text_scores: HashMap<i64, f64> = rankings
        .by_text
        .iter()
        .map(|hit| (hit.chunk_id, hit.score))
        .collect();
    let query_unit = normalised(embedding);
    let hits = rankings
        .fused
        .iter()
        .take(top_k)
        .filter_map(|fused| {
            let (chunk, title) = memory.chunks.get(fused.chunk_id)?;
            // Full-text-only matches are scored here, exactly as the index scores.
            let score = cosine_scores
                .get(&fused.chunk_id)
                .map(|score| *score as f32)
                .or_else(|| {
                    memory.vectors.score_of(
                        chunk.document_id,
                        fused.chunk_id,
                        query_unit.as_deref()?,
                    )
                })?;
            Some(ChunkHit {
                document_id: chunk.document_id,
                title: title.to_owned(),
                chunk_id: fused.chunk_id,
                score,
                text: chunk.text.to_string(),
                heading: chunk.heading.to_string(),
                page: chunk.page,
                signals: Signals {
                    vector: Some(score),
                    full_text: text_scores.get(&fused.chunk_id).map(|score| *score as f32),
                    fused: Some(fused.score as f32),
                    rerank: None,
                },
            })
        })
        .collect();
    Retrieval {
        hits,
        best_cosine: rankings.best_cosine,
        text_match: rankings.text_match,
    }
}
