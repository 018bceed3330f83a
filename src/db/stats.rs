//! What the knowledge base holds, for readiness reports.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::DbError;
use super::chunks::{self as stored_chunks, DimensionCount};
use super::schema::{chunks, documents};

/// Counts of the knowledge base tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnowledgeCounts {
    pub documents: i64,
    pub chunks: i64,
    /// The chunks by embedding dimension, most first ([`stored_chunks::dimensions`]).
    pub dimensions: Vec<DimensionCount>,
}

impl KnowledgeCounts {
    /// The dimension most chunk embeddings have; `None` without chunks.
    pub fn common_dimension(&self) -> Option<i32> {
        <[DimensionCount]>::first(&self.dimensions).map(|counted| counted.dimension)
    }

    /// Chunks of `dimension` (else of the common one) that another embedder made.
    pub fn other_embedder(&self, dimension: Option<usize>) -> i64 {
        let found = match dimension {
            Some(dimension) => self
                .dimensions
                .iter()
                .find(|counted| counted.has(dimension)),
            None => <[DimensionCount]>::first(&self.dimensions),
        };
        found.map_or(0, |counted| counted.other_embedder)
    }
}

/// The counts, `embedder` being what makes the vectors now
/// ([`stored_chunks::embedder`]).
pub async fn knowledge_counts(
    conn: &mut AsyncPgConnection,
    embedder: &str,
) -> Result<KnowledgeCounts, DbError> {
    let documents = documents::table.count().get_result(conn).await?;
    let chunks = chunks::table.count().get_result(conn).await?;
    let dimensions = stored_chunks::dimensions(conn, embedder).await?;
    Ok(KnowledgeCounts {
        documents,
        chunks,
        dimensions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::documents::NewDocument;
    use crate::testing::TestDatabase;

    async fn add_chunk(
        conn: &mut AsyncPgConnection,
        document_id: i64,
        ord: i32,
        dimension: usize,
        embedder: Option<&str>,
    ) {
        diesel::insert_into(chunks::table)
            .values((
                chunks::document_id.eq(document_id),
                chunks::ord.eq(ord),
                chunks::text.eq("text"),
                chunks::embedding.eq(vec![0.5_f32; dimension]),
                chunks::embedder.eq(embedder),
            ))
            .execute(conn)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn counts_documents_chunks_the_common_dimension_and_chunks_another_embedder_made() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.connect().await;
        let empty = knowledge_counts(&mut conn, "model-a").await.unwrap();
        assert_eq!((empty.documents, empty.chunks), (0, 0));
        assert_eq!(empty.common_dimension(), None);
        assert_eq!(empty.other_embedder(None), 0);
        let document_id: i64 = diesel::insert_into(documents::table)
            .values(NewDocument::new("Title", None, "Body"))
            .returning(documents::id)
            .get_result(&mut conn)
            .await
            .unwrap();
        add_chunk(&mut conn, document_id, 0, 64, Some("model-a")).await;
        add_chunk(&mut conn, document_id, 1, 8, Some("model-b")).await;
        add_chunk(&mut conn, document_id, 2, 64, Some("model-b")).await;
        // Stored before embedders were recorded: told by its dimension alone.
        add_chunk(&mut conn, document_id, 3, 64, None).await;
        let counts = knowledge_counts(&mut conn, "model-a").await.unwrap();
        assert_eq!((counts.documents, counts.chunks), (1, 4));
        assert_eq!(counts.common_dimension(), Some(64));
        assert_eq!(counts.other_embedder(None), 1, "of the common dimension");
        assert_eq!(counts.other_embedder(Some(64)), 1);
        assert_eq!(
            counts.other_embedder(Some(8)),
            1,
            "of the model's dimension when it is another"
        );
        assert_eq!(counts.other_embedder(Some(32)), 0, "none of that dimension");
        let counts = knowledge_counts(&mut conn, "model-c").await.unwrap();
        assert_eq!(counts.other_embedder(None), 2);
        // A tie goes to the larger dimension, as the in-memory index picks it.
        add_chunk(&mut conn, document_id, 4, 8, Some("model-b")).await;
        add_chunk(&mut conn, document_id, 5, 8, Some("model-b")).await;
        let tied = knowledge_counts(&mut conn, "model-b").await.unwrap();
        assert_eq!(tied.common_dimension(), Some(64));
        assert_eq!(tied.other_embedder(None), 1);
    }
}
