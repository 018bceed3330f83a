//! The knowledge base in memory, kept in step with PostgreSQL: every chunk's vector
//! (`index.rs`), its text and title (`store.rs`) and its words (`full_text.rs`), so
//! that retrieval needs no database round trip. Loaded at start-up, updated per
//! document when documents change (by this service directly, and by every instance
//! through `LISTEN`/`NOTIFY`, see `notify.rs`), and reloaded whole on demand, after a
//! lost notification connection, or when the embedding model turns out to give
//! vectors of another dimension.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use bor_actors::knowledge::Retrieval;
use futures_util::TryStreamExt;

use super::full_text::{FullTextIndex, searchable_text};
use super::index::{ChunkVector, CollectionFilter, IndexStats, MIN_CANDIDATES, VectorIndex};
use super::retrieval::{self, Memory, Rankings};
use super::store::{ChunkStore, StoredChunk};
use crate::db::chunks::{self, IndexedChunk};
use crate::db::{DbError, DbPool};

/// Rows up to which retrieval runs on the calling thread: the search of such an index
/// takes well under a tenth of a millisecond; larger ones go to a blocking thread.
const INLINE_SEARCH_ROWS: usize = 4 * MIN_CANDIDATES;

/// An empty copy of the knowledge base for vectors of `dimension`.
fn empty_memory(dimension: Option<usize>) -> Result<Memory, DbError> {
    Ok(Memory {
        vectors: VectorIndex::new(dimension),
        chunks: ChunkStore::default(),
        text: Arc::new(FullTextIndex::new().map_err(full_text_error)?),
    })
}

/// Bytes of the in-memory knowledge base, by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUse {
    pub vectors: usize,
    pub chunks: usize,
    pub full_text: usize,
}

pub struct LiveIndex {
    pool: DbPool,
    memory: Arc<RwLock<Memory>>,
    /// Held by reloads and per-document updates, so that an update is never applied to
    /// an index that a reload is about to replace.
    writer: tokio::sync::Mutex<()>,
}

fn vector_of(row: &mut IndexedChunk) -> ChunkVector {
    ChunkVector {
        chunk_id: row.id,
        document_id: row.document_id,
        collection_id: row.collection_id,
        embedding: std::mem::take(&mut row.embedding),
    }
}

fn full_text_error(error: tantivy::TantivyError) -> DbError {
    DbError::FullText(Box::new(error))
}

impl LiveIndex {
    /// Loads every chunk; the dimension is the most common one stored.
    pub async fn load(pool: DbPool) -> Result<LiveIndex, DbError> {
        let memory = read_all(&pool, None).await?;
        Ok(LiveIndex {
            pool,
            memory: Arc::new(RwLock::new(memory)),
            writer: tokio::sync::Mutex::new(()),
        })
    }

    /// Replaces the index with a fresh copy of the database, of `dimension` when given
    /// (else the current one, else the most common stored).
    pub async fn reload(&self, dimension: Option<usize>) -> Result<IndexStats, DbError> {
        let _writer = self.writer.lock().await;
        let dimension = dimension.or(self.read().vectors.dimension());
        let fresh = read_all(&self.pool, dimension).await?;
        let stats = fresh.vectors.stats();
        *self.write() = fresh;
        tracing::info!(
            chunks = stats.chunks,
            documents = stats.documents,
            dimension = ?stats.dimension,
            "knowledge base loaded into memory"
        );
        if stats.dimension_mismatch > 0 {
            tracing::warn!(
                chunks = stats.dimension_mismatch,
                dimension = ?stats.dimension,
                "chunks embedded with another dimension than the embedding model's are left out of retrieval; run `bor reembed`"
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
        let current = self.read().vectors.dimension();
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
                let mut memory = self.write();
                if memory.vectors.dimension().is_none() {
                    memory.vectors = VectorIndex::new(Some(dimension));
                }
                Ok(())
            }
        }
    }

    /// Reads the chunks of `document_ids` again (a document without chunks, or gone, is
    /// removed from memory).
    pub async fn refresh_documents(&self, document_ids: &[i64]) -> Result<(), DbError> {
        if document_ids.is_empty() {
            return Ok(());
        }
        let _writer = self.writer.lock().await;
        let rows = {
            let mut conn = self.pool.get().await?;
            chunks::indexed_of(&mut conn, document_ids).await?
        };
        let mut by_document: HashMap<i64, Vec<IndexedChunk>> =
            document_ids.iter().map(|id| (*id, Vec::new())).collect();
        for row in rows {
            by_document.entry(row.document_id).or_default().push(row);
        }
        // Vectors and texts change together under the lock; the words after it, so that
        // searches do not wait for the full-text commit (a search between the two finds
        // the old words, and leaves out chunks it cannot find in the store).
        let mut indexed: Vec<(i64, i64, i64, String)> = Vec::new();
        let text = {
            let mut memory = self.write();
            for (document_id, mut rows) in by_document {
                let vectors = rows.iter_mut().map(vector_of).collect();
                let refused = memory.vectors.replace_document(document_id, vectors);
                warn_refused(document_id, refused, memory.vectors.dimension());
                let accepted = memory.vectors.accepted(document_id);
                memory.chunks.remove_document(document_id);
                for row in rows {
                    if accepted.contains(&row.id) {
                        memory
                            .chunks
                            .insert(row.id, &row.title, StoredChunk::of_row(&row));
                        indexed.push((row.id, document_id, row.collection_id, searchable(&row)));
                    }
                }
            }
            Arc::clone(&memory.text)
        };
        for document_id in document_ids {
            text.remove_document(*document_id);
        }
        for (chunk_id, document_id, collection_id, words) in &indexed {
            text.add(*chunk_id, *document_id, *collection_id, words)
                .map_err(full_text_error)?;
        }
        text.commit().map_err(full_text_error)
    }

    /// Hybrid retrieval over the memory (see `retrieval.rs`), among the chunks of the
    /// collections of `filter` (`None`: of all).
    pub async fn retrieve(
        &self,
        query: String,
        embedding: Vec<f32>,
        top_k: usize,
        filter: Option<CollectionFilter>,
    ) -> Retrieval {
        self.with_memory(move |memory| {
            retrieval::retrieve(memory, &query, &embedding, top_k, filter.as_ref())
        })
        .await
    }

    /// The retrieval a turn does, with each signal's ranking of the best `per_signal`.
    pub async fn rank(
        &self,
        query: String,
        embedding: Vec<f32>,
        per_signal: usize,
        top_k: usize,
        filter: Option<CollectionFilter>,
    ) -> (Rankings, Retrieval) {
        self.with_memory(move |memory| {
            let rankings = retrieval::rank(memory, &query, &embedding, per_signal, filter.as_ref());
            let hits = retrieval::retrieval_of(memory, &rankings, &embedding, top_k);
            (rankings, hits)
        })
        .await
    }

    /// Runs `search` over the memory: on this thread for a small knowledge base, on a
    /// blocking thread for a large one.
    async fn with_memory<T: Default + Send + 'static>(
        &self,
        search: impl FnOnce(&Memory) -> T + Send + 'static,
    ) -> T {
        if self.read().vectors.stats().chunks <= INLINE_SEARCH_ROWS {
            return search(&self.read());
        }
        let memory = Arc::clone(&self.memory);
        let blocking = move || {
            let memory = memory
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            search(&memory)
        };
        tokio::task::spawn_blocking(blocking)
            .await
            .unwrap_or_default()
    }

    pub fn stats(&self) -> IndexStats {
        self.read().vectors.stats()
    }

    pub fn memory_use(&self) -> MemoryUse {
        let memory = self.read();
        MemoryUse {
            vectors: memory.vectors.stats().memory_bytes,
            chunks: memory.chunks.memory_bytes(),
            full_text: memory.text.memory_bytes(),
        }
    }

    /// How many chunks of `document_id` the index holds.
    pub fn chunk_count(&self, document_id: i64) -> usize {
        self.read().vectors.chunk_count(document_id)
    }

    fn read(&self) -> RwLockReadGuard<'_, Memory> {
        // A poisoned lock still holds an index: searching it beats failing every turn.
        self.memory
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Memory> {
        self.memory
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn warn_refused(document_id: i64, refused: super::index::Refused, expected: Option<usize>) {
    if let Some((count, dimension)) = refused.mismatched {
        tracing::warn!(
            document_id,
            chunks = count,
            dimension,
            expected = ?expected,
            "document refused by the vector index: its embeddings have another dimension than the embedding model's; run `bor reembed`"
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

/// The words the full-text index finds the chunk of `row` by.
fn searchable(row: &IndexedChunk) -> String {
    searchable_text(&row.title, &row.heading, &row.text).into_owned()
}

/// Streams every chunk into a new copy of the knowledge base.
async fn read_all(pool: &DbPool, dimension: Option<usize>) -> Result<Memory, DbError> {
    let mut conn = pool.get().await?;
    let counts = chunks::dimension_counts(&mut conn).await?;
    let Some(dimension) = dimension.or_else(|| counts.first().map(|(d, _)| *d)) else {
        return empty_memory(None);
    };
    let rows = counts
        .iter()
        .find(|(d, _)| *d == dimension)
        .map_or(0, |(_, n)| usize::try_from(*n).unwrap_or(0));
    let mut memory = empty_memory(Some(dimension))?;
    memory.vectors = VectorIndex::with_capacity(dimension, rows);
    let mut stream = chunks::stream_indexed(&mut conn).await?;
    while let Some(mut row) = stream.try_next().await? {
        if memory.vectors.push(vector_of(&mut row)) {
            memory
                .text
                .add(
                    row.id,
                    row.document_id,
                    row.collection_id,
                    &searchable(&row),
                )
                .map_err(full_text_error)?;
            memory
                .chunks
                .insert(row.id, &row.title, StoredChunk::of_row(&row));
        }
    }
    memory.text.commit().map_err(full_text_error)?;
    Ok(memory)
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
            heading: "",
            page: None,
            embedder: None,
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
        let found = index
            .retrieve("old".into(), vec![1.0, 0.1, 0.0], 1, None)
            .await;
        assert_eq!(found.hits[0].document_id, old_a);
        assert_eq!(
            (&*found.hits[0].title, &*found.hits[0].text),
            ("old a", "old a")
        );
        assert!(found.text_match, "\"old\" is in both old chunks");

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
        let found = index
            .retrieve("old".into(), vec![0.0, 0.0, 0.5, 1.0], 5, None)
            .await;
        assert_eq!(found.hits.len(), 1);
        assert_eq!(found.hits[0].document_id, new);
        assert!(
            !found.text_match,
            "the old chunks have another dimension: their words are not searched"
        );

        // Rows deleted behind its back are gone after a refresh of their document.
        let mut conn = pool.get().await.unwrap();
        crate::db::documents::delete_document(&mut conn, new)
            .await
            .unwrap();
        index.refresh_documents(&[new]).await.unwrap();
        assert_eq!(index.stats().chunks, 0);
    }
}
