//! What the knowledge base holds, for readiness reports.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::DbError;
use super::chunks::{self as stored_chunks, CommonDimension};
use super::schema::{chunks, documents};

/// Counts of the knowledge base tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnowledgeCounts {
    pub documents: i64,
    pub chunks: i64,
    /// The dimension most chunk embeddings have; `None` without chunks.
    pub embedding_dimension: Option<i32>,
    /// Chunks of that dimension whose recorded embedder is another than the one now.
    pub embedded_otherwise: i64,
}

/// The counts, `embedder` being what makes the vectors now
/// ([`stored_chunks::embedder`]).
pub async fn knowledge_counts(
    conn: &mut AsyncPgConnection,
    embedder: &str,
) -> Result<KnowledgeCounts, DbError> {
    let documents = documents::table.count().get_result(conn).await?;
    let chunks = chunks::table.count().get_result(conn).await?;
    let common = stored_chunks::common_dimension(conn, embedder).await?;
    Ok(KnowledgeCounts {
        documents,
        chunks,
        embedding_dimension: common.and_then(|common| common.dimension),
        embedded_otherwise: common.map_or(0, |common: CommonDimension| common.embedded_otherwise),
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
    async fn counts_documents_chunks_the_common_dimension_and_chunks_embedded_otherwise() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.connect().await;
        assert_eq!(
            knowledge_counts(&mut conn, "model-a").await.unwrap(),
            KnowledgeCounts {
                documents: 0,
                chunks: 0,
                embedding_dimension: None,
                embedded_otherwise: 0,
            }
        );
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
        assert_eq!(
            knowledge_counts(&mut conn, "model-a").await.unwrap(),
            KnowledgeCounts {
                documents: 1,
                chunks: 4,
                embedding_dimension: Some(64),
                embedded_otherwise: 1,
            }
        );
        // Only chunks of the common dimension count: the one of 8 dimensions is told by
        // its dimension.
        let counts = knowledge_counts(&mut conn, "model-c").await.unwrap();
        assert_eq!(counts.embedded_otherwise, 2);
    }
}
