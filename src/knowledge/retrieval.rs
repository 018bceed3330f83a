//! Hybrid retrieval (SPEC §5 step 2): the vector index's cosine ranking fused with
//! PostgreSQL's full-text ranking by reciprocal rank fusion (`fusion.rs`). See
//! `docs/RETRIEVAL.md`.

use std::collections::HashMap;

use bor_actors::knowledge::{ChunkHit, Retrieval};

use super::fusion;
use super::index::{dot, normalised};
use super::live_index::LiveIndex;
use crate::db::chunks;
use crate::db::{DbError, DbPool};

/// How many chunks each signal ranks for fusion: the top of the cosine ranking and
/// the top of the full-text ranking.
pub const RANKED_PER_SIGNAL: usize = 50;

pub async fn retrieve(
    pool: &DbPool,
    index: &LiveIndex,
    query: &str,
    embedding: Vec<f32>,
    top_k: usize,
) -> Result<Retrieval, DbError> {
    let dimension = embedding.len();
    let ranked = RANKED_PER_SIGNAL.max(top_k);
    let text_search = async {
        let mut conn = pool.get().await?;
        chunks::full_text_matches(&mut conn, query, dimension, ranked as i64).await
    };
    let (by_cosine, by_text) =
        futures_util::join!(index.search(embedding.clone(), ranked), text_search);
    let by_text = by_text?;

    let cosine_ids: Vec<i64> = by_cosine.iter().map(|hit| hit.chunk_id).collect();
    let fused = fusion::fuse(&cosine_ids, &by_text, top_k);
    let mut rows: HashMap<i64, chunks::ChunkWithTitle> = {
        let mut conn = pool.get().await?;
        chunks::with_titles(&mut conn, &fused)
            .await?
            .into_iter()
            .map(|row| (row.id, row))
            .collect()
    };
    let cosine_scores: HashMap<i64, f32> = by_cosine
        .iter()
        .map(|hit| (hit.chunk_id, hit.score))
        .collect();
    let query_unit = normalised(&embedding);
    let hits = fused
        .into_iter()
        .filter_map(|chunk_id| {
            // Gone since the search (deleted meanwhile): left out.
            let row = rows.remove(&chunk_id)?;
            // Full-text-only matches are scored here, exactly as the index scores.
            let score = cosine_scores.get(&chunk_id).copied().or_else(|| {
                let chunk_unit = normalised(&row.embedding)?;
                Some(dot(query_unit.as_deref()?, &chunk_unit))
            })?;
            Some(ChunkHit {
                document_id: row.document_id,
                title: row.title,
                chunk_id,
                score,
                text: row.text,
            })
        })
        .collect();
    Ok(Retrieval {
        hits,
        best_cosine: by_cosine.first().map(|hit| hit.score),
        text_match: !by_text.is_empty(),
    })
}
