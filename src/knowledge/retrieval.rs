//! Hybrid retrieval (docs/PROTOCOL.md, "Retrieval"), all in memory: the vector index's
//! cosine ranking fused with the full-text index's BM25 ranking by reciprocal rank
//! fusion (`fusion.rs`), the hits filled in from the chunk store. See
//! `docs/RETRIEVAL.md`.

use std::collections::HashMap;

use bor_actors::knowledge::{ChunkHit, Retrieval};

use super::fusion;
use super::index::normalised;
use super::live_index::Memory;

/// How many chunks each signal ranks for fusion: the top of the cosine ranking and
/// the top of the full-text ranking.
pub const RANKED_PER_SIGNAL: usize = 50;

pub fn retrieve(memory: &Memory, query: &str, embedding: &[f32], top_k: usize) -> Retrieval {
    let ranked = RANKED_PER_SIGNAL.max(top_k);
    let by_cosine = memory.vectors.search(embedding, ranked);
    let by_text = memory.text.search(query, ranked).unwrap_or_else(|error| {
        tracing::warn!(error = %bor_actors::error_chain(&error), "the full-text search failed; ranking by cosine alone");
        Default::default()
    });

    let cosine_ids: Vec<i64> = by_cosine.iter().map(|hit| hit.chunk_id).collect();
    let fused = fusion::fuse(&cosine_ids, &by_text.ranked, top_k);
    let cosine_scores: HashMap<i64, f32> = by_cosine
        .iter()
        .map(|hit| (hit.chunk_id, hit.score))
        .collect();
    let query_unit = normalised(embedding);
    let hits = fused
        .into_iter()
        .filter_map(|chunk_id| {
            // Gone since the search (a document replaced meanwhile): left out.
            let (chunk, title) = memory.chunks.get(chunk_id)?;
            // Full-text-only matches are scored here, exactly as the index scores.
            let score = cosine_scores.get(&chunk_id).copied().or_else(|| {
                memory
                    .vectors
                    .score_of(chunk.document_id, chunk_id, query_unit.as_deref()?)
            })?;
            Some(ChunkHit {
                document_id: chunk.document_id,
                title: title.to_owned(),
                chunk_id,
                score,
                text: chunk.text.to_string(),
                heading: chunk.heading.to_string(),
                page: chunk.page,
            })
        })
        .collect();
    Retrieval {
        hits,
        best_cosine: by_cosine.first().map(|hit| hit.score),
        text_match: by_text.matched,
    }
}
