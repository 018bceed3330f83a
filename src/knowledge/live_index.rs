//! The vector index of a running service, kept in step with PostgreSQL: loaded at
//! start-up, updated per document when documents change (by this service directly,
//! and by every instance through `LISTEN`/`NOTIFY`, see `notify.rs`), and reloaded
//! whole on demand, after a lost notification connection, or when the embedding model
//! turns out to give vectors of another dimension.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use futures_util::TryStreamExt;

use super::index::{ChunkVector, IndexStats, ScoredChunk, VectorIndex};
use crate::db::chunks::{self, ChunkEmbedding};
use crate::db::{DbError, DbPool};

pub struct LiveIndex {
    pool: DbPool,
    index: Arc<RwLock<VectorIndex>>,
    /// Held by reloads and per-document updates, so that an update is never applied to
    /// an index that a reload is about to replace.
    writer: tokio::sync::Mutex<()>,
}

impl From<ChunkEmbedding> for ChunkVector {
    fn from(row: ChunkEmbedding) -> ChunkVector {
        ChunkVector {
            chunk_id: row.id,
            document_id: row.document_id,
            embedding: row.embedding,
        }
    }
}

impl LiveIndex {
    /// Loads every chunk; the dimension is the most common one stored.
    pub async fn load(pool: DbPool) -> Result<LiveIndex, DbError> {
        let index = read_all(&pool, None).await?;
        Ok(LiveIndex {
            pool,
            index: Arc::new(RwLock::new(index)),
            writer: tokio::sync::Mutex::new(()),
        })
    }

    /// Replaces the index with a fresh copy of the database, of `dimension` when given
    /// (else the current one, else the most common stored).
    pub async fn reload(&self, dimension: Option<usize>) -> Result<IndexStats, DbError> {
        let _writer = self.writer.lock().await;
        let dimension = dimension.or(self.read().dimension());
        let fresh = read_all(&self.pool, dimension).await?;
        let stats = fresh.stats();
        *self.write() = fresh;
        tracing::info!(
            chunks = stats.chunks,
            documents = stats.documents,
            dimension = ?stats.dimension,
            "vector index loaded"
        );
        if stats.dimension_mismatch > 0 {
            tracing::warn!(
                chunks = stats.dimension_mismatch,
                dimension = ?stats.dimension,
                "chunks embedded with another dimension than the embedding model's are left out of retrieval; re-import their documents"
            );
        }
        Ok(stats)
    }

    /// Makes the index one of `dimension` (the embedding model's, as a response just
    /// showed), reloading it when it held another. An empty vector shows nothing.
    pub async fn ensure_dimension(&self, dimension: usize) -> Result<(), DbError> {
        if dimension == 0 {
            return Ok(());
        }
        let current = self.read().dimension();
        match current {
            Some(held) if held != dimension => {
                tracing::warn!(
                    held,
                    dimension,
                    "the embedding model's dimension changed; reloading the vector index"
                );
                self.reload(Some(dimension)).await.map(|_| ())
            }
            Some(_) => Ok(()),
            None => {
                let _writer = self.writer.lock().await;
                let mut index = self.write();
                if index.dimension().is_none() {
                    *index = VectorIndex::new(Some(dimension));
                }
                Ok(())
            }
        }
    }

    /// Reads the chunks of `document_ids` again (a document without chunks, or gone, is
    /// removed from the index).
    pub async fn refresh_documents(&self, document_ids: &[i64]) -> Result<(), DbError> {
        if document_ids.is_empty() {
            return Ok(());
        }
        let _writer = self.writer.lock().await;
        let rows = {
            let mut conn = self.pool.get().await?;
            chunks::embeddings_of(&mut conn, document_ids).await?
        };
        let mut by_document: std::collections::HashMap<i64, Vec<ChunkVector>> =
            document_ids.iter().map(|id| (*id, Vec::new())).collect();
        for row in rows {
            by_document
                .entry(row.document_id)
                .or_default()
                .push(row.into());
        }
        let mut index = self.write();
        for (document_id, vectors) in by_document {
            let refused = index.replace_document(document_id, vectors);
            if let Some((count, dimension)) = refused.mismatched {
                tracing::warn!(
                    document_id,
                    chunks = count,
                    dimension,
                    expected = ?index.dimension(),
                    "document refused by the vector index: its embeddings have another dimension than the embedding model's; re-import it"
                );
            }
            if refused.unusable > 0 {
                tracing::warn!(
                    document_id,
                    chunks = refused.unusable,
                    "chunks with zero or non-finite embeddings are left out of retrieval"
                );
            }
        }
        Ok(())
    }

    /// The `k` chunks most similar to `query`, searched on a blocking thread (a large
    /// index takes milliseconds).
    pub async fn search(&self, query: Vec<f32>, k: usize) -> Vec<ScoredChunk> {
        let index = Arc::clone(&self.index);
        let search = move || {
            index
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .search(&query, k)
        };
        tokio::task::spawn_blocking(search)
            .await
            .unwrap_or_default()
    }

    pub fn stats(&self) -> IndexStats {
        self.read().stats()
    }

    /// How many chunks of `document_id` the index holds.
    pub fn chunk_count(&self, document_id: i64) -> usize {
        self.read().chunk_count(document_id)
    }

    fn read(&self) -> RwLockReadGuard<'_, VectorIndex> {
        // A poisoned lock still holds an index: searching it beats failing every turn.
        self.index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, VectorIndex> {
        self.index
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Streams every chunk's embedding into a new index.
async fn read_all(pool: &DbPool, dimension: Option<usize>) -> Result<VectorIndex, DbError> {
    let mut conn = pool.get().await?;
    let counts = chunks::dimension_counts(&mut conn).await?;
    let Some(dimension) = dimension.or_else(|| counts.first().map(|(d, _)| *d)) else {
        return Ok(VectorIndex::new(None));
    };
    let rows = counts
        .iter()
        .find(|(d, _)| *d == dimension)
        .map_or(0, |(_, n)| usize::try_from(*n).unwrap_or(0));
    let mut index = VectorIndex::with_capacity(dimension, rows);
    let mut stream = chunks::stream_embeddings(&mut conn).await?;
    while let Some(row) = stream.try_next().await? {
        index.push(row.into());
    }
    Ok(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::chunks::{NewChunk, insert_chunks};
    use crate::db::documents::{NewDocument, insert_document};
    use crate::testing::TestDatabase;

    async fn store(pool: &DbPool, text: &str, embedding: &[f32]) -> i64 {
        let mut conn = pool.get().await.unwrap();
        let id = insert_document(&mut conn, &NewDocument::new(text, None, text))
            .await
            .unwrap();
        let chunk = NewChunk {
            document_id: id,
            ord: 0,
            text,
            embedding,
        };
        insert_chunks(&mut conn, &[chunk]).await.unwrap();
        id
    }

    #[tokio::test]
    async fn a_new_model_dimension_reloads_the_index_for_it() {
        let db = TestDatabase::migrated().await;
        let pool = db.pool();
        let old_a = store(&pool, "old a", &[1.0, 0.0, 0.0]).await;
        store(&pool, "old b", &[0.0, 1.0, 0.0]).await;
        let new = store(&pool, "new", &[0.0, 0.0, 0.0, 1.0]).await;

        let index = LiveIndex::load(pool.clone()).await.unwrap();
        let stats = index.stats();
        assert_eq!(stats.dimension, Some(3), "the most common stored dimension");
        assert_eq!((stats.chunks, stats.dimension_mismatch), (2, 1));
        assert_eq!(
            index.search(vec![1.0, 0.1, 0.0], 1).await[0].document_id,
            old_a
        );

        index.ensure_dimension(0).await.unwrap();
        assert_eq!(
            index.stats().dimension,
            Some(3),
            "an empty vector changes nothing"
        );
        index.ensure_dimension(4).await.unwrap();
        let stats = index.stats();
        assert_eq!(stats.dimension, Some(4));
        assert_eq!((stats.chunks, stats.dimension_mismatch), (1, 2));
        let hits = index.search(vec![0.0, 0.0, 0.5, 1.0], 5).await;
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].document_id, new);

        // Rows deleted behind its back are gone after a refresh of their document.
        let mut conn = pool.get().await.unwrap();
        crate::db::documents::delete_document(&mut conn, new)
            .await
            .unwrap();
        index.refresh_documents(&[new]).await.unwrap();
        assert_eq!(index.stats().chunks, 0);
    }
}
