//! The knowledge base over PostgreSQL: the `KnowledgeBase` the turns use.
//!
//! Retrieval is hybrid: every chunk's cosine similarity to the query embedding
//! (computed here, the embeddings being `real[]`) fused with full-text rank
//! (`websearch_to_tsquery` over the generated `tsv` column) by reciprocal rank fusion.

mod chunking;
mod fusion;
pub mod index;

use std::collections::HashMap;

use bor_actors::knowledge::{
    ChunkHit, DocumentRef, DocumentText, KnowledgeBase, KnowledgeError, READ_DOCUMENT_MAX_CHARS,
    Retrieval,
};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;

use crate::db::schema::{chunks, documents};
use crate::db::{DbError, DbPool};

/// Full-text matches considered for fusion.
const TEXT_CANDIDATES: i64 = 50;

#[derive(Clone)]
pub struct PgKnowledge {
    pool: DbPool,
}

impl PgKnowledge {
    pub fn new(pool: DbPool) -> Self {
        Self { pool }
    }

    async fn retrieve_now(
        &self,
        query: &str,
        embedding: &[f32],
        top_k: usize,
    ) -> Result<Retrieval, DbError> {
        let mut conn = self.pool.get().await?;
        let rows: Vec<(i64, i64, String, String, Vec<f32>)> = chunks::table
            .inner_join(documents::table)
            .select((
                chunks::id,
                chunks::document_id,
                documents::title,
                chunks::text,
                chunks::embedding,
            ))
            .load(&mut conn)
            .await?;
        let text_ids: Vec<i64> = diesel::sql_query(
            "SELECT c.id FROM chunks c, websearch_to_tsquery('english', $1) AS q \
             WHERE c.tsv @@ q ORDER BY ts_rank_cd(c.tsv, q) DESC, c.id LIMIT $2",
        )
        .bind::<Text, _>(query)
        .bind::<BigInt, _>(TEXT_CANDIDATES)
        .load::<ChunkId>(&mut conn)
        .await?
        .into_iter()
        .map(|row| row.id)
        .collect();

        let mut hits: HashMap<i64, ChunkHit> = HashMap::with_capacity(rows.len());
        let mut by_cosine: Vec<(i64, f32)> = Vec::with_capacity(rows.len());
        for (chunk_id, document_id, title, text, vector) in rows {
            // Vectors of another dimension (an older embedding model) cannot be compared.
            let Some(score) = cosine(embedding, &vector) else {
                continue;
            };
            by_cosine.push((chunk_id, score));
            hits.insert(
                chunk_id,
                ChunkHit {
                    document_id,
                    title,
                    chunk_id,
                    score,
                    text,
                },
            );
        }
        by_cosine.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let best_cosine = by_cosine.iter().map(|(_, score)| *score).next();
        let text_ids: Vec<i64> = text_ids
            .into_iter()
            .filter(|id| hits.contains_key(id))
            .collect();
        let cosine_ids: Vec<i64> = by_cosine.iter().map(|(id, _)| *id).collect();
        let fused = fusion::fuse(&cosine_ids, &text_ids, top_k);
        Ok(Retrieval {
            hits: fused
                .into_iter()
                .filter_map(|id| hits.remove(&id))
                .collect(),
            best_cosine,
            text_match: !text_ids.is_empty(),
        })
    }
}

#[derive(QueryableByName)]
struct ChunkId {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// Cosine similarity; `None` when the dimensions differ or a vector is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> Option<f32> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let (mut dot, mut norm_a, mut norm_b) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        norm_a += x * x;
        norm_b += y * y;
    }
    let norms = (norm_a * norm_b).sqrt();
    (norms > 0.0).then(|| dot / norms)
}

fn knowledge_error(err: DbError) -> KnowledgeError {
    tracing::warn!(error = %err, "knowledge base query failed");
    KnowledgeError(format!("the knowledge base is unavailable: {err}"))
}

impl KnowledgeBase for PgKnowledge {
    fn retrieve(
        &self,
        query: String,
        embedding: Vec<f32>,
        top_k: usize,
    ) -> BoxFuture<'static, Result<Retrieval, KnowledgeError>> {
        let this = self.clone();
        Box::pin(async move {
            this.retrieve_now(&query, &embedding, top_k)
                .await
                .map_err(knowledge_error)
        })
    }

    fn read_document(
        &self,
        document_id: i64,
    ) -> BoxFuture<'static, Result<Option<DocumentText>, KnowledgeError>> {
        let pool = self.pool.clone();
        Box::pin(async move {
            let mut conn = pool.get().await.map_err(knowledge_error)?;
            let found: Option<(i64, String, String)> = documents::table
                .find(document_id)
                .select((documents::id, documents::title, documents::content))
                .first(&mut conn)
                .await
                .optional()
                .map_err(|err| knowledge_error(err.into()))?;
            Ok(found.map(|(document_id, title, content)| {
                let (text, truncated) = match content.char_indices().nth(READ_DOCUMENT_MAX_CHARS) {
                    Some((end, _)) => (content[..end].to_owned(), true),
                    None => (content, false),
                };
                DocumentText {
                    document_id,
                    title,
                    text,
                    truncated,
                }
            }))
        })
    }

    fn list_documents(&self) -> BoxFuture<'static, Result<Vec<DocumentRef>, KnowledgeError>> {
        let pool = self.pool.clone();
        Box::pin(async move {
            let mut conn = pool.get().await.map_err(knowledge_error)?;
            let rows: Vec<(i64, String)> = documents::table
                .select((documents::id, documents::title))
                .order(documents::id)
                .load(&mut conn)
                .await
                .map_err(|err| knowledge_error(err.into()))?;
            Ok(rows
                .into_iter()
                .map(|(id, title)| DocumentRef { id, title })
                .collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_vectors() {
        assert_eq!(cosine(&[1.0, 0.0], &[1.0, 0.0]), Some(1.0));
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 2.0]), Some(0.0));
        assert!((cosine(&[1.0, 1.0], &[2.0, 2.0]).unwrap() - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), None, "dimensions differ");
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), None, "zero vector");
    }
}
